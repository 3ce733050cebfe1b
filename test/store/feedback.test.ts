import { afterEach, describe, expect, it } from 'vitest';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/types.js';
import { freshSchemaUrl, postgresAvailable } from '../helpers/postgres.js';
import { createRun, newJob, T0 } from './store-contract.js';

const server = await postgresAvailable();
const engines: [string, () => Promise<Store>][] = [
  ['SQLite', async () => openSqliteStore(':memory:')],
  ...(server.ok
    ? [
        ['PostgreSQL', async () => openPostgresStore(await freshSchemaUrl(), { max: 2 })] as [
          string,
          () => Promise<Store>,
        ],
      ]
    : []),
];

for (const [engine, open] of engines) {
  describe(`feedback votes (${engine})`, () => {
    let store: Store | undefined;
    afterEach(async () => {
      await store?.close();
      store = undefined;
    });

    it('keeps one vote per person and outcome: a repeat changes nothing, a second press replaces it', async () => {
      store = await open();
      const { job } = await store.insertJob(newJob('feedback'), createRun(), T0);
      const vote = { jobId: job.id, runSeq: 1, userId: 'U0ALICE' };
      expect(await store.recordFeedback({ ...vote, value: 'positive' }, T0)).toBe(true);
      expect(await store.recordFeedback({ ...vote, value: 'positive' }, T0 + 1)).toBe(false);
      expect(await store.feedbackTotals()).toEqual({ positive: 1, negative: 0 });
      expect(await store.recordFeedback({ ...vote, value: 'negative' }, T0 + 2)).toBe(true);
      expect(await store.feedbackTotals()).toEqual({ positive: 0, negative: 1 });
      // Another person, and another outcome of the same job, are votes of their own.
      expect(await store.recordFeedback({ ...vote, userId: 'U0BOB', value: 'positive' }, T0 + 3)).toBe(true);
      expect(await store.recordFeedback({ ...vote, runSeq: 2, value: 'positive' }, T0 + 4)).toBe(true);
      expect(await store.feedbackTotals()).toEqual({ positive: 2, negative: 1 });
    });
  });
}
