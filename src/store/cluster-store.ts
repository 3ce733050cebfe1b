import type { Orphans } from './changes.js';
import type { JobRecord, OutboxItem, RunRecord } from './records.js';
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
