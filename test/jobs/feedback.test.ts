import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createOutcomeFeedback, type OutcomeFeedback } from '../../src/jobs/feedback.js';
import { createJobContext } from '../../src/jobs/job-context.js';
import { CHANNEL, createJobWorld, type JobWorld } from '../helpers/job-world.js';

let w: JobWorld;
let feedback: OutcomeFeedback;
const metrics = { instruction: vi.fn(), runFinished: vi.fn(), feedback: vi.fn() };
beforeEach(() => {
  w = createJobWorld();
  metrics.feedback.mockClear();
  feedback = createOutcomeFeedback(createJobContext({ ...w.deps, metrics }));
});
afterEach(async () => {
  await w.store.close();
});

/** An active job whose first run has ended and had its outcome posted. */
async function finishedJob() {
  const { job, run } = await w.activeJob();
  await w.store.apply({ jobId: job.id, run: { id: run.id, patch: { outcome: 'completed_pr' } } }, w.clock.at);
  return { job, run };
}

const totals = () => w.store.feedbackTotals();

describe('acceptFeedback', () => {
  it('records one vote per person and outcome: the same press again changes nothing', async () => {
    const { job, run } = await finishedJob();
    const press = {
      jobId: job.id,
      runSeq: run.seq,
      value: 'positive' as const,
      userId: 'U0READER',
      channelId: CHANNEL,
    };
    expect(await feedback.acceptFeedback(press)).toBe('recorded');
    expect(await feedback.acceptFeedback(press)).toBe('unchanged');
    expect(await totals()).toEqual({ positive: 1, negative: 0 });
    expect(metrics.feedback).toHaveBeenCalledTimes(1);
    expect(metrics.feedback).toHaveBeenCalledWith('positive');
  });

  it('lets a person change their vote, which replaces the earlier one', async () => {
    const { job, run } = await finishedJob();
    const press = { jobId: job.id, runSeq: run.seq, userId: 'U0READER', channelId: CHANNEL };
    await feedback.acceptFeedback({ ...press, value: 'positive' });
    expect(await feedback.acceptFeedback({ ...press, value: 'negative' })).toBe('recorded');
    expect(await totals()).toEqual({ positive: 0, negative: 1 });
    expect(metrics.feedback.mock.calls).toEqual([['positive'], ['negative']]);
  });

  it('counts each person’s vote separately', async () => {
    const { job, run } = await finishedJob();
    for (const userId of ['U0ONE', 'U0TWO'])
      await feedback.acceptFeedback({
        jobId: job.id,
        runSeq: run.seq,
        value: 'negative',
        userId,
        channelId: CHANNEL,
      });
    expect(await totals()).toEqual({ positive: 0, negative: 2 });
  });

  it('ignores a press naming no outcome: an unknown job, another channel, an unknown run, a run not finished', async () => {
    const { job, run } = await finishedJob();
    const { job: running, run: unfinished } = await w.activeJob({ channelId: 'C0OTHER' });
    const vote = { value: 'positive' as const, userId: 'U0READER', channelId: CHANNEL };
    expect(await feedback.acceptFeedback({ ...vote, jobId: 9_999, runSeq: 1 })).toBe('unknown');
    expect(
      await feedback.acceptFeedback({ ...vote, jobId: job.id, runSeq: run.seq, channelId: 'C0ELSEWHERE' }),
    ).toBe('unknown');
    expect(await feedback.acceptFeedback({ ...vote, jobId: job.id, runSeq: run.seq + 1 })).toBe('unknown');
    expect(
      await feedback.acceptFeedback({
        ...vote,
        jobId: running.id,
        runSeq: unfinished.seq,
        channelId: 'C0OTHER',
      }),
    ).toBe('unknown');
    expect(await totals()).toEqual({ positive: 0, negative: 0 });
    expect(metrics.feedback).not.toHaveBeenCalled();
  });
});
