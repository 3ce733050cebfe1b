/**
 * Numbered schema migrations for PostgreSQL, the same schema as the SQLite ones. Times are epoch
 * milliseconds (BIGINT). Never edit a migration that has shipped: add the next number.
 */
export const pgMigrations: ReadonlyArray<{ version: number; name: string; sql: string }> = [
  {
    version: 1,
    name: 'jobs, runs, outbox, slack events',
    sql: `
      CREATE TABLE jobs (
        id SERIAL PRIMARY KEY,
        team_id TEXT NOT NULL,
        channel_id TEXT NOT NULL,
        thread_ts TEXT,
        requester_id TEXT NOT NULL,
        instruction TEXT NOT NULL,
        trigger_key TEXT NOT NULL UNIQUE,
        response_url TEXT,
        agent_job_id TEXT,
        phase TEXT NOT NULL,
        agent_status TEXT,
        pr_link TEXT,
        last_outcome TEXT,
        repository TEXT,
        ref TEXT,
        model TEXT,
        run_count INTEGER NOT NULL DEFAULT 0,
        next_poll_at BIGINT,
        poll_interval_ms INTEGER NOT NULL,
        poll_failures INTEGER NOT NULL DEFAULT 0,
        run_started_at BIGINT,
        last_error TEXT,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL
      );
      CREATE UNIQUE INDEX jobs_thread ON jobs (channel_id, thread_ts) WHERE thread_ts IS NOT NULL;
      CREATE INDEX jobs_due ON jobs (next_poll_at) WHERE phase = 'active';
      CREATE INDEX jobs_interrupted ON jobs (phase) WHERE phase IN ('accepted', 'posting', 'creating');

      CREATE TABLE runs (
        id SERIAL PRIMARY KEY,
        job_id INTEGER NOT NULL REFERENCES jobs (id),
        seq INTEGER NOT NULL,
        kind TEXT NOT NULL,
        prompt TEXT NOT NULL,
        author_id TEXT NOT NULL,
        message_ts TEXT,
        state TEXT NOT NULL,
        error TEXT,
        outcome TEXT,
        created_at BIGINT NOT NULL,
        sent_at BIGINT,
        outcome_at BIGINT,
        UNIQUE (job_id, seq)
      );
      CREATE UNIQUE INDEX runs_message ON runs (job_id, message_ts) WHERE message_ts IS NOT NULL;
      CREATE INDEX runs_author ON runs (author_id, created_at);
      CREATE INDEX runs_open ON runs (state, job_id) WHERE state IN ('pending', 'sending');

      CREATE TABLE outbox (
        id SERIAL PRIMARY KEY,
        job_id INTEGER REFERENCES jobs (id),
        dedupe_key TEXT UNIQUE,
        kind TEXT NOT NULL,
        payload JSONB NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at BIGINT NOT NULL,
        started_at BIGINT,
        delivered_at BIGINT,
        dead_at BIGINT,
        last_error TEXT,
        created_at BIGINT NOT NULL
      );
      CREATE INDEX outbox_due ON outbox (next_attempt_at) WHERE delivered_at IS NULL AND dead_at IS NULL;
      CREATE INDEX outbox_job_pending ON outbox (job_id, id)
        WHERE delivered_at IS NULL AND dead_at IS NULL AND kind = 'post';

      CREATE TABLE slack_events (
        event_id TEXT PRIMARY KEY,
        seen_at BIGINT NOT NULL
      );
      CREATE INDEX slack_events_seen ON slack_events (seen_at);
    `,
  },
];
