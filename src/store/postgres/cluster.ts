import type pg from 'pg';
import type { TransactedClusterMethods } from '../cluster-store.js';
import { parseJob, parseRun } from '../rows.js';
import { ADOPTION_LOCK_KEY } from './migrate.js';
import { exec, many, write } from './statements.js';

/**
 * Take-overs, batch claims and holds on PostgreSQL (heartbeats and the claims that are one
 * statement are written once, in `cluster-store.ts`). Every time these decide by is the
 * server's (`clock_timestamp()`, see `queries/cluster.ts`): the instances sharing the database may
 * run on hosts whose clocks disagree, and none of them is asked what time it is.
 */
export function postgresCluster(
  pool: pg.Pool,
  transaction: <T>(work: (db: pg.PoolClient) => Promise<T>) => Promise<T>,
): TransactedClusterMethods {
  const byId = <T extends { id: number }>(records: T[]) => records.sort((a, b) => a.id - b.id);
  return {
    retireInstance: (instanceId, options = {}) =>
      transaction(async (db) => {
        await write(db, 'retireInstance', { instanceId });
        await write(db, 'releaseJobsOf', { instanceId });
        await write(db, 'releaseOutboxOf', { instanceId });
        if (options.keepHolds) return;
        await write(db, 'endJobHoldsOf', { instanceId });
        await write(db, 'endRunHoldsOf', { instanceId });
      }),
    takeOverOrphans: (instanceId, timeoutMs) =>
      transaction(async (db) => {
        // Serialises take-overs: each adopter sees what the one before it took.
        await exec(db, 'adoptionLockPostgres', { lock: ADOPTION_LOCK_KEY });
        const params = { instanceId, timeoutMs };
        await write(db, 'releaseDeadJobClaims', params);
        await write(db, 'releaseDeadOutboxClaims', params);
        const jobs = await many(db, 'adoptJobs', params, parseJob);
        const runs = await many(db, 'adoptRuns', params, parseRun);
        await write(db, 'forgetDeadInstances', params);
        return { jobs: byId(jobs), runs: byId(runs) };
      }),
    handBack: (instanceId, work) =>
      transaction(async (db) => {
        for (const jobId of work.jobIds) await write(db, 'releaseJobWork', { jobId, instanceId });
        for (const runId of work.runIds) await write(db, 'releaseRunWork', { runId, instanceId });
      }),
    async claimReadyRuns(jobId, instanceId, now, leaseMs) {
      const claimed = await many(pool, 'claimReadyRuns', { jobId, now, instanceId, leaseMs }, parseRun);
      return claimed.sort((a, b) => a.seq - b.seq);
    },
    async renewHold(instanceId, work, leaseMs) {
      if ('jobId' in work)
        return (await write(pool, 'holdJob', { jobId: work.jobId, instanceId, leaseMs })) === 1;
      if ('outboxId' in work)
        return (await write(pool, 'holdOutbox', { outboxId: work.outboxId, instanceId, leaseMs })) === 1;
      const { runIds } = work;
      return transaction(async (db) => {
        let held = 0;
        for (const runId of runIds) held += await write(db, 'holdRun', { runId, instanceId, leaseMs });
        return held === runIds.length;
      });
    },
  };
}
