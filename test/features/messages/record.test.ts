import { describe, expect, expectTypeOf, it } from 'vitest';
import type { DirectRequest } from '../../../src/features/messages/record.js';
import type { MentionRequest } from '../../../src/jobs/requests.js';
import { jobRecording, mentionRequest, recordingOf, recordingWorld } from '../../helpers/job-requests.js';
import { CHANNEL, createJobWorld, T0 } from '../../helpers/job-world.js';

const t = recordingWorld();

describe('recordDirect', () => {
  const DM = 'D0REQUESTER';
  const direct = (fields: Partial<MentionRequest> = {}) =>
    t.record.direct(
      mentionRequest({
        channelId: DM,
        text: 'Document the webhooks',
        messageTs: '1700000300.000100',
        ...fields,
      }),
    );

  it('at the top of a direct message: the message becomes the job’s thread, with no context', async () => {
    const outcome = await direct();
    const job = await t.w.job((outcome as { job: number }).job);
    expect(job).toMatchObject({
      origin: 'direct',
      phase: 'accepted',
      channelId: DM,
      threadTs: '1700000300.000100',
      contextTs: null,
      triggerKey: `direct:${DM}:1700000300.000100`,
      projectId: t.w.config.agent.projectId,
    });
    expect((await t.w.runs(job.id))[0]?.messageTs).toBe('1700000300.000100');
    // The same message again is a repeat; an empty one starts nothing.
    expect(await direct()).toBeUndefined();
    expect(await direct({ messageTs: '1700000300.000200', text: '  ' })).toBeUndefined();
    expect(t.w.jobCount()).toBe(1);
  });

  it('in an assistant thread opened beside a channel: the job runs on that channel’s project', async () => {
    await t.w.store.close();
    t.w = createJobWorld({ CHANNEL_PROJECTS: `${CHANNEL}:proj_other` });
    t.record = recordingOf(
      jobRecording(t.w, async () => undefined),
      t.w,
    );
    await t.w.store.recordAssistantThread(
      { channelId: DM, threadTs: '1700000000.000050', contextChannelId: CHANNEL },
      T0,
    );
    const outcome = await direct({ threadTs: '1700000000.000050' });
    const job = await t.w.job((outcome as { job: number }).job);
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
    await t.w.store.apply({ jobId, job: { phase: 'active' } }, T0);
    const outcome = await direct({ messageTs: '1700000300.000300', threadTs: '1700000300.000100' });
    expect(outcome).toEqual({ reply: expect.any(Number) });
    expect((await t.w.runs(jobId)).map((r) => r.kind)).toEqual(['create', 'follow_up']);
  });
});

describe('DirectRequest', () => {
  it('a direct message carries the same facts, its channel the conversation', async () => {
    expectTypeOf<DirectRequest>().toEqualTypeOf<MentionRequest>();
    const outcome = await t.record.direct(mentionRequest({ channelId: 'D0DIRECT' }));
    const job = await t.w.job((outcome as { job: number }).job);
    expect(job).toMatchObject({ channelId: 'D0DIRECT', origin: 'direct', privacy: 'direct' });
  });
});
