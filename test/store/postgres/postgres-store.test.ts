import { describe, expect, it } from 'vitest';
import { pgMigrations } from '../../../src/store/postgres/migrations.js';
import { migratePostgres, openPostgresStore } from '../../../src/store/postgres/postgres-store.js';
import { freshSchemaUrl, postgresAvailable, TEST_DATABASE_URL } from '../../helpers/postgres.js';
import { clusterContract, sharedClusterContract } from '../cluster-contract.js';
import { retentionContract } from '../retention-contract.js';
import { storeContract } from '../store-contract.js';
import { usesContract } from '../uses-contract.js';

const server = await postgresAvailable();

if (server.ok) {
  storeContract('PostgreSQL', async () => openPostgresStore(await freshSchemaUrl(), { max: 4 }));
  retentionContract('PostgreSQL', async () => openPostgresStore(await freshSchemaUrl(), { max: 4 }));
  clusterContract('PostgreSQL', async () => openPostgresStore(await freshSchemaUrl(), { max: 4 }));
  sharedClusterContract('PostgreSQL', async () => openPostgresStore(await freshSchemaUrl(), { max: 4 }));
  {
    // Two pools on one database: two instances of the bot.
    let url = '';
    usesContract(
      'PostgreSQL (two pools: two instances)',
      async () => {
        url = await freshSchemaUrl();
        return openPostgresStore(url, { max: 4 });
      },
      () => openPostgresStore(url, { max: 4 }),
    );
  }

  describe('PostgreSQL connections', () => {
    it('survive a connection failing while idle (a restart or fail-over of the server)', async () => {
      const failures: Error[] = [];
      const store = await openPostgresStore(await freshSchemaUrl(), {
        max: 2,
        onIdleError: (error) => failures.push(error),
      });
      // What pg-pool does when an idle client's connection ends: without a listener, this throws.
      expect(() =>
        store.pool.emit('error', new Error('terminating connection due to administrator command')),
      ).not.toThrow();
      expect(failures.map((e) => e.message)).toEqual(['terminating connection due to administrator command']);
      expect(await store.getJob(1)).toBeUndefined();
      await store.close();
    });
  });

  describe('PostgreSQL migrations', () => {
    it('apply once even when several instances start at the same time', async () => {
      const url = await freshSchemaUrl();
      const stores = await Promise.all([1, 2, 3].map(() => openPostgresStore(url, { max: 2 })));
      const [first] = stores;
      const { rows } = await (first as Awaited<ReturnType<typeof openPostgresStore>>).pool.query(
        'SELECT version FROM schema_migrations',
      );
      expect(rows.map((r) => Number(r.version)).sort((a, b) => a - b)).toEqual(
        pgMigrations.map((m) => m.version),
      );
      await migratePostgres((first as Awaited<ReturnType<typeof openPostgresStore>>).pool);
      await Promise.all(stores.map((s) => s.close()));
    });
  });
} else {
  // Said loudly: these tests did not run, and why.
  console.warn(
    `PostgreSQL store tests NOT RUN: no server at ${TEST_DATABASE_URL} (${server.why}). ` +
      'Start PostgreSQL or set TEST_DATABASE_URL; .ci/run starts it.',
  );
}
