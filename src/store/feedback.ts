import { z } from 'zod';
import { JOB_PRIVACIES, type JobPrivacy } from '../domain/privacy.js';
import type { Statements } from './statements.js';

/**
 * Feedback on an outcome post: one vote per person and outcome, an outcome being one run of a
 * job, and with a thumbs-down what the person said to fix. These are the vote as stored, counted
 * and reported; the buttons, the modal and their values are the feedback feature's
 * (`features/feedback/`).
 */
export type FeedbackValue = 'positive' | 'negative';

export const FEEDBACK_VALUES: readonly FeedbackValue[] = ['positive', 'negative'];

/** The outcome a vote is about, and the vote. */
export interface FeedbackVote {
  jobId: number;
  runSeq: number;
  value: FeedbackValue;
}

/** Votes counted so far, by value, and how many thumbs-down said what to fix. */
export type FeedbackTotals = Record<FeedbackValue, number> & { reasons: number };

/**
 * What someone said to fix in an outcome, with what decides where it may be shown: the words
 * belong to the job's conversation as its instructions do (`domain/privacy.ts`).
 */
export interface FeedbackReason {
  jobId: number;
  runSeq: number;
  userId: string;
  reason: string;
  at: number;
  job: { privacy: JobPrivacy; channelId: string; threadTs: string | null; requesterId: string };
}

/** Votes on outcomes. */
export interface FeedbackStore {
  /**
   * Records a person's vote on an outcome (a run of a job); a second vote of theirs on it
   * replaces the first, and a changed vote drops what they had said to fix. True when the vote
   * is new or changed, false when it was already so.
   */
  recordFeedback(vote: FeedbackVote & { userId: string }, now: number): Promise<boolean>;
  /**
   * Records a thumbs-down with what the person said to fix, replacing their vote on that outcome
   * and anything they had said before. True when the vote or its reason changed.
   */
  recordFeedbackReason(
    vote: Omit<FeedbackVote, 'value'> & { userId: string; reason: string },
    now: number,
  ): Promise<boolean>;
  /** Current votes on all outcomes, by value, and how many said what to fix. */
  feedbackTotals(): Promise<FeedbackTotals>;
  /** The latest reasons given, newest first, at most `limit`. */
  feedbackReasons(limit: number): Promise<FeedbackReason[]>;
}

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
      DO UPDATE SET value = excluded.value, reason = NULL, updated_at = excluded.updated_at
      WHERE feedback_votes.value <> excluded.value`,
  /** A thumbs-down with its reason; the same reason again changes no row. */
  recordFeedbackReason: `
    INSERT INTO feedback_votes (job_id, run_seq, user_id, value, reason, updated_at)
    VALUES (:jobId, :runSeq, :userId, 'negative', :reason, :now)
    ON CONFLICT (job_id, run_seq, user_id)
      DO UPDATE SET value = excluded.value, reason = excluded.reason, updated_at = excluded.updated_at
      WHERE feedback_votes.value <> excluded.value OR feedback_votes.reason IS NULL
        OR feedback_votes.reason <> excluded.reason`,
  /**
   * The retention sweep's: what was said to fix goes with the job's other words. Emptied, not
   * dropped, so the vote still counts as one that said something.
   */
  eraseFeedbackReasons: `
    UPDATE feedback_votes SET reason = ''
    WHERE job_id = :jobId AND updated_at < :before AND reason <> ''`,
  feedbackTotals: 'SELECT value, COUNT(*) AS n, COUNT(reason) AS reasons FROM feedback_votes GROUP BY value',
  feedbackReasons: `
    SELECT v.job_id, v.run_seq, v.user_id, v.reason, v.updated_at,
      j.privacy, j.channel_id, j.thread_ts, j.requester_id
    FROM feedback_votes v JOIN jobs j ON j.id = v.job_id
    WHERE v.reason <> '' AND v.value = 'negative'
    ORDER BY v.updated_at DESC, v.job_id DESC, v.run_seq DESC, v.user_id
    LIMIT :limit`,
} as const;

const count = z.coerce.number().int();
const totalRow = z.object({ value: z.enum(FEEDBACK_VALUES), n: count, reasons: count });
// A privacy another release wrote and this one does not know is read as unknown: shown to no one
// but the job's own people (fail closed).
const privacy = z.enum(JOB_PRIVACIES).catch('unknown');
const reasonRow = z
  .object({
    job_id: count,
    run_seq: count,
    user_id: z.string(),
    reason: z.string(),
    updated_at: count,
    privacy,
    channel_id: z.string(),
    thread_ts: z.string().nullable(),
    requester_id: z.string(),
  })
  .transform(
    (r): FeedbackReason => ({
      jobId: r.job_id,
      runSeq: r.run_seq,
      userId: r.user_id,
      reason: r.reason,
      at: r.updated_at,
      job: {
        privacy: r.privacy,
        channelId: r.channel_id,
        threadTs: r.thread_ts,
        requesterId: r.requester_id,
      },
    }),
  );

/** The feedback methods, written once for both engines over their {@link Statements}. */
export function feedbackMethods(run: Pick<Statements, 'many' | 'write'>): FeedbackStore {
  return {
    async recordFeedback({ jobId, runSeq, userId, value }, now) {
      return (await run.write('recordFeedback', { jobId, runSeq, userId, value, now })) > 0;
    },
    async recordFeedbackReason({ jobId, runSeq, userId, reason }, now) {
      return (await run.write('recordFeedbackReason', { jobId, runSeq, userId, reason, now })) > 0;
    },
    async feedbackTotals() {
      const totals: FeedbackTotals = { positive: 0, negative: 0, reasons: 0 };
      // A value another release wrote and this one does not know is left out of the totals.
      for (const row of await run.many('feedbackTotals', {}, (r) => totalRow.safeParse(r))) {
        if (!row.success) continue;
        totals[row.data.value] = row.data.n;
        if (row.data.value === 'negative') totals.reasons = row.data.reasons;
      }
      return totals;
    },
    async feedbackReasons(limit) {
      const rows = await run.many('feedbackReasons', { limit }, (r) => reasonRow.safeParse(r));
      return rows.flatMap((row) => (row.success ? [row.data] : []));
    },
  };
}
