/**
 * Slack's agent sessions and feedback on outcomes. One migration, kept in its own file so its
 * number can change before it ships without touching the others.
 *
 * stopped_run: the run count at which someone pressed the session's stop button. The agent API
 * cannot cancel a run, so the job stays `active` until the run ends; while the run count is
 * still this one, the session is shown as no longer processing. A second stop of the same run
 * finds it set and does nothing twice.
 *
 * feedback_votes: one vote per person and outcome (a run of a job, by its sequence number); a
 * second press replaces the first.
 */
export const AGENT_SESSIONS_MIGRATION = {
  version: 12,
  name: 'agent sessions stopped, feedback on outcomes',
  sql: `
      ALTER TABLE jobs ADD COLUMN stopped_run INTEGER;
      CREATE TABLE feedback_votes (
        job_id INTEGER NOT NULL REFERENCES jobs (id),
        run_seq INTEGER NOT NULL,
        user_id TEXT NOT NULL,
        value TEXT NOT NULL,
        updated_at {{time}} NOT NULL,
        PRIMARY KEY (job_id, run_seq, user_id)
      );
      CREATE INDEX feedback_votes_value ON feedback_votes (value);
    `,
} as const;
