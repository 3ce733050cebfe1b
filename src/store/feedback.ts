import { z } from 'zod';
import type { Params } from './queries/named.js';
import type { QueryName } from './queries.js';
import type { Row } from './rows.js';
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

const totalRow = z.object({ value: z.enum(FEEDBACK_VALUES), n: z.coerce.number().int() });

/**
 * The feedback methods, written once for both engines: each engine passes its own way of running
 * one named statement (synchronous on SQLite, awaited on PostgreSQL).
 */
export function feedbackMethods(run: {
  many: <T>(name: QueryName, params: Params, parse: (row: Row) => T) => T[] | Promise<T[]>;
  write: (name: QueryName, params: Params) => number | Promise<number>;
}): Methods {
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
