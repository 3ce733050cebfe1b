import { describe, expect, it } from 'vitest';
import { runMethods } from '../../src/store/runs.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { areaStatements, HANDED_BACK } from '../helpers/store-statements.js';
import { createRun, followUp, newJob, T0 } from './store-contract.js';

for (const [handedBack, awaited] of HANDED_BACK) {
  describe(`runs' single statements, handed back ${handedBack}`, () => {
    it('reads a job’s runs, and claims a pending one once', async () => {
      const store = openSqliteStore(':memory:');
      const runs = runMethods(areaStatements({ awaited, db: store.db }).statements);
      const { job, run } = await store.insertJob(newJob('runs'), createRun(), T0);
      const { run: second } = await store.insertFollowUp(job.id, followUp('1700000000.000200'), T0 + 1);
      expect((await runs.getRun(run.id))?.kind).toBe('create');
      expect(await runs.getRun(second.id + 100)).toBeUndefined();
      expect((await runs.getRuns(job.id)).map((r) => r.id)).toEqual([run.id, second.id]);
      expect((await runs.pendingRuns(job.id)).map((r) => r.id)).toContain(second.id);
      expect(await runs.readyRuns(job.id)).toEqual([]);
      expect(await runs.claimRun(second.id, T0 + 2)).toBe(true);
      expect(await runs.claimRun(second.id, T0 + 3)).toBe(false);
      expect((await runs.getRun(second.id))?.state).toBe('sending');
      await store.close();
    });
  });
}
