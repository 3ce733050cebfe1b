import { afterAll } from 'vitest';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { dropFreshSchema, freshSchemaUrl, postgresAvailable } from '../helpers/postgres.js';
import { pullRequestsContract } from './pull-requests-contract.js';

pullRequestsContract('SQLite (:memory:)', () => openSqliteStore(':memory:'));

const server = await postgresAvailable();
const schemas: string[] = [];
afterAll(async () => {
  await dropFreshSchema(...schemas.splice(0));
});
if (server.ok) {
  // Two pools on one database: two instances of the bot, each claim decided by the server's clock.
  let url = '';
  pullRequestsContract(
    'PostgreSQL (two pools: two instances)',
    async () => {
      url = await freshSchemaUrl();
      schemas.push(url);
      return openPostgresStore(url, { max: 4 });
    },
    () => openPostgresStore(url, { max: 4 }),
  );
}
