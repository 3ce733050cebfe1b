import { STILL_STARTING, sqlList } from '../domain/phases.js';
import type { JobRecord, Orphans, OutboxItem, RunRecord } from './records.js';
import { parseAt, parseCount, parseJob, parseOutboxItem, parseRun } from './rows.js';
import { type Engine, type Operation, tx } from './statements.js';

/** Work an instance has claimed while it calls out for it (see {@link ClusterStore.renewClaim}). */
export type ClaimedWork = { jobId: number } | { runIds: number[] } | { outboxId: number };

/**
 * The store's part in sharing work between instances: heartbeats, claims and take-overs.
 * Every decision about who owns what is timed by the store's clock (PostgreSQL's, or on SQLite the
 * one process's), never by a time an instance sends: callers give durations (a time-out, a lease
 * length), so instances whose clocks disagree still agree on who owns what. A `now` argument that
 * remains is a due time (when a poll or a delivery is wanted): it says when, never who.
 */
export interface ClusterStore {
  /**
   * Records that an instance is alive now (registering it the first time) and returns the
   * store's time of that heartbeat (epoch ms), which the instance compares with its own clock.
   */
  heartbeat(instanceId: string): Promise<number>;
  /** How many instances were heard from within the last `timeoutMs`. */
  liveInstances(timeoutMs: number): Promise<number>;
  /**
   * Forgets an instance that stopped cleanly and ends its claims, so others take over at once;
   * but with `callsUnderWay` (it stops with calls still under way), its claims on the jobs it was
   * starting and the follow-ups it was sending stay, and they are taken over once those run out.
   */
  retireInstance(instanceId: string, options?: { callsUnderWay?: boolean }): Promise<void>;
  /**
   * Takes over what instances not heard from within `timeoutMs` left behind (and half-done work
   * with no owner): releases their poll and delivery claims once those have run out, makes their
   * half-done jobs and follow-ups `instanceId`'s once the claims on those have run out (their owner
   * may be frozen inside a call), and returns those for recovery. Concurrent callers never take the
   * same row. `instanceId` itself always counts as alive. On a store only one process uses
   * (SQLite) every other instance is an earlier run that is gone: its work is taken at once.
   */
  takeOverOrphans(instanceId: string, timeoutMs: number): Promise<Orphans>;
  /**
   * Gives back work `instanceId` owns but has no room to go on with now: those of the jobs still
   * to be started (`accepted`, `posting`, `creating`) and follow-ups still to be sent
   * (`pending`, `ready`, `sending`) that it owns lose their owner, so the next
   * {@link ClusterStore.takeOverOrphans} round, of any instance, takes them. Others are left as they are.
   */
  handBack(instanceId: string, work: { jobIds: number[]; runIds: number[] }): Promise<void>;
  /**
   * Claims up to `limit` active jobs whose poll is due by `now` (a due time) for `instanceId`,
   * for `leaseMs`, so no other instance polls them meanwhile; concurrent claimers never get the
   * same job.
   */
  claimDueJobs(instanceId: string, now: number, limit: number, leaseMs: number): Promise<JobRecord[]>;
  /** Ends `instanceId`'s poll claim on a job (a no-op if the claim is not, or no longer, its own). */
  releaseJob(jobId: number, instanceId: string): Promise<void>;
  /**
   * Moves every `ready` follow-up of a job to `sending` and returns them, oldest first: one batch,
   * owned by `instanceId` and claimed for `leaseMs` (the call that sends it). Concurrent callers never
   * get the same run.
   */
  claimReadyRuns(jobId: number, instanceId: string, now: number, leaseMs: number): Promise<RunRecord[]>;
  /**
   * Claims up to `limit` of the undelivered items due by `now` for `instanceId` for `leaseMs`, and
   * starts an attempt on each: `attempts` counts it and `startedAt` is `now`.
   */
  claimOutbox(instanceId: string, now: number, limit: number, leaseMs: number): Promise<OutboxItem[]>;
  /**
   * Extends `instanceId`'s claim on work for `leaseMs` from now (the store's clock), right before a
   * call for it that must not be made twice. False, and nothing changed, when the work is no longer
   * its own (taken over, or delivered): the call must not be made.
   */
  renewClaim(instanceId: string, work: ClaimedWork, leaseMs: number): Promise<boolean>;
}

/*
 * The statements that decide which instance owns what (heartbeats, poll and delivery claims, the
 * claims on half-done work, and take-overs), one text for SQLite and PostgreSQL. Every time they
 * compare or write for that is `{{now}}`, the store's own clock (PostgreSQL's
 * `clock_timestamp()`; on SQLite, one process, the process's clock), never a time an instance
 * sent: instances whose clocks disagree still agree on who owns what. Instances send durations
 * (`:timeoutMs`, `:leaseMs`). A `:now` that remains is a due time (when a poll or a delivery is
 * next wanted): it decides when work is done, never by whom.
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
  releasePullRequestClaimsOf:
    'UPDATE pull_requests SET claimed_by = NULL, claimed_until = NULL WHERE claimed_by = :instanceId',
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
  // clock. A poll is a read, safe to repeat: the poll claims (and pull request checks) of an
  // instance not heard from are released at once. A delivery claim is released only once it has run out: its claimant may be
  // frozen inside the post the claim covers. Half-done work is taken once its owner's claim has
  // run out.
  releaseDeadJobClaims: `
    UPDATE jobs SET claimed_by = NULL, claimed_until = NULL
    WHERE claimed_by IS NOT NULL AND claimed_by <> :instanceId AND claimed_by NOT IN (${ALIVE})`,
  /** A pull request's check is a read too: released at once, like a poll. */
  releaseDeadPullRequestClaims: `
    UPDATE pull_requests SET claimed_by = NULL, claimed_until = NULL
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
} as const;

/**
 * The store's clock when a take-over is decided on a store only one process uses (SQLite): later
 * than any heartbeat or claim. Every other instance on record is an earlier run of that process,
 * gone whatever the clock says, and nothing it claimed is still under way.
 */
const END_OF_TIME = Number.MAX_SAFE_INTEGER;

const byId = <T extends { id: number }>(records: T[]) => records.sort((a, b) => a.id - b.id);

/** See {@link ClusterStore.takeOverOrphans}. */
function* takeOver(instanceId: string, timeoutMs: number, shared: boolean): Operation<Orphans> {
  yield* tx.lock('takeOverLockPostgres', {});
  const params = shared ? { instanceId, timeoutMs } : { instanceId, timeoutMs, clock: END_OF_TIME };
  yield* tx.write('releaseDeadJobClaims', params);
  yield* tx.write('releaseDeadPullRequestClaims', params);
  yield* tx.write('releaseDeadOutboxClaims', params);
  const jobs = yield* tx.many('takeOverJobs', params, parseJob);
  const runs = yield* tx.many('takeOverRuns', params, parseRun);
  yield* tx.write('forgetDeadInstances', params);
  return { jobs: byId(jobs), runs: byId(runs) };
}

/** See {@link ClusterStore.retireInstance}. */
function* retire(instanceId: string, callsUnderWay: boolean): Operation<void> {
  yield* tx.write('retireInstance', { instanceId });
  yield* tx.write('releasePollClaimsOf', { instanceId });
  yield* tx.write('releaseDeliveryClaimsOf', { instanceId });
  yield* tx.write('releasePullRequestClaimsOf', { instanceId });
  if (callsUnderWay) return;
  yield* tx.write('endJobClaimsOf', { instanceId });
  yield* tx.write('endRunClaimsOf', { instanceId });
}

/** See {@link ClusterStore.handBack}. */
function* handBack(instanceId: string, work: { jobIds: number[]; runIds: number[] }): Operation<void> {
  for (const jobId of work.jobIds) yield* tx.write('handBackJob', { jobId, instanceId });
  for (const runId of work.runIds) yield* tx.write('handBackRun', { runId, instanceId });
}

/** A batch's claims renewed together: true only when every run is still `instanceId`'s. */
function* renewRunClaims(instanceId: string, runIds: number[], leaseMs: number): Operation<boolean> {
  let renewed = 0;
  for (const runId of runIds) renewed += yield* tx.write('renewRunClaim', { runId, instanceId, leaseMs });
  return renewed === runIds.length;
}

/**
 * The store's part in sharing work, written once for both engines over their {@link Engine}:
 * heartbeats and the claims of one statement each, and the take-overs, hand-backs and batch
 * renewals in one transaction each. Claims come back in the order they fall due (a batch in the
 * order of its runs), ties by id, whatever order the engine's `RETURNING` gave.
 */
export function clusterMethods(engine: Engine): ClusterStore {
  return {
    async heartbeat(instanceId) {
      const at = (await engine.one('heartbeat', { instanceId }, parseAt))?.at;
      if (at === undefined || at === null) throw new Error('the heartbeat returned no time');
      return at;
    },
    liveInstances: async (timeoutMs) =>
      (await engine.one('liveInstances', { timeoutMs }, parseCount))?.n ?? 0,
    retireInstance: (instanceId, options = {}) =>
      engine.transaction(retire(instanceId, options.callsUnderWay === true)),
    takeOverOrphans: (instanceId, timeoutMs) =>
      engine.transaction(takeOver(instanceId, timeoutMs, engine.shared)),
    handBack: (instanceId, work) => engine.transaction(handBack(instanceId, work)),
    async claimDueJobs(instanceId, now, limit, leaseMs) {
      const claimed = await engine.many('claimDueJobs', { instanceId, now, limit, leaseMs }, parseJob);
      return claimed.sort((a, b) => (a.nextPollAt ?? 0) - (b.nextPollAt ?? 0) || a.id - b.id);
    },
    async releaseJob(jobId, instanceId) {
      await engine.write('releaseJob', { jobId, instanceId });
    },
    async claimReadyRuns(jobId, instanceId, now, leaseMs) {
      const claimed = await engine.many('claimReadyRuns', { jobId, now, instanceId, leaseMs }, parseRun);
      return claimed.sort((a, b) => a.seq - b.seq);
    },
    async claimOutbox(instanceId, now, limit, leaseMs) {
      const claimed = await engine.many('claimOutbox', { instanceId, now, limit, leaseMs }, parseOutboxItem);
      return claimed.sort((a, b) => a.nextAttemptAt - b.nextAttemptAt || a.id - b.id);
    },
    async renewClaim(instanceId, work, leaseMs) {
      if ('jobId' in work)
        return (await engine.write('renewJobClaim', { jobId: work.jobId, instanceId, leaseMs })) === 1;
      if ('outboxId' in work)
        return (
          (await engine.write('renewDeliveryClaim', { outboxId: work.outboxId, instanceId, leaseMs })) === 1
        );
      return engine.transaction(renewRunClaims(instanceId, work.runIds, leaseMs));
    },
  };
}
