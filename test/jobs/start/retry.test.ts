import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { triggerKeys } from '../../../src/domain/keys.js';
import { createRetryAcceptance, type RetryAcceptance } from '../../../src/jobs/start/retry.js';
import type { JobPatch, NewJob } from '../../../src/store/types.js';
import { TEAM } from '../../helpers/fake-network.js';
import { CHANNEL, createJobWorld, INSTANCE, type JobWorld, REQUESTER } from '../../helpers/job-world.js';

let w: JobWorld;
let retry: RetryAcceptance;
beforeEach(() => {
  w = createJobWorld({ MAX_INSTRUCTIONS_PER_USER_PER_HOUR: '2' });
  retry = createRetryAcceptance(w.ctx);
});
afterEach(() => w.store.close());

const THREAD = '1700000000.000001';
const PRESSER = 'U0PRESSER';

/** A job whose card was posted in its thread, then moved as `patch` says (a failed run by default). */
async function endedJob(
  patch: JobPatch = { phase: 'idle', lastOutcome: 'failed' },
  fields: Partial<NewJob> = {},
  thread = THREAD,
) {
  const { job } = await w.insertJob(fields, 'Document the webhooks\n\nContext: the thread');
  await w.store.apply({ jobId: job.id, job: { threadTs: thread, cardTs: thread, ...patch } }, w.clock.at);
  return w.job(job.id);
}

const press = (jobId: number, fields: Partial<Parameters<RetryAcceptance['acceptRetry']>[0]> = {}) =>
  retry.acceptRetry({
    jobId,
    userId: PRESSER,
    teamId: TEAM,
    channelId: CHANNEL,
    responseUrl: null,
    ...fields,
  });

describe('"Try again"', () => {
  it('records a new job in the thread from the old one, requested by the presser, and moves the old one aside', async () => {
    const old = await endedJob(
      { phase: 'idle', lastOutcome: 'failed' },
      { origin: 'mention', projectId: 'proj_b', contextTs: '1700000000.000009' },
    );
    const outcome = await press(old.id, { responseUrl: 'https://hooks.slack.com/actions/1' });
    if (typeof outcome !== 'object' || !('job' in outcome))
      throw new Error(`not recorded: ${String(outcome)}`);
    const fresh = await w.job(outcome.job);
    expect(fresh).toMatchObject({
      phase: 'accepted',
      requesterId: PRESSER,
      teamId: TEAM,
      channelId: CHANNEL,
      threadTs: THREAD,
      cardTs: null,
      origin: 'mention',
      projectId: 'proj_b',
      contextTs: '1700000000.000009',
      instruction: old.instruction,
      triggerKey: triggerKeys.retry(old.id),
      responseUrl: 'https://hooks.slack.com/actions/1',
      owner: INSTANCE,
    });
    expect((await w.runs(fresh.id)).map((r) => [r.prompt, r.authorId])).toEqual([
      ['Document the webhooks\n\nContext: the thread', PRESSER],
    ]);
    expect(await w.job(old.id)).toMatchObject({ phase: 'retried', threadTs: null });
    expect(w.outbox()).toEqual([
      { jobId: old.id, key: null, payload: { type: 'update_root', channel: CHANNEL, ts: THREAD } },
    ]);
    expect(w.deps.loops.outbox.kick).toHaveBeenCalled();
  });

  it('is offered after a failed create call and an unknown start too, and only once', async () => {
    for (const [i, phase] of (['not_started', 'start_unknown'] as const).entries()) {
      const old = await endedJob({ phase }, {}, `1700000000.00010${i}`);
      expect(await press(old.id)).toMatchObject({ job: expect.any(Number) });
      expect(await press(old.id)).toBe('repeat');
    }
  });

  it('refuses a job that is not one whose start or latest run failed, or whose card was never posted', async () => {
    const done = await endedJob({ phase: 'idle', lastOutcome: 'completed_pr' }, {}, '1700000000.000201');
    expect(await press(done.id)).toBe('not_retryable');
    const erased = await endedJob(
      { phase: 'idle', lastOutcome: 'failed', erasedAt: 1 },
      {},
      '1700000000.000202',
    );
    expect(await press(erased.id)).toBe('not_retryable');
    const refused = await endedJob({ phase: 'not_started', cardTs: null }, { origin: 'mention' });
    expect(await press(refused.id)).toBe('not_retryable');
    expect(await press(999)).toBe('not_retryable');
    // A click naming a job of another channel.
    await w.store.apply({ jobId: refused.id, job: { cardTs: THREAD } }, w.clock.at);
    expect(await press(refused.id, { channelId: 'C0ELSEWHERE' })).toBe('not_retryable');
    expect(w.outbox()).toEqual([]);
  });

  it('tells a presser over their hourly limit before anything changes', async () => {
    const old = await endedJob();
    for (const key of ['a', 'b']) {
      const { run } = await w.insertJob({ requesterId: PRESSER, triggerKey: `command:${key}` });
      await w.access.reserve(run.id);
    }
    expect(await press(old.id)).toMatchObject({ refused: { allowed: false, reason: 'rate', limit: 2 } });
    expect(await w.job(old.id)).toMatchObject({ phase: 'idle', threadTs: THREAD });
    expect(await press(old.id, { userId: REQUESTER })).toMatchObject({ job: expect.any(Number) });
  });
});
