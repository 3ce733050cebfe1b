/** Feedback votes on outcome posts; one text for SQLite and PostgreSQL. */
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
