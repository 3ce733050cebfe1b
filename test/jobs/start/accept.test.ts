/**
 * The job kernel's recording of a new job (`recordJob`) and of a message that starts one in its
 * thread or follows up the job there (`recordMessage`), through the places that record with them;
 * and the assistant pane a direct message was written in (`usePane`).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { StartRequest } from '../../../src/features/command/record.js';
import type { ShortcutRequest } from '../../../src/features/shortcut/record.js';
import type { MentionRequest } from '../../../src/jobs/requests.js';
import { channelPrivacy } from '../../../src/jobs/start/accept.js';
import { WHOLE_CONVERSATION } from '../../../src/store/areas.js';
import {
  jobRecording,
  mentionRequest,
  recordingOf,
  sampleCommand,
  sampleShortcut,
} from '../../helpers/job-requests.js';
import { CHANNEL, createJobWorld, INSTANCE, type JobWorld, REQUESTER, T0 } from '../../helpers/job-world.js';

let w: JobWorld;
let record: ReturnType<typeof recordingOf>;
beforeEach(() => {
  w = createJobWorld();
  record = recordingOf(jobRecording(w), w);
});
afterEach(() => w.store.close());

const command = (fields: Partial<StartRequest> = {}) => record.command(sampleCommand(fields));
const mention = (fields: Partial<MentionRequest> = {}) =>
  record.mention(mentionRequest({ text: 'Document the webhooks', ...fields }));
const shortcut = (fields: Partial<ShortcutRequest> = {}) => record.shortcut(sampleShortcut(fields));

describe('recordMention', () => {
  it('in a channel: the mention’s message becomes the job’s thread, with no context', async () => {
    const outcome = await mention();
    expect(outcome).toEqual({ job: expect.any(Number) });
    const job = await w.job((outcome as { job: number }).job);
    expect(job).toMatchObject({
      origin: 'mention',
      phase: 'accepted',
      threadTs: '1700000100.000100',
      contextTs: null,
      triggerKey: `mention:${CHANNEL}:1700000100.000100`,
    });
    // The mention is the first run's message, so the same message as a reply is a repeat.
    expect((await w.runs(job.id))[0]?.messageTs).toBe('1700000100.000100');
  });

  it('in a thread: the thread is the job’s, and the messages before the mention its context', async () => {
    const outcome = await mention({ threadTs: '1700000000.000050' });
    const job = await w.job((outcome as { job: number }).job);
    expect(job).toMatchObject({ threadTs: '1700000000.000050', contextTs: '1700000100.000100' });
  });

  it('in a thread with a running job: a follow-up to it, not a second job', async () => {
    const { job } = await w.activeJob();
    const outcome = await mention({ threadTs: job.threadTs ?? '' });
    expect(outcome).toEqual({ reply: expect.any(Number) });
    const runs = await w.runs(job.id);
    expect(runs.map((r) => r.kind)).toEqual(['create', 'follow_up']);
    expect(runs[1]).toMatchObject({ state: 'pending', prompt: 'Document the webhooks', owner: INSTANCE });
    expect(w.jobCount()).toBe(1);
  });

  it('in a thread whose job never started: a new job takes the thread', async () => {
    const { job } = await w.insertJob({ threadTs: '1700000000.000050', origin: 'mention' });
    await w.store.apply({ jobId: job.id, job: { phase: 'not_started' } }, T0);
    const outcome = await mention({ threadTs: '1700000000.000050' });
    expect(outcome).toEqual({ job: expect.any(Number) });
    expect((outcome as { job: number }).job).not.toBe(job.id);
  });

  it('a bare mention where no job runs records nothing (the listener explains it)', async () => {
    expect(await mention({ text: '   ' })).toBeUndefined();
    expect(w.jobCount()).toBe(0);
  });

  it('the same mention delivered again is recorded once', async () => {
    await mention();
    expect(await mention()).toBeUndefined();
    expect(w.jobCount()).toBe(1);
  });
});

describe('what each start records exactly', () => {
  const files = [{ name: 'diagram.png', type: 'image/png' }];

  it('a repeated command or message is logged as ignored, once each', async () => {
    const id = await command();
    const repeats = () => w.logs.filter((l) => l.includes('repeated'));
    expect(repeats()).toEqual([]);
    await command();
    const outcome = await mention();
    expect(repeats()).toHaveLength(1);
    await mention();
    expect(repeats()).toEqual([
      expect.stringMatching(new RegExp(`repeated command ignored.*"jobId":${id}`)),
      expect.stringMatching(
        new RegExp(
          `repeated message ignored.*"jobId":${(outcome as { job: number }).job},"origin":"mention"`,
        ),
      ),
    ]);
  });

  it('a mention trims its instruction and its prompt', async () => {
    const outcome = await mention({ text: '  Document <https://x.io|the webhooks>  ' });
    const job = await w.job((outcome as { job: number }).job);
    expect(job.instruction).toBe('Document <https://x.io|the webhooks>');
    expect((await w.runs(job.id))[0]?.prompt).toBe('Document the webhooks (https://x.io)');
  });

  it('a mention with files queues the private note that files do not reach the agent, once', async () => {
    const outcome = await mention({ files });
    expect(outcome).toEqual({ job: expect.any(Number) });
    expect(w.outboxKeys()).toEqual([`files:${CHANNEL}:1700000100.000100`]);
    expect(w.outbox()[0]?.payload).toMatchObject({ type: 'ephemeral', user: REQUESTER });
    expect(await mention({ files })).toBeUndefined();
    expect(w.outbox()).toHaveLength(1);
  });

  it('a mention without files, or one that is a follow-up, queues no such note from here', async () => {
    await mention();
    expect(w.outbox()).toEqual([]);
    await w.store.close();
    w = createJobWorld();
    const replies: unknown[] = [];
    record = recordingOf(
      jobRecording(w, async (request) => {
        replies.push(request);
        return 42;
      }),
      w,
    );
    const { job } = await w.activeJob();
    expect(await mention({ threadTs: job.threadTs ?? '', files })).toEqual({ reply: 42 });
    expect(replies).toHaveLength(1);
    expect(w.outbox()).toEqual([]);
  });

  it('a repeated reply in a job’s thread is no outcome at all', async () => {
    const { job } = await w.activeJob();
    const threadTs = job.threadTs ?? '';
    expect(await mention({ threadTs, messageTs: '1700000100.000200' })).toEqual({
      reply: expect.any(Number),
    });
    expect(await mention({ threadTs, messageTs: '1700000100.000200' })).toBeUndefined();
  });

  it('a message whose thread a job took meanwhile is a follow-up to that job', async () => {
    const taken = await shortcut();
    const jobId = (taken as { job: number }).job;
    await w.store.apply({ jobId, job: { phase: 'active' } }, T0);
    // The message at the root of that thread arrives as a mention only now.
    const outcome = await mention({ messageTs: '1700000200.000200' });
    expect(outcome).toEqual({ reply: expect.any(Number) });
    expect((await w.runs(jobId)).map((r) => r.kind)).toEqual(['create', 'follow_up']);
    expect(w.jobCount()).toBe(1);
  });
});

describe('usePane', () => {
  const PANE = 'D0PANE';
  const THREAD = '1700000000.000500';
  /** Slack delivers a late event again within minutes: a use counts from ten minutes earlier. */
  const USED_AT = T0 - 10 * 60_000;

  it('is the pane thread’s, else the conversation’s, and marks the one used as used a lag earlier', async () => {
    await w.store.recordAssistantThread(
      { channelId: PANE, threadTs: THREAD, contextChannelId: CHANNEL },
      T0 - 1,
    );
    await w.store.recordAssistantThread(
      { channelId: PANE, threadTs: WHOLE_CONVERSATION, contextChannelId: 'C0BESIDE' },
      T0 - 1,
    );
    const touch = vi.spyOn(w.store, 'touchAssistantThread');
    const recording = jobRecording(w);
    expect(await recording.usePane(PANE, THREAD)).toEqual({ contextChannelId: CHANNEL });
    expect(await recording.usePane(PANE, '1700000000.000900')).toEqual({ contextChannelId: 'C0BESIDE' });
    expect(touch.mock.calls).toEqual([
      [{ channelId: PANE, threadTs: THREAD }, USED_AT],
      [{ channelId: PANE, threadTs: WHOLE_CONVERSATION }, USED_AT],
    ]);
  });

  it('is none for a plain direct message, and marks nothing', async () => {
    const touch = vi.spyOn(w.store, 'touchAssistantThread');
    expect(await jobRecording(w).usePane('D0PLAIN', undefined)).toBeUndefined();
    expect(await jobRecording(w).usePane('D0PLAIN', THREAD)).toBeUndefined();
    expect(touch).not.toHaveBeenCalled();
  });
});

describe('channelPrivacy', () => {
  it('is what the request said; else private for a direct message, and unknown (asked later) for a channel', () => {
    expect(channelPrivacy(CHANNEL, 'public')).toBe('public');
    expect(channelPrivacy('D0DIRECT')).toBe('private');
    expect(channelPrivacy(CHANNEL)).toBe('unknown');
  });
});
