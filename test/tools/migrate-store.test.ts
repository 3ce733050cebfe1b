import { existsSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { migrateStore } from '../../src/tools/migrate-store.js';
import { type Harness, startHarness, tempDatabase } from '../helpers/harness.js';
import { waitFor } from '../helpers/http.js';
import { freshSchemaUrl, postgresAvailable } from '../helpers/postgres.js';
import { createRun, newJob, post } from '../store/store-contract.js';

const server = await postgresAvailable();

if (server.ok) {
  describe('moving up from SQLite to PostgreSQL', () => {
    it('copies jobs, runs and outbox, keeping ids, and new rows continue after them', async () => {
      const path = tempDatabase();
      const sqlite = openSqliteStore(path);
      const { job } = await sqlite.insertJob(newJob('move-1'), createRun(), 1_000);
      await sqlite.apply(
        { jobId: job.id, job: { phase: 'active', threadTs: '1.5', nextPollAt: 2_000 } },
        1_500,
      );
      await sqlite.enqueue([{ jobId: job.id, dedupeKey: 'move-key', payload: post('moved', '1.5') }], 1_600);
      const before = {
        job: await sqlite.getJob(job.id),
        runs: await sqlite.getRuns(job.id),
        due: await sqlite.dueOutbox(9_999, 10),
      };
      await sqlite.close();

      const url = await freshSchemaUrl();
      expect(await migrateStore(path, url)).toEqual({ jobs: 1, runs: 1, outbox: 1 });
      const pgStore = await openPostgresStore(url, { max: 2 });
      expect(await pgStore.getJob(job.id)).toEqual(before.job);
      expect(await pgStore.findJobByThread('C0DOCS', '1.5')).toEqual(before.job);
      expect(await pgStore.getRuns(job.id)).toEqual(before.runs);
      expect(await pgStore.dueOutbox(9_999, 10)).toEqual(before.due);
      const next = await pgStore.insertJob(newJob('move-2'), createRun(), 3_000);
      expect(next.job.id).toBeGreaterThan(job.id);
      await pgStore.close();
      await expect(migrateStore(path, url)).rejects.toThrow(/already holds jobs/);
    });

    it('refuses a SQLite path that holds no store instead of creating an empty one and copying nothing', async () => {
      const missing = `${tempDatabase()}-absent`;
      await expect(migrateStore(missing, await freshSchemaUrl())).rejects.toThrow(
        /does not exist|unable to open/i,
      );
      expect(existsSync(missing)).toBe(false);
    });
  });

  describe('the app on PostgreSQL', () => {
    let h: Harness | undefined;
    afterEach(async () => {
      await h?.stop();
    });

    it('runs a job end to end with DATABASE_URL set', async () => {
      h = await startHarness({ DATABASE_URL: await freshSchemaUrl() });
      const { threadTs, jobId } = await h.startJob();
      h.agent.complete(jobId, 'https://github.com/example/docs/pull/42');
      const outcome = await waitFor('outcome', () => h?.slack.threadPosts(threadTs)[0]);
      expect(outcome.text).toContain('pull/42');
    });
  });
} else {
  console.warn(`SQLite-to-PostgreSQL and app-on-PostgreSQL tests NOT RUN: ${server.why}`);
}
