import { AT_REST, STILL_STARTING, sqlList } from '../domain/phases.js';
import {
  AGENT_SESSIONS_MIGRATION,
  FEEDBACK_REASONS_MIGRATION,
  HOLDS_MIGRATION,
  POLL_REFUSALS_MIGRATION,
  PULL_REQUEST_CLAIMS_MIGRATION,
  PULL_REQUESTS_MIGRATION,
  RUN_LENGTHS_MIGRATION,
  SLACK_LIMITS_MIGRATION,
} from './migrations.js';

/** The SQL dialects the store runs on. */
export type Dialect = 'sqlite' | 'postgres';

const TYPES: Record<Dialect, Record<string, string>> = {
  sqlite: { id: 'INTEGER PRIMARY KEY', time: 'INTEGER', json: 'TEXT' },
  postgres: { id: 'SERIAL PRIMARY KEY', time: 'BIGINT', json: 'JSONB' },
};

/** Fills a schema written once for both engines with each engine's column types. */
function forDialect(sql: string, dialect: Dialect): string {
  return sql.replace(/\{\{(\w+)\}\}/g, (_m, name: string) => TYPES[dialect][name] ?? _m);
}

/**
 * Numbered schema migrations, one text for SQLite and PostgreSQL (times are epoch milliseconds).
 * Never edit a migration that has shipped: add the next number. The partial indexes name the
 * job's phase sets, so the queries that use them match their predicates; a test pins the
 * shipped text, and a changed set needs a new migration that rebuilds its index.
 */
const MIGRATIONS: ReadonlyArray<{ version: number; name: string; sql: string }> = [
  {
    version: 1,
    name: 'jobs, runs, outbox, slack events',
    sql: `
      CREATE TABLE jobs (
        id {{id}},
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
        next_poll_at {{time}},
        poll_interval_ms INTEGER NOT NULL,
        poll_failures INTEGER NOT NULL DEFAULT 0,
        run_started_at {{time}},
        last_error TEXT,
        created_at {{time}} NOT NULL,
        updated_at {{time}} NOT NULL
      );
      CREATE UNIQUE INDEX jobs_thread ON jobs (channel_id, thread_ts) WHERE thread_ts IS NOT NULL;
      CREATE INDEX jobs_due ON jobs (next_poll_at) WHERE phase = 'active';
      CREATE INDEX jobs_interrupted ON jobs (phase) WHERE phase IN (${sqlList(STILL_STARTING)});

      CREATE TABLE runs (
        id {{id}},
        job_id INTEGER NOT NULL REFERENCES jobs (id),
        seq INTEGER NOT NULL,
        kind TEXT NOT NULL,
        prompt TEXT NOT NULL,
        author_id TEXT NOT NULL,
        message_ts TEXT,
        state TEXT NOT NULL,
        error TEXT,
        outcome TEXT,
        created_at {{time}} NOT NULL,
        sent_at {{time}},
        outcome_at {{time}},
        UNIQUE (job_id, seq)
      );
      CREATE UNIQUE INDEX runs_message ON runs (job_id, message_ts) WHERE message_ts IS NOT NULL;
      CREATE INDEX runs_author ON runs (author_id, created_at);
      CREATE INDEX runs_open ON runs (state, job_id) WHERE state IN ('pending', 'sending');

      CREATE TABLE outbox (
        id {{id}},
        job_id INTEGER REFERENCES jobs (id),
        dedupe_key TEXT UNIQUE,
        kind TEXT NOT NULL,
        payload {{json}} NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at {{time}} NOT NULL,
        started_at {{time}},
        delivered_at {{time}},
        dead_at {{time}},
        last_error TEXT,
        created_at {{time}} NOT NULL
      );
      CREATE INDEX outbox_due ON outbox (next_attempt_at) WHERE delivered_at IS NULL AND dead_at IS NULL;
      CREATE INDEX outbox_job_pending ON outbox (job_id, id)
        WHERE delivered_at IS NULL AND dead_at IS NULL AND kind = 'post';

      CREATE TABLE slack_events (
        event_id TEXT PRIMARY KEY,
        seen_at {{time}} NOT NULL
      );
      CREATE INDEX slack_events_seen ON slack_events (seen_at);
    `,
  },
  {
    version: 2,
    name: 'instances, ownership of half-done work, poll and delivery claims',
    // Several instances may share one PostgreSQL store. Each records a heartbeat; work that is
    // half done (a job being started, a follow-up being sent) names its owner, so only work of
    // an instance that stopped heartbeating is taken over; polls and deliveries are claimed for
    // a bounded time so no two instances poll one job or post one message at once.
    sql: `
      CREATE TABLE instances (
        id TEXT PRIMARY KEY,
        started_at {{time}} NOT NULL,
        heartbeat_at {{time}} NOT NULL
      );
      ALTER TABLE jobs ADD COLUMN owner TEXT;
      ALTER TABLE jobs ADD COLUMN claimed_by TEXT;
      ALTER TABLE jobs ADD COLUMN claimed_until {{time}};
      ALTER TABLE runs ADD COLUMN owner TEXT;
      ALTER TABLE outbox ADD COLUMN claimed_by TEXT;
      ALTER TABLE outbox ADD COLUMN claimed_until {{time}};
      CREATE INDEX jobs_claimed ON jobs (claimed_by) WHERE claimed_by IS NOT NULL;
      -- Due jobs taken in turns per channel (the poller's fair share).
      CREATE INDEX jobs_due_by_channel ON jobs (channel_id, next_poll_at) WHERE phase = 'active';
      CREATE INDEX outbox_claimed ON outbox (claimed_by) WHERE claimed_by IS NOT NULL;
      -- Re-delivered events are recognized by what they carry (a reply's message ts, unique per
      -- job), in the same write that records the instruction. A separate claim of the event id
      -- could outlive a crash between the claim and that write and make Slack's retry look like
      -- a repeat, losing the reply.
      DROP TABLE slack_events;
    `,
  },
  {
    version: 3,
    name: 'jobs started from anywhere, status cards, per-channel projects, reply batches, App Home',
    // A job can start from a mention or a message shortcut inside an existing thread: the thread
    // is then someone else's message and the bot's status card is a reply in it (card_ts).
    // context_ts: read the thread's earlier messages (before this ts) into the first prompt.
    // root_reaction: the status emoji the bot last put on the thread's root, to swap it.
    // Follow-ups checked and waiting for their batch window are 'ready'.
    sql: `
      ALTER TABLE jobs ADD COLUMN project_id TEXT;
      ALTER TABLE jobs ADD COLUMN origin TEXT NOT NULL DEFAULT 'command';
      ALTER TABLE jobs ADD COLUMN card_ts TEXT;
      ALTER TABLE jobs ADD COLUMN context_ts TEXT;
      ALTER TABLE jobs ADD COLUMN root_reaction TEXT;
      UPDATE jobs SET card_ts = thread_ts WHERE card_ts IS NULL;
      CREATE INDEX jobs_requester_recent ON jobs (requester_id, created_at);
      CREATE INDEX jobs_channel_recent ON jobs (channel_id, created_at);
      DROP INDEX runs_open;
      CREATE INDEX runs_open ON runs (state, job_id) WHERE state IN ('pending', 'ready', 'sending');
      CREATE INDEX runs_sent ON runs (sent_at) WHERE sent_at IS NOT NULL;
      -- Status card updates of a job go out one at a time, like its thread posts.
      CREATE INDEX outbox_job_card ON outbox (job_id, id)
        WHERE delivered_at IS NULL AND dead_at IS NULL AND kind = 'update_root';
      CREATE TABLE home_views (
        user_id TEXT PRIMARY KEY,
        team_id TEXT,
        opened_at {{time}} NOT NULL
      );
    `,
  },
  {
    version: 4,
    name: "the author's workspace on each run",
    // In a Slack Connect channel a reply's author may belong to another workspace; the access
    // check of a follow-up processed after a restart needs that workspace, not the job's.
    sql: `
      ALTER TABLE runs ADD COLUMN team_id TEXT;
    `,
  },
  {
    version: 5,
    name: 'hourly limits reserved with the check; retention',
    // reserved_at: when a run was counted against the per-person and per-project hourly limits,
    // in the same transaction as the check. Runs checked or sent before this version count from
    // when they were sent (or recorded), so an upgrade does not reset anyone's hour.
    // erased_at: when the retention sweep erased a finished job's texts.
    sql: `
      ALTER TABLE runs ADD COLUMN reserved_at {{time}};
      ALTER TABLE jobs ADD COLUMN erased_at {{time}};
      UPDATE runs SET reserved_at = COALESCE(sent_at, created_at) WHERE state IN ('ready', 'sending', 'sent', 'unknown');
      CREATE INDEX runs_reserved_by ON runs (author_id, reserved_at) WHERE reserved_at IS NOT NULL;
      CREATE INDEX runs_reserved ON runs (reserved_at) WHERE reserved_at IS NOT NULL;
      CREATE INDEX jobs_finished ON jobs (updated_at)
        WHERE phase IN ('idle', 'not_started', 'start_unknown', 'gone');
      CREATE INDEX outbox_delivered ON outbox (delivered_at) WHERE delivered_at IS NOT NULL;
      CREATE INDEX outbox_dead ON outbox (dead_at) WHERE dead_at IS NOT NULL;
      CREATE INDEX home_views_opened ON home_views (opened_at);
    `,
  },
  {
    version: 6,
    name: 'assistant threads and the channel they were opened beside',
    // Slack's assistant pane says which channel it is open beside only in its own events, not
    // in the messages people send there: kept here, any instance reads it when a message comes.
    // updated_at is the event's own time, so a late re-delivery never overwrites a newer one.
    sql: `
      CREATE TABLE assistant_threads (
        channel_id TEXT NOT NULL,
        thread_ts TEXT NOT NULL,
        context_channel_id TEXT,
        updated_at {{time}} NOT NULL,
        PRIMARY KEY (channel_id, thread_ts)
      );
    `,
  },
  {
    version: 7,
    name: 'jobs tried again are finished too',
    // "Try again" added the phase \`retried\` to the finished ones: the retention sweep's index
    // is rebuilt with the set its queries filter on.
    sql: `
      DROP INDEX jobs_finished;
      CREATE INDEX jobs_finished ON jobs (updated_at)
        WHERE phase IN (${sqlList(AT_REST)});
    `,
  },
  {
    version: 8,
    name: 'indexes no query uses any more',
    // Hourly counts moved to reserved_at (version 5); nothing looks runs up by their author's
    // creation time or by when they were sent. runs_author was one more write in every command's
    // insert, which is recorded before Slack is answered; runs_sent one in every run sent.
    // IF EXISTS: an operator who dropped one by hand must not have every instance fail to start.
    sql: `
      DROP INDEX IF EXISTS runs_author;
      DROP INDEX IF EXISTS runs_sent;
    `,
  },
  {
    version: 9,
    name: "each job's privacy, and the channel its assistant pane was beside",
    // privacy: who may read what was asked for (domain/privacy.ts), recorded when a job is
    // accepted. Jobs recorded before cannot say whether their channel was public: 'unknown',
    // treated as private. A direct message's id says what it is; one whose thread is an
    // assistant thread was asked in the pane.
    // context_channel_id: the channel the pane was beside when the job was accepted, which its
    // checks use from now on. Earlier pane jobs get the channel the pane was last beside, which is
    // what their checks used until now.
    sql: `
      ALTER TABLE jobs ADD COLUMN privacy TEXT NOT NULL DEFAULT 'unknown';
      ALTER TABLE jobs ADD COLUMN context_channel_id TEXT;
      UPDATE jobs SET privacy = 'direct' WHERE channel_id LIKE 'D%';
      UPDATE jobs SET privacy = 'pane', context_channel_id = (
          SELECT a.context_channel_id FROM assistant_threads a
          WHERE a.channel_id = jobs.channel_id AND a.thread_ts = jobs.thread_ts)
        WHERE channel_id LIKE 'D%' AND EXISTS (
          SELECT 1 FROM assistant_threads a
          WHERE a.channel_id = jobs.channel_id AND a.thread_ts = jobs.thread_ts);
    `,
  },
  HOLDS_MIGRATION,
  AGENT_SESSIONS_MIGRATION,
  POLL_REFUSALS_MIGRATION,
  {
    version: 14,
    name: 'runs keyed by what carried them',
    // run_key: what identifies a run within its job, built from what carried its instruction
    // (`runKeys` in domain/keys.ts): a message's ts (what told a job's replies apart before), the
    // key of a source that is no message (a modal's view, a step's execution), or `first` for a
    // job's first run that no message carried. The same source delivered again finds its run by
    // it. Rows recorded before are not rewritten: their run_key stays null, their message's ts is
    // their key (read as the index reads it) and a first run with neither is read as `first`.
    // The index takes the place of runs_message, whose uniqueness it keeps.
    sql: `
      ALTER TABLE runs ADD COLUMN run_key TEXT;
      DROP INDEX IF EXISTS runs_message;
      CREATE UNIQUE INDEX runs_key ON runs (job_id, COALESCE(run_key, message_ts));
    `,
  },
  FEEDBACK_REASONS_MIGRATION,
  PULL_REQUESTS_MIGRATION,
  PULL_REQUEST_CLAIMS_MIGRATION,
  SLACK_LIMITS_MIGRATION,
  RUN_LENGTHS_MIGRATION,
];

export function migrationsFor(dialect: Dialect): { version: number; name: string; sql: string }[] {
  return MIGRATIONS.map((m) => ({ ...m, sql: forDialect(m.sql, dialect) }));
}
