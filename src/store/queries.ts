import { FINISHED, STILL_STARTING, sqlList, THREAD_RELEASING_PHASES } from '../domain/phases.js';
import { FEEDBACK_QUERIES } from './queries/feedback.js';
import { OUTBOX_QUERIES } from './queries/outbox.js';
import { POSTGRES_USES_QUERIES, USES_QUERIES } from './queries/uses.js';
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
const ERASABLE = sqlList(FINISHED);
const STARTING = sqlList(STILL_STARTING);

/** Instances heard from since `:staleBefore`. */
const ALIVE = 'SELECT id FROM instances WHERE heartbeat_at >= :staleBefore';

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
  jobState: 'SELECT phase, run_count FROM jobs WHERE id = :jobId {{forUpdate}}',
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
  /** Active jobs whose poll is due and that no instance holds; served by the index `jobs_due`. */
  dueJobs: `
    SELECT * FROM jobs
    WHERE phase = 'active' AND next_poll_at <= :now AND (claimed_until IS NULL OR claimed_until <= :now)
    ORDER BY next_poll_at LIMIT :limit`,
  /**
   * Claims due jobs for polling until `:until`. Taken in turns across channels (each channel's
   * most overdue job first, then each one's second, …), so a burst of jobs in one channel cannot
   * starve another's. On PostgreSQL the chosen rows are locked skipping those a concurrent
   * claimer holds, and re-checked, so claimers never wait on each other and never take the same job.
   */
  claimDueJobs: `
    UPDATE jobs SET claimed_by = :instanceId, claimed_until = :until
    WHERE id IN (
      SELECT id FROM jobs
      WHERE id IN (
        SELECT id FROM (
          SELECT id, next_poll_at, ROW_NUMBER() OVER (PARTITION BY channel_id ORDER BY next_poll_at, id) AS turn
          FROM jobs
          WHERE phase = 'active' AND next_poll_at <= :now AND (claimed_until IS NULL OR claimed_until <= :now)
        ) due
        ORDER BY turn, next_poll_at, id LIMIT :limit)
        AND phase = 'active' AND (claimed_until IS NULL OR claimed_until <= :now)
      {{lock}})
    RETURNING *`,
  /** When the next unclaimed active job falls due; served by `jobs_due`. */
  nextDueAt: `
    SELECT MIN(next_poll_at) AS at FROM jobs
    WHERE phase = 'active' AND next_poll_at IS NOT NULL AND (claimed_until IS NULL OR claimed_until <= :now)`,
  releaseJob:
    'UPDATE jobs SET claimed_by = NULL, claimed_until = NULL WHERE id = :jobId AND claimed_by = :instanceId',
} as const;

const RUNS = {
  /**
   * The next number of the job's runs, in the same statement. Numbering is serialised per job:
   * SQLite has one writer, PostgreSQL first takes `lockJobPostgres`.
   */
  insertRun: `
    INSERT INTO runs (job_id, seq, kind, prompt, author_id, message_ts, state, owner, team_id, created_at)
    VALUES (:jobId, (SELECT COALESCE(MAX(seq), 0) + 1 FROM runs WHERE job_id = :jobId), :kind, :prompt,
      :authorId, :messageTs, 'pending', :owner, :teamId, :now)
    RETURNING id, seq`,
  runById: 'SELECT * FROM runs WHERE id = :runId',
  /** What `Change.expectRun` is checked against; on PostgreSQL the row stays locked until commit. */
  lockedRun: 'SELECT * FROM runs WHERE id = :runId {{forUpdate}}',
  runByMessage: 'SELECT * FROM runs WHERE job_id = :jobId AND message_ts = :messageTs',
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
  /**
   * The claimer owns the batch, so a take-over finds all of it. A run sent counts as a use even
   * if it somehow was never reserved.
   */
  claimReadyRuns: `
    UPDATE runs SET state = 'sending', sent_at = :now, owner = :instanceId, reserved_at = COALESCE(reserved_at, :now)
    WHERE job_id = :jobId AND state = 'ready' AND kind = 'follow_up'
    RETURNING *`,
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

const INSTANCES = {
  heartbeat: `
    INSERT INTO instances (id, started_at, heartbeat_at) VALUES (:instanceId, :now, :now)
    ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at`,
  retireInstance: 'DELETE FROM instances WHERE id = :instanceId',
  liveInstances: 'SELECT COUNT(*) AS n FROM instances WHERE heartbeat_at >= :since',
  /**
   * The metrics endpoint's figures in one statement (instances live since `:liveSince`); the uses
   * per project come from `instructionsSince`. Served by `jobs_due` and `outbox_due`, whose rows
   * are the work in flight.
   */
  figures: `
    SELECT
      (SELECT COUNT(*) FROM jobs WHERE phase = 'active') AS active_jobs,
      (SELECT MIN(next_poll_at) FROM jobs WHERE phase = 'active') AS earliest_poll_at,
      (SELECT COUNT(*) FROM outbox WHERE delivered_at IS NULL AND dead_at IS NULL) AS outbox_backlog,
      (SELECT MIN(created_at) FROM outbox WHERE delivered_at IS NULL AND dead_at IS NULL)
        AS oldest_undelivered_at,
      (SELECT COUNT(*) FROM instances WHERE heartbeat_at >= :liveSince) AS live_instances`,
  releaseJobsOf: 'UPDATE jobs SET claimed_by = NULL, claimed_until = NULL WHERE claimed_by = :instanceId',
  releaseOutboxOf: 'UPDATE outbox SET claimed_by = NULL, claimed_until = NULL WHERE claimed_by = :instanceId',
  // Adoption: `:instanceId` is the adopting instance, `:staleBefore` the heartbeat time before
  // which an instance is gone.
  releaseDeadJobClaims: `
    UPDATE jobs SET claimed_by = NULL, claimed_until = NULL
    WHERE claimed_by IS NOT NULL AND claimed_by <> :instanceId AND claimed_by NOT IN (${ALIVE})`,
  releaseDeadOutboxClaims: `
    UPDATE outbox SET claimed_by = NULL, claimed_until = NULL
    WHERE claimed_by IS NOT NULL AND claimed_by <> :instanceId AND claimed_by NOT IN (${ALIVE})`,
  adoptJobs: `
    UPDATE jobs SET owner = :instanceId
    WHERE phase IN (${STARTING})
      AND (owner IS NULL OR (owner <> :instanceId AND owner NOT IN (${ALIVE})))
    RETURNING *`,
  adoptRuns: `
    UPDATE runs SET owner = :instanceId
    WHERE state IN ('pending', 'ready', 'sending') AND kind = 'follow_up'
      AND (owner IS NULL OR (owner <> :instanceId AND owner NOT IN (${ALIVE})))
    RETURNING *`,
  /** The job goes back to the take-over round (see `adoptJobs`). */
  releaseJobWork: `
    UPDATE jobs SET owner = NULL
    WHERE id = :jobId AND owner = :instanceId AND phase IN (${STARTING})`,
  /** The follow-up goes back to the take-over round (see `adoptRuns`). */
  releaseRunWork: `
    UPDATE runs SET owner = NULL
    WHERE id = :runId AND owner = :instanceId AND state IN ('pending', 'ready', 'sending') AND kind = 'follow_up'`,
  forgetDeadInstances: 'DELETE FROM instances WHERE heartbeat_at < :staleBefore AND id <> :instanceId',
} as const;

const SHARED = {
  ...JOBS,
  ...RUNS,
  ...RETENTION,
  ...INSTANCES,
  ...OUTBOX_QUERIES,
  ...USES_QUERIES,
  ...FEEDBACK_QUERIES,
} as const;

/**
 * Statements only PostgreSQL runs: there several instances share the store, so what SQLite's
 * single writer serialises by itself needs a lock.
 */
export const POSTGRES_ONLY = {
  /** Serialises run numbering per job (see `insertRun`). */
  lockJobPostgres: 'SELECT id FROM jobs WHERE id = :jobId FOR UPDATE',
  /** Serialises take-overs: each adopter sees what the one before it took, so no row is taken twice. */
  adoptionLockPostgres: 'SELECT pg_advisory_xact_lock(:lock)',
  ...POSTGRES_USES_QUERIES,
} as const;

export type QueryName = keyof typeof SHARED;

/** The shared statements in one dialect, still with `:name` parameters. */
export function queriesFor(dialect: Dialect): Record<QueryName, string> {
  const lock = dialect === 'postgres' ? 'FOR UPDATE SKIP LOCKED' : '';
  const forUpdate = dialect === 'postgres' ? 'FOR UPDATE' : '';
  const out = {} as Record<QueryName, string>;
  for (const [name, sql] of Object.entries(SHARED) as [QueryName, string][]) {
    out[name] = sql.replace('{{lock}}', lock).replace('{{forUpdate}}', forUpdate);
  }
  return out;
}

/** Tables a patch may change. */
export type PatchedTable = 'jobs' | 'runs' | 'outbox';

/**
 * `UPDATE table SET a = :a, … WHERE id = :id` for the defined keys of a patch (snake_case
 * columns, the patch's own keys as parameters); undefined when nothing is to change.
 */
export function updateStatement(
  table: PatchedTable,
  id: number,
  patch: Record<string, unknown>,
): { sql: string; params: Record<string, unknown> } | undefined {
  const keys = Object.keys(patch).filter((key) => patch[key] !== undefined);
  if (keys.length === 0) return undefined;
  const sets = keys.map((key) => `${key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)} = :${key}`);
  const params = Object.fromEntries(keys.map((key) => [key, patch[key]]));
  return { sql: `UPDATE ${table} SET ${sets.join(', ')} WHERE id = :id`, params: { ...params, id } };
}
