import { describe, expect, it } from 'vitest';
import { clusterMethods } from '../../src/store/cluster-store.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Statements } from '../../src/store/statements.js';
import { areaStatements, HANDED_BACK } from '../helpers/store-statements.js';
import { createRun, newJob, T0 } from './store-contract.js';

for (const [handedBack, awaited] of HANDED_BACK) {
  describe(`heartbeats and single-statement claims, handed back ${handedBack}`, () => {
    it('answers a heartbeat with the store’s time and counts the instances heard from', async () => {
      const store = openSqliteStore(':memory:');
      const cluster = clusterMethods(
        areaStatements({ awaited, db: store.db, clock: () => T0 + 7 }).statements,
      );
      expect(await cluster.liveInstances(1_000)).toBe(0);
      expect(await cluster.heartbeat('instance-a')).toBe(T0 + 7);
      expect(await cluster.liveInstances(1_000)).toBe(1);
      await store.close();
    });

    it('claims a due job for one instance only, and releases it', async () => {
      const store = openSqliteStore(':memory:');
      const cluster = clusterMethods(areaStatements({ awaited, db: store.db, clock: () => T0 }).statements);
      const { job } = await store.insertJob(newJob('claim'), createRun(), T0);
      await store.apply({ jobId: job.id, job: { phase: 'active', nextPollAt: T0 } }, T0);
      expect((await cluster.claimDueJobs('instance-a', T0, 10, 60_000)).map((j) => j.id)).toEqual([job.id]);
      expect(await cluster.claimDueJobs('instance-b', T0, 10, 60_000)).toEqual([]);
      await cluster.releaseJob(job.id, 'instance-a');
      expect((await cluster.claimDueJobs('instance-b', T0, 10, 60_000)).map((j) => j.id)).toEqual([job.id]);
      await store.close();
    });
  });
}

describe('heartbeats and claims whatever the engine returns', () => {
  const returning = (rows: unknown[]): Statements => ({
    one: (_name, _params, parse) => (rows[0] === undefined ? undefined : parse(rows[0] as never)),
    many: (_name, _params, parse) => rows.map((row) => parse(row as never)),
    write: () => 1,
    update: () => 1,
  });

  it('refuses a heartbeat without a time rather than report one', async () => {
    await expect(clusterMethods(returning([{ at: null }])).heartbeat('instance-a')).rejects.toThrow(
      'the heartbeat returned no time',
    );
    await expect(clusterMethods(returning([])).heartbeat('instance-a')).rejects.toThrow(
      'the heartbeat returned no time',
    );
  });
});
