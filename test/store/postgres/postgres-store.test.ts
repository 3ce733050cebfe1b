import { afterAll, describe, expect, it } from 'vitest';
import { openPostgresStore } from '../../../src/store/postgres/postgres-store.js';
import { dropFreshSchema, freshSchemaUrl, postgresAvailable, shownUrl } from '../../helpers/postgres.js';
import { clusterContract, sharedClusterContract } from '../cluster-contract.js';
import { retentionContract } from '../retention-contract.js';
import { storeContract } from '../store-contract.js';
import { usesContract } from '../uses-contract.js';

const server = await postgresAvailable();

/** Every schema this file made, dropped once it is done. */
const schemas: string[] = [];
const schemaUrl = async () => {
  const url = await freshSchemaUrl();
  schemas.push(url);
  return url;
};
afterAll(async () => {
  await dropFreshSchema(...schemas.splice(0));
});

if (server.ok) {
  storeContract('PostgreSQL', async () => openPostgresStore(await schemaUrl(), { max: 4 }));
  retentionContract('PostgreSQL', async () => openPostgresStore(await schemaUrl(), { max: 4 }));
  clusterContract('PostgreSQL', async () => openPostgresStore(await schemaUrl(), { max: 4 }));
  sharedClusterContract('PostgreSQL', async () => openPostgresStore(await schemaUrl(), { max: 4 }));
  {
    // Two pools on one database: two instances of the bot.
    let url = '';
    usesContract(
      'PostgreSQL (two pools: two instances)',
      async () => {
        url = await schemaUrl();
        return openPostgresStore(url, { max: 4 });
      },
      () => openPostgresStore(url, { max: 4 }),
    );
  }

  describe('PostgreSQL connections', () => {
    it('survive a connection failing while idle (a restart or fail-over of the server)', async () => {
      const failures: Error[] = [];
      const store = await openPostgresStore(await schemaUrl(), {
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
} else {
  // Said loudly: these tests did not run, and why.
  console.warn(
    `PostgreSQL store tests NOT RUN: no server at ${shownUrl()} (${server.why}). ` +
      'Start PostgreSQL or set TEST_DATABASE_URL; .ci/run starts it.',
  );
}
