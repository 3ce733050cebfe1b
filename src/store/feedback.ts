import { z } from 'zod';
import type { Statements } from './statements.js';
import type { Store } from './types.js';

/**
 * Feedback on an outcome post: one vote per person and outcome, an outcome being one run of a
 * job. These are the vote as stored, counted and reported; the buttons and their value are the
 * feedback feature's (`features/feedback/`).
 */
export type FeedbackValue = 'positive' | 'negative';

export const FEEDBACK_VALUES: readonly FeedbackValue[] = ['positive', 'negative'];

/** The outcome a vote is about, and the vote. */
export interface FeedbackVote {
  jobId: number;
  runSeq: number;
  value: FeedbackValue;
}

/** Votes counted so far, by value. */
export type FeedbackTotals = Record<FeedbackValue, number>;

type Methods = Pick<Store, 'recordFeedback' | 'feedbackTotals'>;

/** Feedback votes on outcome posts; one text for SQLite and PostgreSQL (see `queries.ts`). */
export const FEEDBACK_QUERIES = {
  /**
   * One vote per person and outcome: a second press replaces the first. Changes no row when the
   * same vote is pressed again, so the caller can tell a new or changed vote from a repeat.
   */
  recordFeedback: `
    INSERT INTO feedback_votes (job_id, run_seq, user_id, value, updated_at)
    VALUES (:jobId, :runSeq, :userId, :value, :now)
    ON CONFLICT (job_id, run_seq, user_id)
      DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at
      WHERE feedback_votes.value <> excluded.value`,
  feedbackTotals: 'SELECT value, COUNT(*) AS n FROM feedback_votes GROUP BY value',
} as const;

const totalRow = z.object({ value: z.enum(FEEDBACK_VALUES), n: z.coerce.number().int() });

/** The feedback methods, written once for both engines over their {@link Statements}. */
export function feedbackMethods(run: Pick<Statements, 'many' | 'write'>): Methods {
  return {
    async recordFeedback({ jobId, runSeq, userId, value }, now) {
      return (await run.write('recordFeedback', { jobId, runSeq, userId, value, now })) > 0;
    },
    async feedbackTotals() {
      const totals: FeedbackTotals = { positive: 0, negative: 0 };
      // A value another release wrote and this one does not know is left out of the totals.
      for (const row of await run.many('feedbackTotals', {}, (r) => totalRow.safeParse(r)))
        if (row.success) totals[row.data.value] = row.data.n;
      return totals;
    },
  };
}
