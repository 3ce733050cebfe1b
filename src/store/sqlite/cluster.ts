import type Database from 'better-sqlite3';
import type { TransactedClusterMethods } from '../cluster-store.js';
import type { Params } from '../queries/named.js';
import type { QueryName } from '../queries.js';
import { parseJob, parseRun, type Row } from '../rows.js';

/**
 * The store's clock when a take-over is decided on SQLite: later than any heartbeat, claim or
 * hold. One process uses the file, so every other instance on record is an earlier run of it that
 * is gone, whatever the clock says, and nothing it held is still under way.
 */
const END_OF_TIME = Number.MAX_SAFE_INTEGER;

interface Statements {
  db: Database.Database;
  many<T>(name: QueryName, params: Params, parse: (row: Row) => T): T[];
  write(name: QueryName, params: Params): number;
}

/**
 * Take-overs, batch claims and holds on SQLite, each in one transaction (heartbeats and the claims
 * that are one statement are written once, in `cluster-store.ts`). The statements' `{{now}}` is the `:clock`
 * parameter, which the store's statement helpers fill with its `now` dependency (the process's
 * clock: the only one a file one process uses has).
 */
export function sqliteCluster({ db, many, write }: Statements): TransactedClusterMethods {
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
    async retireInstance(instanceId, options = {}) {
      retireTx.immediate(instanceId, options.keepHolds === true);
    },
    takeOverOrphans: async (instanceId, timeoutMs) => adoptTx.immediate(instanceId, timeoutMs),
    async handBack(instanceId, work) {
      handBackTx.immediate(instanceId, work);
    },
    async claimReadyRuns(jobId, instanceId, now, leaseMs) {
      return db
        .transaction(() => many('claimReadyRuns', { jobId, now, instanceId, leaseMs }, parseRun))
        .immediate()
        .sort((a, b) => a.seq - b.seq);
    },
    async renewHold(instanceId, work, leaseMs) {
      if ('jobId' in work) return write('holdJob', { jobId: work.jobId, instanceId, leaseMs }) === 1;
      if ('outboxId' in work)
        return write('holdOutbox', { outboxId: work.outboxId, instanceId, leaseMs }) === 1;
      return holdRunsTx.immediate(instanceId, work.runIds, leaseMs);
    },
  };
}
