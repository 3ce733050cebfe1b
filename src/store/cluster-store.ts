import type { Orphans } from './changes.js';
import type { JobRecord, OutboxItem, RunRecord } from './records.js';
import { parseAt, parseCount, parseJob, parseOutboxItem } from './rows.js';
import type { Statements } from './statements.js';

/** Work an instance holds while it calls out for it (see {@link ClusterStore.renewHold}). */
export type HeldWork = { jobId: number } | { runIds: number[] } | { outboxId: number };

/**
 * The store's part in sharing work between instances: heartbeats, claims, holds and take-overs.
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
   * Forgets an instance that stopped cleanly and ends its claims, so others take over at once.
   * Its holds end too, unless `keepHolds` (it stops with calls still under way: what they guard is
   * taken over only once their holds run out).
   */
  retireInstance(instanceId: string, options?: { keepHolds?: boolean }): Promise<void>;
  /**
   * Takes over what instances not heard from within `timeoutMs` left behind (and half-done work
   * with no owner): releases their poll and delivery claims once those have run out, makes their
   * half-done jobs and follow-ups `instanceId`'s once the holds on those have run out (their owner
   * may be frozen inside a call), and returns those for recovery. Concurrent callers never take the
   * same row. `instanceId` itself always counts as alive. On a store only one process uses
   * (SQLite) every other instance is an earlier run that is gone: its work is taken at once.
   */
  takeOverOrphans(instanceId: string, timeoutMs: number): Promise<Orphans>;
  /**
   * Gives back work `instanceId` holds but has no room to carry on now: those of the jobs still
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
   * owned by `instanceId` and held for `leaseMs` (the call that sends it). Concurrent callers never
   * get the same run.
   */
  claimReadyRuns(jobId: number, instanceId: string, now: number, leaseMs: number): Promise<RunRecord[]>;
  /**
   * Claims up to `limit` of the undelivered items due by `now` for `instanceId` for `leaseMs`, and
   * starts an attempt on each: `attempts` counts it and `startedAt` is `now`.
   */
  claimOutbox(instanceId: string, now: number, limit: number, leaseMs: number): Promise<OutboxItem[]>;
  /**
   * Extends `instanceId`'s hold on work for `leaseMs` from now (the store's clock), right before a
   * call for it that must not be made twice. False, and nothing changed, when the work is no longer
   * its own (taken over, or delivered): the call must not be made.
   */
  renewHold(instanceId: string, work: HeldWork, leaseMs: number): Promise<boolean>;
}

/** The cluster methods that are one statement each, written once ({@link clusterMethods}). */
export type ClusterStatementMethods = Pick<
  ClusterStore,
  'heartbeat' | 'liveInstances' | 'claimDueJobs' | 'releaseJob' | 'claimOutbox'
>;
/** The rest, which each engine runs in its own transactions. */
export type TransactedClusterMethods = Omit<ClusterStore, keyof ClusterStatementMethods>;

/**
 * Heartbeats and the claims that are one statement each, written once for both engines over their
 * {@link Statements}. Claims come back in the order they fall due, ties by id, whatever order the
 * engine's `RETURNING` gave.
 */
export function clusterMethods(run: Pick<Statements, 'one' | 'many' | 'write'>): ClusterStatementMethods {
  return {
    async heartbeat(instanceId) {
      const at = (await run.one('heartbeat', { instanceId }, parseAt))?.at;
      if (at === undefined || at === null) throw new Error('the heartbeat returned no time');
      return at;
    },
    liveInstances: async (timeoutMs) => (await run.one('liveInstances', { timeoutMs }, parseCount))?.n ?? 0,
    async claimDueJobs(instanceId, now, limit, leaseMs) {
      const claimed = await run.many('claimDueJobs', { instanceId, now, limit, leaseMs }, parseJob);
      return claimed.sort((a, b) => (a.nextPollAt ?? 0) - (b.nextPollAt ?? 0) || a.id - b.id);
    },
    async releaseJob(jobId, instanceId) {
      await run.write('releaseJob', { jobId, instanceId });
    },
    async claimOutbox(instanceId, now, limit, leaseMs) {
      const claimed = await run.many('claimOutbox', { instanceId, now, limit, leaseMs }, parseOutboxItem);
      return claimed.sort((a, b) => a.nextAttemptAt - b.nextAttemptAt || a.id - b.id);
    },
  };
}
