/**
 * The numbered migrations written out in full, by version (the rest are in `schema.ts`).
 */

/**
 * Slack's agent sessions and feedback on outcomes.
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

/**
 * Version 10: how long an owner's hold on half-done work lasts, timed by the database's clock.
 *
 * owner_until: until when (the store's clock, epoch ms) the owner of a job being started or of a
 * follow-up being sent may be inside a call to the agent API for it. Set right before such a call
 * (and renewed by the owner), never by another instance. Work is taken over only once its owner
 * has stopped heartbeating and this time has passed, so a take-over never overlaps a call its
 * owner started while it held the work. Null: no call is under way.
 */
export const HOLDS_MIGRATION = {
  version: 10,
  name: 'holds on half-done work timed by the database',
  sql: `
      ALTER TABLE jobs ADD COLUMN owner_until {{time}};
      ALTER TABLE runs ADD COLUMN owner_until {{time}};
    `,
} as const;

/**
 * Version 13: refused polls counted apart from other failed ones.
 *
 * poll_refusals: consecutive polls the agent API refused with the admin key (401/403). The thread
 * is told of a refused key after a few of these in a row; poll_failures counts every failed poll
 * (a 503, a network error), so it cannot say how many refusals came in a row. Any poll that is
 * not refused (answered or failed otherwise) sets it back to 0.
 */
export const POLL_REFUSALS_MIGRATION = {
  version: 13,
  name: 'refused polls counted apart',
  sql: `
      ALTER TABLE jobs ADD COLUMN poll_refusals INTEGER NOT NULL DEFAULT 0;
    `,
} as const;
