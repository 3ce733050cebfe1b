import { FINISHED, STILL_STARTING, sqlList, THREAD_RELEASING_PHASES } from '../jobs/phases.js';
import type { Dialect } from './schema.js';
import type { NewJob } from './types.js';

/**
 * Queries whose text is the same on SQLite and PostgreSQL, written with PostgreSQL's `$1`
 * placeholders. `{{lock}}` marks where PostgreSQL takes row locks that concurrent claimers skip;
 * SQLite has a single writer and needs none.
 */
// The phase sets the queries filter on, written once with the job's phases.
const RELEASING = sqlList(THREAD_RELEASING_PHASES);
const ERASABLE = sqlList(FINISHED);
const STARTING = sqlList(STILL_STARTING);

const SHARED = {
  insertJob: `
    INSERT INTO jobs (team_id, channel_id, requester_id, instruction, trigger_key, response_url, phase,
      poll_interval_ms, owner, origin, project_id, thread_ts, context_ts, created_at, updated_at)
    VALUES ($1, $2, $3, $4, $5, $6, 'accepted', $7, $8, $9, $10, $11, $12, $13, $13)
    ON CONFLICT (trigger_key) DO NOTHING`,
  jobByThread: 'SELECT * FROM jobs WHERE channel_id = $1 AND thread_ts = $2',
  readyRuns: "SELECT * FROM runs WHERE state = 'ready' AND job_id = $1 AND kind = 'follow_up' ORDER BY seq",
  /**
   * ($1 job, $2 now, $3 instance): the claimer owns the batch, so a take-over finds all of it. A
   * run sent counts as a use even if it somehow was never reserved.
   */
  claimReadyRuns: `
    UPDATE runs SET state = 'sending', sent_at = $2, owner = $3, reserved_at = COALESCE(reserved_at, $2)
    WHERE job_id = $1 AND state = 'ready' AND kind = 'follow_up'
    RETURNING *`,
  /** A job that never ran, or that the agent API forgot, gives its thread up to a new job. */
  /** ($1 job, $2 the new job's trigger key): the same start seen again keeps its own thread. */
  detachThread: `
    UPDATE jobs SET thread_ts = NULL
    WHERE id = $1 AND phase IN (${RELEASING}) AND trigger_key <> $2`,
  recentJobsOfRequester:
    'SELECT * FROM jobs WHERE requester_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2',
  recentJobsOfChannel: 'SELECT * FROM jobs WHERE channel_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2',
  /**
   * Served by `runs_reserved`: the uses of the agent API counted in the window ($1 since), per
   * project. A reserved run counts until it ends `failed` (surely never sent).
   */
  instructionsSince: `
    SELECT uses.project_id AS project_id, COUNT(*) AS n FROM (
      SELECT DISTINCT j.project_id AS project_id, {{use}} AS use_key
      FROM runs r JOIN jobs j ON j.id = r.job_id
      WHERE r.reserved_at >= $1 AND r.state <> 'failed') uses
    GROUP BY uses.project_id`,
  /** A person's uses counted in the window ($1 person, $2 since); served by `runs_reserved_by`. */
  recentInstructions: `
    SELECT COUNT(*) AS n, MIN(reserved_at) AS oldest FROM runs
    WHERE author_id = $1 AND reserved_at >= $2 AND state <> 'failed'`,
  /** One project's uses counted in the window ($1 since, $2 the default project, $3 the project). */
  projectUses: `
    SELECT COUNT(DISTINCT {{use}}) AS n, MIN(r.reserved_at) AS oldest
    FROM runs r JOIN jobs j ON j.id = r.job_id
    WHERE r.reserved_at >= $1 AND r.state <> 'failed' AND COALESCE(j.project_id, $2) = $3`,
  /** Whom and which project a run's use counts against ($1 run, $2 the default project). */
  useOfRun: `
    SELECT r.author_id AS author_id, r.reserved_at AS reserved_at, COALESCE(j.project_id, $2) AS project
    FROM runs r JOIN jobs j ON j.id = r.job_id WHERE r.id = $1`,
  reserveRun: 'UPDATE runs SET reserved_at = $2 WHERE id = $1 AND reserved_at IS NULL',
  /**
   * Retention ($1 before, $2 limit): finished jobs unchanged since before $1 that still hold text
   * (never erased, or a later reply's prompt), with no run open and nothing left to deliver.
   * Served by `jobs_finished`.
   */
  expiredJobs: `
    SELECT j.id AS id FROM jobs j
    WHERE j.phase IN (${ERASABLE}) AND j.updated_at < $1
      AND (j.erased_at IS NULL OR EXISTS (SELECT 1 FROM runs r WHERE r.job_id = j.id AND r.prompt <> ''))
      AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.job_id = j.id AND r.state IN ('pending', 'ready', 'sending'))
      AND NOT EXISTS (
        SELECT 1 FROM outbox o WHERE o.job_id = j.id AND o.delivered_at IS NULL AND o.dead_at IS NULL)
    ORDER BY j.updated_at LIMIT $2`,
  /**
   * ($1 job, $2 before, $3 erased text, $4 now): re-checked here, so a job that moved on since it
   * was chosen keeps its texts.
   */
  eraseJob: `
    UPDATE jobs SET instruction = $3, response_url = NULL, erased_at = $4
    WHERE id = $1 AND updated_at < $2 AND phase IN (${ERASABLE})`,
  /** ($1 job, $2 before): a reply recorded after the job was chosen keeps its text. */
  eraseRuns: `
    UPDATE runs SET prompt = ''
    WHERE job_id = $1 AND prompt <> '' AND created_at < $2 AND state NOT IN ('pending', 'ready', 'sending')`,
  /**
   * Outbox items delivered or abandoned before $1, at most $2. The newest item always stays: on
   * SQLite a deleted highest id would be handed out again, and ids name messages in Slack.
   */
  deleteDoneOutbox: `
    DELETE FROM outbox WHERE id IN (
      SELECT id FROM outbox
      WHERE (delivered_at < $1 OR dead_at < $1) AND id < (SELECT MAX(id) FROM outbox)
      LIMIT $2)`,
  deleteOldHomeViews: 'DELETE FROM home_views WHERE opened_at < $1',
  setRootReaction: 'UPDATE jobs SET root_reaction = $2 WHERE id = $1',
  latestCardUpdate: `
    SELECT MAX(id) AS id FROM outbox
    WHERE job_id = $1 AND kind = 'update_root' AND delivered_at IS NULL AND dead_at IS NULL`,
  supersedeCardUpdates: `
    UPDATE outbox SET delivered_at = $4, claimed_by = NULL, claimed_until = NULL
    WHERE job_id = $1 AND kind = 'update_root' AND id <= $2 AND delivered_at IS NULL AND dead_at IS NULL
      AND (claimed_by IS NULL OR claimed_by = $3)`,
  recordHomeOpened: `
    INSERT INTO home_views (user_id, team_id, opened_at) VALUES ($1, $2, $3)
    ON CONFLICT (user_id) DO UPDATE SET opened_at = excluded.opened_at`,
  homeOpened: 'SELECT 1 AS seen FROM home_views WHERE user_id = $1',
  /** Active jobs whose poll is due and that no instance holds; served by the index `jobs_due`. */
  dueJobs: `
    SELECT * FROM jobs
    WHERE phase = 'active' AND next_poll_at <= $1 AND (claimed_until IS NULL OR claimed_until <= $1)
    ORDER BY next_poll_at LIMIT $2`,
  /**
   * Claims due jobs for polling: ($1 instance, $2 now, $3 limit, $4 claimed until). Taken in
   * turns across channels (each channel's most overdue job first, then each one's second, …),
   * so a burst of jobs in one channel cannot starve another's. On PostgreSQL the chosen rows are
   * locked skipping those a concurrent claimer holds, and re-checked, so claimers never wait on
   * each other and never take the same job.
   */
  claimDueJobs: `
    UPDATE jobs SET claimed_by = $1, claimed_until = $4
    WHERE id IN (
      SELECT id FROM jobs
      WHERE id IN (
        SELECT id FROM (
          SELECT id, next_poll_at, ROW_NUMBER() OVER (PARTITION BY channel_id ORDER BY next_poll_at, id) AS turn
          FROM jobs
          WHERE phase = 'active' AND next_poll_at <= $2 AND (claimed_until IS NULL OR claimed_until <= $2)
        ) due
        ORDER BY turn, next_poll_at, id LIMIT $3)
        AND phase = 'active' AND (claimed_until IS NULL OR claimed_until <= $2)
      {{lock}})
    RETURNING *`,
  /** When the next unclaimed active job falls due ($1 now); served by `jobs_due`. */
  nextDueAt: `
    SELECT MIN(next_poll_at) AS at FROM jobs
    WHERE phase = 'active' AND next_poll_at IS NOT NULL AND (claimed_until IS NULL OR claimed_until <= $1)`,
  releaseJob: 'UPDATE jobs SET claimed_by = NULL, claimed_until = NULL WHERE id = $1 AND claimed_by = $2',
  heartbeat: `
    INSERT INTO instances (id, started_at, heartbeat_at) VALUES ($1, $2, $2)
    ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at`,
  retireInstance: 'DELETE FROM instances WHERE id = $1',
  liveInstances: 'SELECT COUNT(*) AS n FROM instances WHERE heartbeat_at >= $1',
  /**
   * The metrics endpoint's figures in one statement ($1 live since); the uses per project come
   * from `instructionsSince`. Served by `jobs_due` and `outbox_due`, whose rows are the work in
   * flight.
   */
  figures: `
    SELECT
      (SELECT COUNT(*) FROM jobs WHERE phase = 'active') AS active_jobs,
      (SELECT MIN(next_poll_at) FROM jobs WHERE phase = 'active') AS earliest_poll_at,
      (SELECT COUNT(*) FROM outbox WHERE delivered_at IS NULL AND dead_at IS NULL) AS outbox_backlog,
      (SELECT MIN(created_at) FROM outbox WHERE delivered_at IS NULL AND dead_at IS NULL)
        AS oldest_undelivered_at,
      (SELECT COUNT(*) FROM instances WHERE heartbeat_at >= $1) AS live_instances`,
  releaseJobsOf: 'UPDATE jobs SET claimed_by = NULL, claimed_until = NULL WHERE claimed_by = $1',
  releaseOutboxOf: 'UPDATE outbox SET claimed_by = NULL, claimed_until = NULL WHERE claimed_by = $1',
  // Adoption: $1 is the adopting instance, $2 the heartbeat time before which an instance is gone.
  releaseDeadJobClaims: `
    UPDATE jobs SET claimed_by = NULL, claimed_until = NULL
    WHERE claimed_by IS NOT NULL AND claimed_by <> $1 AND claimed_by NOT IN ({{alive}})`,
  releaseDeadOutboxClaims: `
    UPDATE outbox SET claimed_by = NULL, claimed_until = NULL
    WHERE claimed_by IS NOT NULL AND claimed_by <> $1 AND claimed_by NOT IN ({{alive}})`,
  adoptJobs: `
    UPDATE jobs SET owner = $1
    WHERE phase IN (${STARTING})
      AND (owner IS NULL OR (owner <> $1 AND owner NOT IN ({{alive}})))
    RETURNING *`,
  adoptRuns: `
    UPDATE runs SET owner = $1
    WHERE state IN ('pending', 'ready', 'sending') AND kind = 'follow_up'
      AND (owner IS NULL OR (owner <> $1 AND owner NOT IN ({{alive}})))
    RETURNING *`,
  /** ($1 job, $2 instance): the job goes back to the take-over round (see `adoptJobs`). */
  releaseJobWork: `
    UPDATE jobs SET owner = NULL
    WHERE id = $1 AND owner = $2 AND phase IN (${STARTING})`,
  /** ($1 run, $2 instance): the follow-up goes back to the take-over round (see `adoptRuns`). */
  releaseRunWork: `
    UPDATE runs SET owner = NULL
    WHERE id = $1 AND owner = $2 AND state IN ('pending', 'ready', 'sending') AND kind = 'follow_up'`,
  forgetDeadInstances: 'DELETE FROM instances WHERE heartbeat_at < $2 AND id <> $1',
  /**
   * Claims due outbox items and starts an attempt on each (counted, `started_at` set): ($1
   * instance, $2 now, $3 limit, $4 claimed until).
   */
  claimOutbox: `
    UPDATE outbox SET claimed_by = $1, claimed_until = $4, attempts = attempts + 1, started_at = $2
    WHERE id IN (
      SELECT o.id FROM outbox o
      WHERE o.delivered_at IS NULL AND o.dead_at IS NULL AND o.next_attempt_at <= $2
        AND (o.claimed_until IS NULL OR o.claimed_until <= $2) AND {{held}}
      ORDER BY o.next_attempt_at, o.id LIMIT $3 {{lock}})
    RETURNING *`,
  /**
   * Due outbox items. A thread post waits for earlier undelivered posts of its job (order in the
   * thread); the check is served by the partial index `outbox_job_pending`.
   */
  dueOutbox: `
    SELECT * FROM outbox o
    WHERE o.delivered_at IS NULL AND o.dead_at IS NULL AND o.next_attempt_at <= $1
      AND (o.claimed_until IS NULL OR o.claimed_until <= $1) AND {{held}}
    ORDER BY o.next_attempt_at, o.id LIMIT $2`,
  /** When the next deliverable item can be taken: items held back behind an earlier post do not count. */
  nextOutboxAt: `
    SELECT MIN(CASE WHEN o.claimed_until > o.next_attempt_at THEN o.claimed_until ELSE o.next_attempt_at END) AS at
    FROM outbox o WHERE o.delivered_at IS NULL AND o.dead_at IS NULL AND {{held}}`,
} as const;

/** The arguments of the `insertJob` query. */
export const newJobArgs = (job: NewJob, now: number): unknown[] => [
  job.teamId,
  job.channelId,
  job.requesterId,
  job.instruction,
  job.triggerKey,
  job.responseUrl,
  job.pollIntervalMs,
  job.owner ?? null,
  job.origin ?? 'command',
  job.projectId ?? null,
  job.threadTs ?? null,
  job.contextTs ?? null,
  now,
];

/** Instances heard from since $2. */
const ALIVE = 'SELECT id FROM instances WHERE heartbeat_at >= $2';

/**
 * A thread post is held back while an earlier post of its job is undelivered, and a status card
 * update while an earlier update of its card is (so an older rendering never lands last). Served
 * by the partial indexes `outbox_job_pending` and `outbox_job_card`.
 */
const HELD = `(o.job_id IS NULL OR o.kind NOT IN ('post', 'update_root') OR NOT EXISTS (
        SELECT 1 FROM outbox p
        WHERE p.job_id = o.job_id AND p.id < o.id AND p.delivered_at IS NULL AND p.dead_at IS NULL
          AND p.kind = 'post' AND o.kind = 'post')
      AND NOT EXISTS (
        SELECT 1 FROM outbox p
        WHERE p.job_id = o.job_id AND p.id < o.id AND p.delivered_at IS NULL AND p.dead_at IS NULL
          AND p.kind = 'update_root' AND o.kind = 'update_root'))`;

/**
 * What one use of the agent API is, per run: a run reserved and not yet sent is one; replies sent
 * together (one batch: one job, one send time) were one call.
 */
const USE = `CASE WHEN r.sent_at IS NULL THEN 'run ' || CAST(r.id AS TEXT)
      ELSE 'call ' || CAST(r.job_id AS TEXT) || ' ' || CAST(r.sent_at AS TEXT) END`;

export type QueryName = keyof typeof SHARED;

/** The shared queries in one dialect: SQLite binds `$1` as the named parameter `@p1`. */
export function queriesFor(dialect: Dialect): Record<QueryName, string> {
  const lock = dialect === 'postgres' ? 'FOR UPDATE SKIP LOCKED' : '';
  const out = {} as Record<QueryName, string>;
  for (const [name, sql] of Object.entries(SHARED) as [QueryName, string][]) {
    const filled = sql
      .replace('{{held}}', HELD)
      .replace('{{lock}}', lock)
      .replace('{{alive}}', ALIVE)
      .replace('{{use}}', USE);
    out[name] = dialect === 'sqlite' ? filled.replace(/\$(\d+)/g, '@p$1') : filled;
  }
  return out;
}

/** Positional arguments as the named parameters `p1`, `p2`, … of {@link queriesFor}'s SQLite text. */
export const sqliteArgs = (args: unknown[]): Record<string, unknown> =>
  Object.fromEntries(args.map((value, i) => [`p${i + 1}`, value]));
