import { existsSync, statSync } from 'node:fs';
import { inspect } from 'node:util';
import type pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logging/logger.js';
import { openStore } from '../../src/store/open-store.js';
import type { Store } from '../../src/store/types.js';
import { tempDatabase } from '../helpers/harness.js';
import {
  dropFreshSchema,
  freshSchemaUrl,
  postgresAvailable,
  shownUrl,
  TEST_DATABASE_URL,
} from '../helpers/postgres.js';
import { createRun, newJob, T0 } from './store-contract.js';

const server = await postgresAvailable();
const PASSWORD = 'not-a-real-secret';

/** `TEST_DATABASE_URL` with a password, and the rest of the URL changed by `change`. */
function withPassword(change: (url: URL) => void = () => undefined): string {
  const url = new URL(TEST_DATABASE_URL);
  url.password = PASSWORD;
  change(url);
  return url.toString();
}

/** Everything an operator could see of a failure: its message, stack, causes and fields. */
const shown = (error: unknown) => `${inspect(error, { depth: 8 })} ${(error as Error).stack ?? ''}`;

describe('opening the store named by the configuration', () => {
  let store: Store | undefined;
  let schemaUrl: string | undefined;
  afterEach(async () => {
    await store?.close();
    store = undefined;
    if (schemaUrl) await dropFreshSchema(schemaUrl);
    schemaUrl = undefined;
  });

  it('opens the SQLite file at the path when no DATABASE_URL is set', async () => {
    const path = tempDatabase();
    store = await openStore({ databasePath: path, databaseUrl: undefined });
    expect(store.shared).toBe(false);
    expect((await store.insertJob(newJob('local'), createRun(), T0)).created).toBe(true);
    expect(existsSync(path)).toBe(true);
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it.runIf(server.ok)(
    'opens PostgreSQL, migrated, when DATABASE_URL is set, and leaves the SQLite path alone',
    async () => {
      schemaUrl = await freshSchemaUrl();
      const path = tempDatabase();
      const lines: string[] = [];
      const logger = createLogger({ level: 'warn', secrets: [], write: (line) => lines.push(line) });
      store = await openStore({ databasePath: path, databaseUrl: schemaUrl }, logger);
      expect(store.shared).toBe(true);
      expect((await store.insertJob(newJob('shared'), createRun(), T0)).created).toBe(true);
      expect(existsSync(path)).toBe(false);
      // A connection failing while idle is logged, and the store goes on.
      (store as Store & { pool: pg.Pool }).pool.emit('error', new Error('terminating connection'));
      expect(lines.join('\n')).toMatch(/a database connection failed while idle.*terminating connection/s);
      expect(await store.getJob(1)).toMatchObject({ triggerKey: 'shared' });
    },
  );

  it.runIf(server.ok)('never shows the DATABASE_URL’s password when it cannot open the store', async () => {
    const failing: [string, RegExp][] = [
      // Nothing listens there.
      [
        withPassword((url) => {
          url.port = '1';
        }),
        /ECONNREFUSED/,
      ],
      [
        withPassword((url) => {
          url.pathname = '/no_such_database';
        }),
        /database "no_such_database" does not exist/,
      ],
      [withPassword((url) => url.searchParams.set('sslmode', 'verify_full')), /sslmode "verify_full"/],
      [
        withPassword((url) => {
          url.searchParams.set('sslmode', 'verify-ca');
          url.searchParams.set('sslrootcert', '/no/such/ca.pem');
        }),
        /cannot read \/no\/such\/ca\.pem/,
      ],
      [`postgres://docs:${PASSWORD}@[not-a-host/docs`, /not a valid URL/],
    ];
    for (const [databaseUrl, why] of failing) {
      const error = await openStore({ databasePath: tempDatabase(), databaseUrl }).then(
        (opened) => {
          store = opened;
          throw new Error(`${databaseUrl} was expected to fail`);
        },
        (e: unknown) => e,
      );
      expect((error as Error).message).toMatch(why);
      expect(shown(error)).not.toContain(PASSWORD);
    }
  });
});

if (!server.ok)
  console.warn(`PostgreSQL tests of opening the store NOT RUN: no server at ${shownUrl()} (${server.why})`);
