import { AT_REST, sqlList, THREAD_RELEASING_PHASES } from '../domain/phases.js';
import { FEEDBACK_QUERIES } from './feedback.js';
import { CLUSTER_QUERIES } from './queries/cluster.js';
import { OUTBOX_QUERIES } from './queries/outbox.js';
import { PULL_REQUEST_QUERIES } from './queries/pull-requests.js';
import { USES_QUERIES } from './queries/uses.js';
import type { Dialect } from './schema.js';

/**
 * Every statement of the store, written once for SQLite and PostgreSQL with `:name` parameters
 * (see `queries/named.ts` for PostgreSQL's `$n`). `{{lock}}` marks where PostgreSQL takes row
 * locks that concurrent claimers skip, `{{forUpdate}}` where it locks a row for the rest of the
 * transaction; SQLite has a single writer and needs neither. Statements only one engine runs
 * are named for it and kept here beside the shared ones.
 */
// The phase sets the queries filter on, written once with the job's phases.
const RELEASING = sqlList(THREAD_RELEASING_PHASES);
const ERASABLE = sqlList(AT_REST);

const JOBS = {
  /** A repeated trigger key returns no row: the start was recorded before. */
  insertJob: `
    INSERT INTO jobs (team_id, channel_id, requester_id, instruction, trigger_key, response_url, phase,
      poll_interval_ms, owner, origin, project_id, thread_ts, context_ts, privacy, context_channel_id,
      created_at, updated_at)
    VALUES (:teamId, :channelId, :requesterId, :instruction, :triggerKey, :responseUrl, 'accepted',
      :pollIntervalMs, :owner, :origin, :projectId, :threadTs, :contextTs, :privacy, :contextChannelId,
      :now, :now)
    ON CONFLICT (trigger_key) DO NOTHING
    RETURNING id`,
  jobById: 'SELECT * FROM jobs WHERE id = :jobId',
  jobByTrigger: 'SELECT * FROM jobs WHERE trigger_key = :triggerKey',
  jobByThread: 'SELECT * FROM jobs WHERE channel_id = :channelId AND thread_ts = :threadTs',
  /** What `Change.expect` is checked against; on PostgreSQL the row stays locked until commit. */
  jobState: 'SELECT phase, run_count, owner FROM jobs WHERE id = :jobId {{forUpdate}}',
  transitionJob: 'UPDATE jobs SET phase = :to, updated_at = :now WHERE id = :jobId AND phase = :from',
  incrementRunCount: 'UPDATE jobs SET run_count = run_count + 1 WHERE id = :jobId',
  countActiveJobs: "SELECT COUNT(*) AS n FROM jobs WHERE phase = 'active'",
  /** A job that never ran, or that the agent API forgot, gives its thread up to a new job. */
  /** The same start seen again (its own trigger key) keeps its own thread. */
  detachThread: `
    UPDATE jobs SET thread_ts = NULL
    WHERE id = :jobId AND phase IN (${RELEASING}) AND trigger_key <> :triggerKey`,
  /** A job that replaces another in its thread takes over the emoji the other put on the root. */
  inheritRootReaction: `
    UPDATE jobs SET root_reaction = (SELECT root_reaction FROM jobs WHERE id = :replacedId)
    WHERE id = :jobId`,
  recentJobsOfRequester:
    'SELECT * FROM jobs WHERE requester_id = :requesterId ORDER BY created_at DESC, id DESC LIMIT :limit',
  recentJobsOfChannel:
    'SELECT * FROM jobs WHERE channel_id = :channelId ORDER BY created_at DESC, id DESC LIMIT :limit',
  setRootReaction: 'UPDATE jobs SET root_reaction = :name WHERE id = :jobId',
} as const;

const RUNS = {
  /**
   * The next number of the job's runs, in the same statement. Numbering is serialised per job:
   * SQLite has one writer, PostgreSQL first takes `lockJobPostgres`.
   */
  insertRun: `
    INSERT INTO runs (job_id, seq, kind, prompt, author_id, run_key, message_ts, state, owner, team_id,
      created_at)
    VALUES (:jobId, (SELECT COALESCE(MAX(seq), 0) + 1 FROM runs WHERE job_id = :jobId), :kind, :prompt,
      :authorId, :runKey, :messageTs, 'pending', :owner, :teamId, :now)
    RETURNING id, seq`,
  runById: 'SELECT * FROM runs WHERE id = :runId',
  /** What `Change.expectRun` is checked against; on PostgreSQL the row stays locked until commit. */
  lockedRun: 'SELECT * FROM runs WHERE id = :runId {{forUpdate}}',
  /**
   * Served by `runs_key`. A run recorded before runs had keys has none stored: its message's ts
   * is its key, read here as the index reads it.
   */
  runByKey: 'SELECT * FROM runs WHERE job_id = :jobId AND COALESCE(run_key, message_ts) = :runKey',
  runsOfJob: 'SELECT * FROM runs WHERE job_id = :jobId ORDER BY seq',
  /** Served by `runs_open`: its cost follows the instructions in flight, not the history. */
  threadOfOpenMessage: `
    SELECT j.thread_ts AS thread_ts FROM runs r JOIN jobs j ON j.id = r.job_id
    WHERE r.state IN ('pending', 'ready', 'sending') AND r.message_ts = :messageTs
      AND j.channel_id = :channelId AND j.thread_ts IS NOT NULL
    LIMIT 1`,
  firstRunOfJob: 'SELECT * FROM runs WHERE job_id = :jobId ORDER BY seq LIMIT 1',
  pendingRuns:
    "SELECT * FROM runs WHERE state = 'pending' AND job_id = :jobId AND kind = 'follow_up' ORDER BY seq",
  readyRuns:
    "SELECT * FROM runs WHERE state = 'ready' AND job_id = :jobId AND kind = 'follow_up' ORDER BY seq",
  /** A run sent counts as a use even if it somehow was never reserved. */
  claimRun: `
    UPDATE runs SET state = 'sending', sent_at = :now, reserved_at = COALESCE(reserved_at, :now)
    WHERE id = :runId AND state = 'pending'`,
} as const;

const RETENTION = {
  /**
   * Finished jobs unchanged since before `:before` that still hold text (never erased, or a later
   * reply's prompt), with no run open and nothing left to deliver. Served by `jobs_finished`.
   */
  expiredJobs: `
    SELECT j.id AS id FROM jobs j
    WHERE j.phase IN (${ERASABLE}) AND j.updated_at < :before
      AND (j.erased_at IS NULL OR EXISTS (SELECT 1 FROM runs r WHERE r.job_id = j.id AND r.prompt <> ''))
      AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.job_id = j.id AND r.state IN ('pending', 'ready', 'sending'))
      AND NOT EXISTS (
        SELECT 1 FROM outbox o WHERE o.job_id = j.id AND o.delivered_at IS NULL AND o.dead_at IS NULL)
    ORDER BY j.updated_at LIMIT :limit`,
  /** Re-checked here, so a job that moved on since it was chosen keeps its texts. */
  eraseJob: `
    UPDATE jobs SET instruction = :erasedInstruction, response_url = NULL, erased_at = :now
    WHERE id = :jobId AND updated_at < :before AND phase IN (${ERASABLE})`,
  /** A reply recorded after the job was chosen keeps its text. */
  eraseRuns: `
    UPDATE runs SET prompt = ''
    WHERE job_id = :jobId AND prompt <> '' AND created_at < :before AND state NOT IN ('pending', 'ready', 'sending')`,
  /**
   * Outbox items delivered or abandoned before `:before`, at most `:limit`. The newest item
   * always stays: on SQLite a deleted highest id would be handed out again, and ids name messages
   * in Slack.
   */
  deleteDoneOutbox: `
    DELETE FROM outbox WHERE id IN (
      SELECT id FROM outbox
      WHERE (delivered_at < :before OR dead_at < :before) AND id < (SELECT MAX(id) FROM outbox)
      LIMIT :limit)`,
  deleteOldHomeViews: 'DELETE FROM home_views WHERE opened_at < :before',
  /** Assistant threads Slack last told about before `:before`: a pane idle that long is forgotten. */
  deleteOldAssistantThreads: 'DELETE FROM assistant_threads WHERE updated_at < :before',
  recordHomeOpened: `
    INSERT INTO home_views (user_id, team_id, opened_at) VALUES (:userId, :teamId, :now)
    ON CONFLICT (user_id) DO UPDATE SET opened_at = excluded.opened_at`,
  homeOpened: 'SELECT 1 AS seen FROM home_views WHERE user_id = :userId',
  recordAssistantThread: `
    INSERT INTO assistant_threads (channel_id, thread_ts, context_channel_id, updated_at)
    VALUES (:channelId, :threadTs, :contextChannelId, :at)
    ON CONFLICT (channel_id, thread_ts) DO UPDATE
      SET context_channel_id = excluded.context_channel_id, updated_at = excluded.updated_at
      WHERE excluded.updated_at >= assistant_threads.updated_at`,
  /** A message used the thread at `:at`: kept from the sweep as long as an event at that time would keep it. */
  touchAssistantThread: `
    UPDATE assistant_threads SET updated_at = :at
    WHERE channel_id = :channelId AND thread_ts = :threadTs AND updated_at < :at`,
  assistantThread: `
    SELECT context_channel_id FROM assistant_threads WHERE channel_id = :channelId AND thread_ts = :threadTs`,
} as const;

const SHARED = {
  ...JOBS,
  ...RUNS,
  ...RETENTION,
  ...CLUSTER_QUERIES,
  ...OUTBOX_QUERIES,
  ...USES_QUERIES,
  ...FEEDBACK_QUERIES,
  ...PULL_REQUEST_QUERIES,
} as const;

/**
 * Advisory lock key held while taking over a gone instance's work, so two instances never both do
 * (one more than the migrations' key, `MIGRATION_LOCK_KEY` in `postgres/migrate.ts`).
 */
const TAKE_OVER_LOCK_KEY = 7_204_118_534;
/**
 * First keys of the two-key advisory locks that serialise use reservations: one lock per person
 * and one per project (the second key hashes the id), always taken in that order.
 */
const USER_USES_LOCK_KEY = 720_411;
const PROJECT_USES_LOCK_KEY = 720_412;

/**
 * The locks a transaction takes (`TransactionStatements.lock`), which only PostgreSQL runs: there
 * several instances share the store, so what SQLite's single writer serialises by itself needs a
 * lock, held until the transaction ends.
 */
export const POSTGRES_ONLY = {
  /** Serialises run numbering per job (see `insertRun`), and the changes to one job. */
  lockJobPostgres: 'SELECT id FROM jobs WHERE id = :jobId FOR UPDATE',
  /** Serialises take-overs: each sees what the one before it took, so no row is taken twice. */
  takeOverLockPostgres: `SELECT pg_advisory_xact_lock(${TAKE_OVER_LOCK_KEY})`,
  /**
   * Serialise use reservations per person and per project: the next reservation for this person
   * or project (on any instance) waits, and its counts, read after that, include this one.
   */
  userUsesLockPostgres: `SELECT pg_advisory_xact_lock(${USER_USES_LOCK_KEY}, hashtext(:id))`,
  projectUsesLockPostgres: `SELECT pg_advisory_xact_lock(${PROJECT_USES_LOCK_KEY}, hashtext(:id))`,
} as const;

export type QueryName = keyof typeof SHARED;
export type LockName = keyof typeof POSTGRES_ONLY;

/**
 * The database server's own time in epoch milliseconds, read when the statement runs (not when
 * its transaction began): what every instance's ownership decisions are timed by.
 */
const POSTGRES_NOW = '(extract(epoch from clock_timestamp()) * 1000)::bigint';

/**
 * The shared statements in one dialect, still with `:name` parameters. `{{now}}` is the store's
 * clock: the server's on PostgreSQL, the `:clock` parameter on SQLite (one process, so the
 * process's clock is the only one there is).
 */
export function queriesFor(dialect: Dialect): Record<QueryName, string> {
  const lock = dialect === 'postgres' ? 'FOR UPDATE SKIP LOCKED' : '';
  const forUpdate = dialect === 'postgres' ? 'FOR UPDATE' : '';
  const clock = dialect === 'postgres' ? POSTGRES_NOW : ':clock';
  const out = {} as Record<QueryName, string>;
  for (const [name, sql] of Object.entries(SHARED) as [QueryName, string][]) {
    out[name] = sql
      .replace('{{lock}}', lock)
      .replace('{{forUpdate}}', forUpdate)
      .replaceAll('{{now}}', clock);
  }
  return out;
}

/** Tables a patch may change. */
export type PatchedTable = 'jobs' | 'runs' | 'outbox' | 'pull_requests';

/**
 * `UPDATE table SET a = :a, … WHERE id = :id` for the defined keys of a patch (snake_case
 * columns, the patch's own keys as parameters); undefined when nothing is to change. With
 * `claimant`, only while the row's claim is still that instance's.
 */
export function updateStatement(
  table: PatchedTable,
  id: number,
  patch: Record<string, unknown>,
  claimant?: string,
): { sql: string; params: Record<string, unknown> } | undefined {
  const keys = Object.keys(patch).filter((key) => patch[key] !== undefined);
  if (keys.length === 0) return undefined;
  const sets = keys.map((key) => `${key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)} = :${key}`);
  const params = Object.fromEntries(keys.map((key) => [key, patch[key]]));
  const fenced = claimant === undefined ? '' : ' AND claimed_by = :claimant';
  return {
    sql: `UPDATE ${table} SET ${sets.join(', ')} WHERE id = :id${fenced}`,
    params: { ...params, id, ...(claimant === undefined ? {} : { claimant }) },
  };
}
