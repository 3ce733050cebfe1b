import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/types.js';

/** Where the PostgreSQL tests run; CI starts the server at this address. */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/**
 * `url` fit for a log line: a password, in the user part or as a `password` parameter, is
 * replaced by `***`, so a warning in CI never shows one. A URL that does not parse is not shown.
 */
export function shownUrl(url: string = TEST_DATABASE_URL): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return '(a URL that does not parse)';
  }
  if (parsed.password) parsed.password = '***';
  if (parsed.searchParams.has('password')) parsed.searchParams.set('password', '***');
  return parsed.toString();
}

/** Whether a PostgreSQL server answers at {@link TEST_DATABASE_URL}, and if not, why. */
export async function postgresAvailable(): Promise<{ ok: true } | { ok: false; why: string }> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL, connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return { ok: true };
  } catch (error) {
    return { ok: false, why: (error as Error).message };
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** A connection URL to a fresh, empty schema of its own, so every test starts clean. */
export async function freshSchemaUrl(): Promise<string> {
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  await client.query(`CREATE SCHEMA ${schema}`);
  await client.end();
  const url = new URL(TEST_DATABASE_URL);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return url.toString();
}

/** Drops the schemas {@link freshSchemaUrl} made for `urls`, with everything in them. */
export async function dropFreshSchema(...urls: string[]): Promise<void> {
  const schemas = urls.map((url) => {
    const schema = /search_path=(t_[0-9a-f]+)$/.exec(new URL(url).searchParams.get('options') ?? '')?.[1];
    if (!schema) throw new Error('not a URL made by freshSchemaUrl');
    return schema;
  });
  if (schemas.length === 0) return;
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    // A few at a time: a drop locks every object in its schemas until it commits.
    for (let i = 0; i < schemas.length; i += 10)
      await client.query(`DROP SCHEMA IF EXISTS ${schemas.slice(i, i + 10).join(', ')} CASCADE`);
  } finally {
    await client.end();
  }
}

export type PgStore = Awaited<ReturnType<typeof openPostgresStore>>;

/**
 * Two stores on one fresh schema, as two instances of the bot on one database. Call inside a
 * `describe`: `opened` gets them before its first test; they are closed and the schema dropped
 * after its last.
 */
export function twoStoresOnFreshSchema(max: number, opened: (a: PgStore, b: PgStore) => void): void {
  let url = '';
  let stores: PgStore[] = [];
  beforeAll(async () => {
    url = await freshSchemaUrl();
    stores = [await openPostgresStore(url, { max }), await openPostgresStore(url, { max })];
    opened(stores[0] as PgStore, stores[1] as PgStore);
  });
  afterAll(async () => {
    for (const store of stores) await store.close();
    await dropFreshSchema(url);
  });
}

/**
 * Both engines, each opening a fresh store: SQLite in memory, and PostgreSQL on a schema of its
 * own when a server answers (`server`, from {@link postgresAvailable}).
 */
export function bothEngines(server: { ok: boolean }): [string, () => Promise<Store>][] {
  return [
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
}
