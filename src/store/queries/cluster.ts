import { STILL_STARTING, sqlList } from '../../domain/phases.js';

/**
 * Statements that decide which instance owns what: heartbeats, poll and delivery claims, the
 * claims on half-done work, and take-overs. Every time they compare or write for that is `{{now}}`, the store's own
 * clock (PostgreSQL's `clock_timestamp()`; on SQLite, one process, the process's clock), never a
 * time an instance sent: instances whose clocks disagree still agree on who owns what. Instances
 * send durations (`:timeoutMs`, `:leaseMs`). A `:now` that remains is a due time (when a poll or
 * a delivery is next wanted): it decides when work is done, never by whom.
 */

const STARTING = sqlList(STILL_STARTING);

/** Instances heard from within the last `:timeoutMs`. */
const ALIVE = 'SELECT id FROM instances WHERE heartbeat_at >= {{now}} - :timeoutMs';

/**
 * Whether a half-done row's owner has lost it: it stopped heartbeating and is not (as far as its
 * last claim says) inside a call for it.
 */
const OWNER_GONE = `(owner <> :instanceId AND owner NOT IN (${ALIVE})
        AND (owner_until IS NULL OR owner_until <= {{now}}))`;

/** A poll or delivery claim that has run out (or never was). */
const UNCLAIMED = '(claimed_until IS NULL OR claimed_until <= {{now}})';

export const CLUSTER_QUERIES = {
  /** Returns the store's time, which the instance compares with its own clock (see membership). */
  heartbeat: `
    INSERT INTO instances (id, started_at, heartbeat_at) VALUES (:instanceId, {{now}}, {{now}})
    ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at
    RETURNING heartbeat_at AS at`,
  retireInstance: 'DELETE FROM instances WHERE id = :instanceId',
  liveInstances: 'SELECT COUNT(*) AS n FROM instances WHERE heartbeat_at >= {{now}} - :timeoutMs',
  /** An instance that stops cleanly gives up its poll and delivery claims. */
  releasePollClaimsOf:
    'UPDATE jobs SET claimed_by = NULL, claimed_until = NULL WHERE claimed_by = :instanceId',
  releaseDeliveryClaimsOf:
    'UPDATE outbox SET claimed_by = NULL, claimed_until = NULL WHERE claimed_by = :instanceId',
  /**
   * Ends its claims on the jobs it was starting and the follow-ups it was sending: unless it
   * stopped with calls still under way, it is inside no call for them.
   */
  endJobClaimsOf: 'UPDATE jobs SET owner_until = NULL WHERE owner = :instanceId AND owner_until IS NOT NULL',
  endRunClaimsOf: 'UPDATE runs SET owner_until = NULL WHERE owner = :instanceId AND owner_until IS NOT NULL',
  /** Active jobs whose poll is due and that no instance has claimed; served by the index `jobs_due`. */
  dueJobs: `
    SELECT * FROM jobs
    WHERE phase = 'active' AND next_poll_at <= :now AND ${UNCLAIMED}
    ORDER BY next_poll_at LIMIT :limit`,
  /**
   * Claims due jobs for polling for `:leaseMs`. Taken in turns across channels (each channel's
   * most overdue job first, then each one's second, …), so a burst of jobs in one channel cannot
   * starve another's. On PostgreSQL the chosen rows are locked, skipping those a concurrent
   * claimer has locked, and re-checked: claimers never wait on each other nor take the same job.
   */
  claimDueJobs: `
    UPDATE jobs SET claimed_by = :instanceId, claimed_until = {{now}} + :leaseMs
    WHERE id IN (
      SELECT id FROM jobs
      WHERE id IN (
        SELECT id FROM (
          SELECT id, next_poll_at, ROW_NUMBER() OVER (PARTITION BY channel_id ORDER BY next_poll_at, id) AS turn
          FROM jobs
          WHERE phase = 'active' AND next_poll_at <= :now AND ${UNCLAIMED}
        ) due
        ORDER BY turn, next_poll_at, id LIMIT :limit)
        AND phase = 'active' AND ${UNCLAIMED}
      {{lock}})
    RETURNING *`,
  /** When the next unclaimed active job falls due; served by `jobs_due`. */
  nextDueAt: `
    SELECT MIN(next_poll_at) AS at FROM jobs
    WHERE phase = 'active' AND next_poll_at IS NOT NULL AND ${UNCLAIMED}`,
  releaseJob:
    'UPDATE jobs SET claimed_by = NULL, claimed_until = NULL WHERE id = :jobId AND claimed_by = :instanceId',
  /**
   * The claimer owns the batch, so a take-over finds all of it, and claims it for `:leaseMs` (the
   * follow-up call). A run sent counts as a use even if it somehow was never reserved.
   */
  claimReadyRuns: `
    UPDATE runs SET state = 'sending', sent_at = :now, owner = :instanceId, owner_until = {{now}} + :leaseMs,
      reserved_at = COALESCE(reserved_at, :now)
    WHERE job_id = :jobId AND state = 'ready' AND kind = 'follow_up'
    RETURNING *`,
  /** Extends the owner's claim on a job being started; no row when it is not (any more) the owner. */
  renewJobClaim: 'UPDATE jobs SET owner_until = {{now}} + :leaseMs WHERE id = :jobId AND owner = :instanceId',
  renewRunClaim: 'UPDATE runs SET owner_until = {{now}} + :leaseMs WHERE id = :runId AND owner = :instanceId',
  /** Extends a delivery claim; no row when the claim is no longer this instance's. */
  renewDeliveryClaim: `
    UPDATE outbox SET claimed_until = {{now}} + :leaseMs
    WHERE id = :outboxId AND claimed_by = :instanceId AND delivered_at IS NULL AND dead_at IS NULL`,
  // Take-over: `:instanceId` is the instance taking over, and who is alive is judged by the store's
  // clock. A poll is a read, safe to repeat: the poll claims of an instance not heard from are
  // released at once. A delivery claim is released only once it has run out: its claimant may be
  // frozen inside the post the claim covers. Half-done work is taken once its owner's claim has
  // run out.
  releaseDeadJobClaims: `
    UPDATE jobs SET claimed_by = NULL, claimed_until = NULL
    WHERE claimed_by IS NOT NULL AND claimed_by <> :instanceId AND claimed_by NOT IN (${ALIVE})`,
  releaseDeadOutboxClaims: `
    UPDATE outbox SET claimed_by = NULL, claimed_until = NULL
    WHERE claimed_by IS NOT NULL AND claimed_by <> :instanceId AND claimed_until <= {{now}}
      AND claimed_by NOT IN (${ALIVE})`,
  takeOverJobs: `
    UPDATE jobs SET owner = :instanceId, owner_until = NULL
    WHERE phase IN (${STARTING}) AND (owner IS NULL OR ${OWNER_GONE})
    RETURNING *`,
  takeOverRuns: `
    UPDATE runs SET owner = :instanceId, owner_until = NULL
    WHERE state IN ('pending', 'ready', 'sending') AND kind = 'follow_up' AND (owner IS NULL OR ${OWNER_GONE})
    RETURNING *`,
  /** The job goes back to the take-over round (see `takeOverJobs`). */
  handBackJob: `
    UPDATE jobs SET owner = NULL, owner_until = NULL
    WHERE id = :jobId AND owner = :instanceId AND phase IN (${STARTING})`,
  /** The follow-up goes back to the take-over round (see `takeOverRuns`). */
  handBackRun: `
    UPDATE runs SET owner = NULL, owner_until = NULL
    WHERE id = :runId AND owner = :instanceId AND state IN ('pending', 'ready', 'sending') AND kind = 'follow_up'`,
  forgetDeadInstances:
    'DELETE FROM instances WHERE heartbeat_at < {{now}} - :timeoutMs AND id <> :instanceId',
  /**
   * The metrics endpoint's figures in one statement (instances heard from within `:timeoutMs`);
   * the uses per project come from `instructionsSince`. Served by `jobs_due` and `outbox_due`,
   * whose rows are the work in flight.
   */
  figures: `
    SELECT
      (SELECT COUNT(*) FROM jobs WHERE phase = 'active') AS active_jobs,
      (SELECT MIN(next_poll_at) FROM jobs WHERE phase = 'active') AS earliest_poll_at,
      (SELECT COUNT(*) FROM outbox WHERE delivered_at IS NULL AND dead_at IS NULL) AS outbox_backlog,
      (SELECT MIN(created_at) FROM outbox WHERE delivered_at IS NULL AND dead_at IS NULL)
        AS oldest_undelivered_at,
      (SELECT COUNT(*) FROM instances WHERE heartbeat_at >= {{now}} - :timeoutMs) AS live_instances`,
} as const;
