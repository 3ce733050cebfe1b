import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createFollowUps } from '../../../src/jobs/follow-ups.js';
import { createInstructionChecks, createVerificationWaits } from '../../../src/jobs/instruction-checks.js';
import { createReplies } from '../../../src/jobs/replies.js';
import type { MentionRequest, ShortcutRequest, StartRequest } from '../../../src/jobs/requests.js';
import { createJobAcceptance, type JobAcceptance } from '../../../src/jobs/start/accept.js';
import { TEAM } from '../../helpers/fake-network.js';
import { mentionRequest, shortcutRequest, startRequest } from '../../helpers/job-requests.js';
import { CHANNEL, createJobWorld, INSTANCE, type JobWorld, REQUESTER, T0 } from '../../helpers/job-world.js';

let w: JobWorld;
let accept: JobAcceptance;
beforeEach(() => {
  w = createJobWorld();
  const verification = createVerificationWaits(w.ctx);
  const replies = createReplies(w.ctx, {
    checks: createInstructionChecks(w.ctx, verification),
    followUps: createFollowUps(w.ctx),
  });
  accept = createJobAcceptance(w.ctx, replies.acceptReply);
});
afterEach(() => w.store.close());

const jobCount = () => (w.store.db.prepare('SELECT count(*) AS n FROM jobs').get() as { n: number }).n;
const command = (fields: Partial<StartRequest> = {}) =>
  accept.acceptCommand(
    startRequest({
      text: '  Document the <https://example.com/limits|rate limits> &amp; quotas  ',
      responseUrl: 'https://hooks.slack.com/commands/T0TEST/1/test',
      ...fields,
    }),
  );
const mention = (fields: Partial<MentionRequest> = {}) =>
  accept.acceptMention(mentionRequest({ text: 'Document the webhooks', ...fields }));
const shortcut = (fields: Partial<ShortcutRequest> = {}) =>
  accept.acceptShortcut(
    shortcutRequest({
      message: {
        channelId: CHANNEL,
        ts: '1700000200.000200',
        threadTs: undefined,
        text: 'How do I rotate keys?',
        author: 'Ada',
      },
      permalink: 'https://example-test.slack.com/archives/C0TEST/p1700000200000200',
      ...fields,
    }),
  );

describe('acceptCommand', () => {
  it('records an accepted job and its first run, owned by this instance, and queues nothing', async () => {
    const id = await command();
    const job = await w.job(id ?? -1);
    expect(job).toMatchObject({
      phase: 'accepted',
      origin: 'command',
      teamId: TEAM,
      channelId: CHANNEL,
      requesterId: REQUESTER,
      instruction: 'Document the <https://example.com/limits|rate limits> &amp; quotas',
      triggerKey: 'command:trigger-1',
      responseUrl: 'https://hooks.slack.com/commands/T0TEST/1/test',
      projectId: w.config.agent.projectId,
      owner: INSTANCE,
      threadTs: null,
      createdAt: T0,
    });
    const runs = await w.runs(job.id);
    expect(runs).toHaveLength(1);
    // The agent gets plain text: links and entities decoded.
    expect(runs[0]).toMatchObject({ kind: 'create', state: 'pending', authorId: REQUESTER, messageTs: null });
    expect(runs[0]?.prompt).toBe('Document the rate limits (https://example.com/limits) & quotas');
    expect(w.outbox()).toEqual([]);
  });

  it('records the same trigger once: a repeat returns undefined', async () => {
    expect(await command()).toBeTypeOf('number');
    expect(await command({ text: 'something else' })).toBeUndefined();
    expect(jobCount()).toBe(1);
  });

  it('runs the job on the channel’s project', async () => {
    await w.store.close();
    w = createJobWorld({ CHANNEL_PROJECTS: `${CHANNEL}:proj_other` });
    accept = createJobAcceptance(w.ctx, async () => undefined);
    const job = await w.job((await command()) ?? -1);
    expect(job.projectId).toBe('proj_other');
  });
});

describe('acceptMention', () => {
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
    expect(jobCount()).toBe(1);
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
    expect(jobCount()).toBe(0);
  });

  it('the same mention delivered again is recorded once', async () => {
    await mention();
    expect(await mention()).toBeUndefined();
    expect(jobCount()).toBe(1);
  });
});

describe('acceptShortcut', () => {
  it('in the message’s channel: the job lives in the message’s thread, the message as context', async () => {
    const accepted = await shortcut();
    expect(accepted).toEqual({ job: expect.any(Number) });
    const job = await w.job((accepted as { job: number }).job);
    expect(job).toMatchObject({
      origin: 'shortcut',
      threadTs: '1700000200.000200',
      triggerKey: 'shortcut:V0TEST1',
      instruction: 'Turn this into a guide',
    });
    const prompt = (await w.runs(job.id))[0]?.prompt ?? '';
    expect(prompt).toContain('Turn this into a guide');
    expect(prompt).toContain('How do I rotate keys?');
    expect(prompt).toContain('Ada');
    expect(prompt).toContain('https://example-test.slack.com/archives/C0TEST/p1700000200000200');
  });

  it('in another channel: the job gets a thread of its own', async () => {
    const accepted = await shortcut({ channelId: 'C0ELSEWHERE' });
    const job = await w.job((accepted as { job: number }).job);
    expect(job).toMatchObject({ channelId: 'C0ELSEWHERE', threadTs: null });
  });

  it('the same submission again is a repeat; another job in the thread takes it', async () => {
    await shortcut();
    expect(await shortcut()).toBe('repeat');
    expect(await shortcut({ viewId: 'V0TEST2' })).toBe('thread_taken');
    expect(jobCount()).toBe(1);
  });
});

describe('acceptDirect', () => {
  const DM = 'D0REQUESTER';
  const direct = (fields: Partial<MentionRequest> = {}) =>
    accept.acceptDirect(
      mentionRequest({
        channelId: DM,
        text: 'Document the webhooks',
        messageTs: '1700000300.000100',
        ...fields,
      }),
    );

  it('at the top of a direct message: the message becomes the job’s thread, with no context', async () => {
    const outcome = await direct();
    const job = await w.job((outcome as { job: number }).job);
    expect(job).toMatchObject({
      origin: 'direct',
      phase: 'accepted',
      channelId: DM,
      threadTs: '1700000300.000100',
      contextTs: null,
      triggerKey: `direct:${DM}:1700000300.000100`,
      projectId: w.config.agent.projectId,
    });
    expect((await w.runs(job.id))[0]?.messageTs).toBe('1700000300.000100');
    // The same message again is a repeat; an empty one starts nothing.
    expect(await direct()).toBeUndefined();
    expect(await direct({ messageTs: '1700000300.000200', text: '  ' })).toBeUndefined();
    expect(jobCount()).toBe(1);
  });

  it('in an assistant thread opened beside a channel: the job runs on that channel’s project', async () => {
    await w.store.close();
    w = createJobWorld({ CHANNEL_PROJECTS: `${CHANNEL}:proj_other` });
    accept = createJobAcceptance(w.ctx, async () => undefined);
    await w.store.recordAssistantThread(
      { channelId: DM, threadTs: '1700000000.000050', contextChannelId: CHANNEL },
      T0,
    );
    const outcome = await direct({ threadTs: '1700000000.000050' });
    const job = await w.job((outcome as { job: number }).job);
    expect(job).toMatchObject({
      threadTs: '1700000000.000050',
      projectId: 'proj_other',
      contextTs: null,
      privacy: 'pane',
      contextChannelId: CHANNEL,
    });
  });

  it('in a thread with a running job: a follow-up to it', async () => {
    const first = await direct();
    const jobId = (first as { job: number }).job;
    await w.store.apply({ jobId, job: { phase: 'active' } }, T0);
    const outcome = await direct({ messageTs: '1700000300.000300', threadTs: '1700000300.000100' });
    expect(outcome).toEqual({ reply: expect.any(Number) });
    expect((await w.runs(jobId)).map((r) => r.kind)).toEqual(['create', 'follow_up']);
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
    accept = createJobAcceptance(w.ctx, async (request) => {
      replies.push(request);
      return 42;
    });
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
    expect(jobCount()).toBe(1);
  });

  it('a shortcut trims its instruction, and leaves out a message with no text', async () => {
    const accepted = await shortcut({
      instruction: '  Turn this into a guide  ',
      message: {
        channelId: CHANNEL,
        ts: '1700000200.000200',
        threadTs: undefined,
        text: '   ',
        author: 'Ada',
      },
      permalink: undefined,
    });
    const job = await w.job((accepted as { job: number }).job);
    expect(job.instruction).toBe('Turn this into a guide');
    expect((await w.runs(job.id))[0]?.prompt).toBe('Turn this into a guide');
  });

  it('a shortcut gives the agent the message as plain text, trimmed, whole up to 3,000 characters', async () => {
    await w.store.close();
    w = createJobWorld({ THREAD_CONTEXT_MAX_CHARS: '100' });
    accept = createJobAcceptance(w.ctx, async () => undefined);
    const long = `${'word '.repeat(500)}end`;
    const accepted = await shortcut({
      message: {
        channelId: CHANNEL,
        ts: '1700000200.000200',
        threadTs: undefined,
        text: `  <https://x.io|the guide> ${long}  `,
        author: 'Ada',
      },
    });
    const prompt = (await w.runs((accepted as { job: number }).job))[0]?.prompt ?? '';
    expect(prompt.startsWith('Turn this into a guide')).toBe(true);
    expect(prompt).toContain(`Ada: the guide (https://x.io) ${long}\n`);
  });
});
