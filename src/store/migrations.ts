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

/**
 * Version 16: pull requests followed to their end (15 is left to another release's column).
 *
 * pull_requests: one row per pull request a job's run opened (a later run's new link is a row of
 * its own, the one before it marked `replaced`), with what its host last said of it (`state`:
 * open, merged or closed; null before the first answer), who merged it and when it ended, the
 * ETag of the last answer (asked again with If-None-Match), and how far following it got
 * (`following`: see `PullRequestFollowing` in `store/pull-requests.ts`). Checks are due by
 * `next_check_at` (null: no longer followed) and claimed like polls (`claimed_by`,
 * `claimed_until`, timed by the store's clock), so several instances check each one once.
 */
export const PULL_REQUESTS_MIGRATION = {
  version: 16,
  name: 'pull requests followed to their end',
  sql: `
      CREATE TABLE pull_requests (
        id {{id}},
        job_id INTEGER NOT NULL REFERENCES jobs (id),
        project_id TEXT,
        url TEXT NOT NULL,
        owner TEXT,
        repo TEXT,
        number INTEGER,
        state TEXT,
        following TEXT NOT NULL,
        title TEXT,
        merged_by TEXT,
        ended_at {{time}},
        etag TEXT,
        opened_at {{time}} NOT NULL,
        next_check_at {{time}},
        check_failures INTEGER NOT NULL DEFAULT 0,
        claimed_by TEXT,
        claimed_until {{time}},
        updated_at {{time}} NOT NULL
      );
      CREATE UNIQUE INDEX pull_requests_link ON pull_requests (job_id, url);
      CREATE INDEX pull_requests_due ON pull_requests (next_check_at) WHERE next_check_at IS NOT NULL;
    `,
} as const;

/**
 * Version 15: what a thumbs-down says to fix.
 *
 * reason: what the person who voted said to fix in the outcome (a thumbs-down's modal), in plain
 * text; null for a vote without one. Written with its vote, dropped when the vote changes, and
 * emptied (not dropped) by the retention sweep with the job's other words.
 */
export const FEEDBACK_REASONS_MIGRATION = {
  version: 15,
  name: 'what a thumbs-down says to fix',
  sql: `
      ALTER TABLE feedback_votes ADD COLUMN reason TEXT;
    `,
} as const;

/**
 * Version 18: Slack's rate limits.
 *
 * session_status: the status the bot last set on the job thread's agent session, or
 * `refused:<status>` when Slack refused that status for good; null until one is. A card update sends the session's status only when it
 * differs: `agents.sessions.setStatus` is limited like the card's own edits.
 *
 * slack_pauses: what Slack told an instance to wait out (a 429's `Retry-After`) before calling a
 * method again (`scope`: the method, or `chat.postMessage:<channel>`), until when on the store's
 * clock, so that every instance waits it out. One row per scope ever refused.
 */
export const SLACK_LIMITS_MIGRATION = {
  version: 18,
  name: "Slack's rate limits",
  sql: `
      ALTER TABLE jobs ADD COLUMN session_status TEXT;
      CREATE TABLE slack_pauses (
        scope TEXT PRIMARY KEY,
        until_at {{time}} NOT NULL
      );
    `,
} as const;

/**
 * Version 19: the latest runs first, by when their outcome was seen: the poller reads a project's
 * latest run lengths (`store/run-lengths.ts`) without reading every run ever made.
 *
 * A `processing` session status recorded before may be one Slack refused for good (recorded then
 * as the status itself, now as `refused:processing`): forgotten, so that the job's next card
 * update asks Slack again and the root shows the hourglass where no session shows the agent working.
 */
export const RUN_LENGTHS_MIGRATION = {
  version: 19,
  name: 'run lengths',
  sql: `
      CREATE INDEX runs_outcome_at ON runs (outcome_at) WHERE outcome_at IS NOT NULL;
      UPDATE jobs SET session_status = NULL WHERE session_status = 'processing';
    `,
} as const;

/**
 * Version 17: pull request checks released with their instance. A take-over releases the checks a
 * gone instance had claimed, as it does its polls; the index keeps that from reading every pull
 * request ever followed.
 */
export const PULL_REQUEST_CLAIMS_MIGRATION = {
  version: 17,
  name: 'pull request checks released with their instance',
  sql: `
      CREATE INDEX pull_requests_claimed ON pull_requests (claimed_by) WHERE claimed_by IS NOT NULL;
    `,
} as const;
