import type Database from 'better-sqlite3';
import type { ClusterStore } from '../cluster-store.js';
import type { Params } from '../queries/named.js';
import type { QueryName } from '../queries.js';
import { parseAt, parseCount, parseJob, parseOutboxItem, parseRun, type Row } from '../rows.js';

/**
 * The store's clock when a take-over is decided on SQLite: later than any heartbeat, claim or
 * hold. One process uses the file, so every other instance on record is an earlier run of it that
 * is gone, whatever the clock says, and nothing it held is still under way.
 */
const END_OF_TIME = Number.MAX_SAFE_INTEGER;

interface Statements {
  db: Database.Database;
  one<T>(name: QueryName, params: Params, parse: (row: Row) => T): T | undefined;
  many<T>(name: QueryName, params: Params, parse: (row: Row) => T): T[];
  write(name: QueryName, params: Params): number;
}

/**
 * Heartbeats, claims, holds and take-overs on SQLite. The statements' `{{now}}` is the `:clock`
 * parameter, which the store's statement helpers fill with its `now` dependency (the process's
 * clock: the only one a file one process uses has).
 */
export function sqliteCluster({ db, one, many, write }: Statements): ClusterStore {
  const byId = <T extends { id: number }>(records: T[]) => records.sort((a, b) => a.id - b.id);

  const adoptTx = db.transaction((instanceId: string, timeoutMs: number) => {
    const params = { instanceId, timeoutMs, clock: END_OF_TIME };
    write('releaseDeadJobClaims', params);
    write('releaseDeadOutboxClaims', params);
    const jobs = byId(many('adoptJobs', params, parseJob));
    const runs = byId(many('adoptRuns', params, parseRun));
    write('forgetDeadInstances', params);
    return { jobs, runs };
  });
  const handBackTx = db.transaction((instanceId: string, work: { jobIds: number[]; runIds: number[] }) => {
    for (const jobId of work.jobIds) write('releaseJobWork', { jobId, instanceId });
    for (const runId of work.runIds) write('releaseRunWork', { runId, instanceId });
  });
  const retireTx = db.transaction((instanceId: string, keepHolds: boolean) => {
    write('retireInstance', { instanceId });
    write('releaseJobsOf', { instanceId });
    write('releaseOutboxOf', { instanceId });
    if (keepHolds) return;
    write('endJobHoldsOf', { instanceId });
    write('endRunHoldsOf', { instanceId });
  });
  const holdRunsTx = db.transaction((instanceId: string, runIds: number[], leaseMs: number) => {
    let held = 0;
    for (const runId of runIds) held += write('holdRun', { runId, instanceId, leaseMs });
    return held === runIds.length;
  });

  return {
    async heartbeat(instanceId) {
      const at = one('heartbeat', { instanceId }, parseAt)?.at;
      if (at === undefined || at === null) throw new Error('the heartbeat returned no time');
      return at;
    },
    liveInstances: async (timeoutMs) => one('liveInstances', { timeoutMs }, parseCount)?.n ?? 0,
    async retireInstance(instanceId, options = {}) {
      retireTx.immediate(instanceId, options.keepHolds === true);
    },
    takeOverOrphans: async (instanceId, timeoutMs) => adoptTx.immediate(instanceId, timeoutMs),
    async handBack(instanceId, work) {
      handBackTx.immediate(instanceId, work);
    },
    async claimDueJobs(instanceId, now, limit, leaseMs) {
      const claimed = many('claimDueJobs', { instanceId, now, limit, leaseMs }, parseJob);
      return claimed.sort((a, b) => (a.nextPollAt ?? 0) - (b.nextPollAt ?? 0) || a.id - b.id);
    },
    async releaseJob(jobId, instanceId) {
      write('releaseJob', { jobId, instanceId });
    },
    async claimReadyRuns(jobId, instanceId, now, leaseMs) {
      return db
        .transaction(() => many('claimReadyRuns', { jobId, now, instanceId, leaseMs }, parseRun))
        .immediate()
        .sort((a, b) => a.seq - b.seq);
    },
    async claimOutbox(instanceId, now, limit, leaseMs) {
      const claimed = many('claimOutbox', { instanceId, now, limit, leaseMs }, parseOutboxItem);
      return claimed.sort((a, b) => a.nextAttemptAt - b.nextAttemptAt || a.id - b.id);
    },
    async renewHold(instanceId, work, leaseMs) {
      if ('jobId' in work) return write('holdJob', { jobId: work.jobId, instanceId, leaseMs }) === 1;
      if ('outboxId' in work)
        return write('holdOutbox', { outboxId: work.outboxId, instanceId, leaseMs }) === 1;
      return holdRunsTx.immediate(instanceId, work.runIds, leaseMs);
    },
  };
}
