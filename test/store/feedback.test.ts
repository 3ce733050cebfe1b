import { afterEach, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/types.js';
import { bothEngines, postgresAvailable } from '../helpers/postgres.js';
import { createRun, newJob, T0 } from './store-contract.js';

const server = await postgresAvailable();
const engines = bothEngines(server);

for (const [engine, open] of engines) {
  describe(`feedback votes (${engine})`, () => {
    let store: Store | undefined;
    afterEach(async () => {
      await store?.close();
      store = undefined;
    });

    it('keeps one vote per person and outcome: a repeat changes nothing, a second press replaces it', async () => {
      store = await open();
      const { job } = await store.insertJob(newJob('feedback'), createRun(), T0);
      const vote = { jobId: job.id, runSeq: 1, userId: 'U0ALICE' };
      expect(await store.recordFeedback({ ...vote, value: 'positive' }, T0)).toBe(true);
      expect(await store.recordFeedback({ ...vote, value: 'positive' }, T0 + 1)).toBe(false);
      expect(await store.feedbackTotals()).toEqual({ positive: 1, negative: 0, reasons: 0 });
      expect(await store.recordFeedback({ ...vote, value: 'negative' }, T0 + 2)).toBe(true);
      expect(await store.feedbackTotals()).toEqual({ positive: 0, negative: 1, reasons: 0 });
      // Another person, and another outcome of the same job, are votes of their own.
      expect(await store.recordFeedback({ ...vote, userId: 'U0BOB', value: 'positive' }, T0 + 3)).toBe(true);
      expect(await store.recordFeedback({ ...vote, runSeq: 2, value: 'positive' }, T0 + 4)).toBe(true);
      expect(await store.feedbackTotals()).toEqual({ positive: 2, negative: 1, reasons: 0 });
    });

    it('keeps what a thumbs-down said to fix with the vote, newest first, and drops it when the vote changes', async () => {
      store = await open();
      const { job } = await store.insertJob(newJob('reasons'), createRun(), T0);
      const vote = { jobId: job.id, runSeq: 1, userId: 'U0ALICE' };
      expect(await store.recordFeedbackReason({ ...vote, reason: 'Wrong endpoint' }, T0)).toBe(true);
      // The same words again change nothing; new words replace them.
      expect(await store.recordFeedbackReason({ ...vote, reason: 'Wrong endpoint' }, T0 + 1)).toBe(false);
      expect(await store.recordFeedbackReason({ ...vote, reason: 'Wrong endpoint; use v2' }, T0 + 2)).toBe(
        true,
      );
      expect(await store.recordFeedbackReason({ ...vote, userId: 'U0BOB', reason: 'Too long' }, T0 + 3)).toBe(
        true,
      );
      expect(await store.feedbackTotals()).toEqual({ positive: 0, negative: 2, reasons: 2 });
      const reasons = await store.feedbackReasons(10);
      expect(reasons.map((r) => [r.userId, r.reason, r.at])).toEqual([
        ['U0BOB', 'Too long', T0 + 3],
        ['U0ALICE', 'Wrong endpoint; use v2', T0 + 2],
      ]);
      expect(reasons[0]).toMatchObject({
        jobId: job.id,
        runSeq: 1,
        job: {
          privacy: job.privacy,
          channelId: job.channelId,
          threadTs: job.threadTs,
          requesterId: job.requesterId,
        },
      });
      expect(await store.feedbackReasons(1)).toHaveLength(1);
      // A thumbs-up instead: the reason goes with the vote it belonged to.
      expect(await store.recordFeedback({ ...vote, userId: 'U0BOB', value: 'positive' }, T0 + 4)).toBe(true);
      expect((await store.feedbackReasons(10)).map((r) => r.userId)).toEqual(['U0ALICE']);
      expect(await store.feedbackTotals()).toEqual({ positive: 1, negative: 1, reasons: 1 });
      // A thumbs-down pressed again keeps what was said with it.
      expect(await store.recordFeedback({ ...vote, value: 'negative' }, T0 + 5)).toBe(false);
      expect(await store.feedbackReasons(10)).toHaveLength(1);
    });
  });
}
