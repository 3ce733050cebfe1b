/**
 * A store as an earlier release left it: the schema built by hand up to a version, each migration
 * recorded as applied, then the rows that release wrote. The app's own opening migrates it from
 * there, so a test reads back what an upgrade made of them.
 */
import Database from 'better-sqlite3';
import pg from 'pg';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.js';
import { type Dialect, migrationsFor } from '../../src/store/schema.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/types.js';
import { tempDatabase } from './harness.js';
import { freshSchemaUrl } from './postgres.js';

/** When the earlier release applied its migrations. */
export const APPLIED_AT = 1_700_000_000_000;

const migrationsUpTo = (dialect: Dialect, version: number) =>
  migrationsFor(dialect).filter((m) => m.version <= version);

/** A SQLite database (in memory unless `path`) left at `version`, with `rows` (SQL) written. */
export function sqliteLeftAt(version: number, rows = '', path = ':memory:'): Database.Database {
  const db = new Database(path);
  db.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)');
  for (const m of migrationsUpTo('sqlite', version)) {
    db.exec(m.sql);
    db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(
      m.version,
      APPLIED_AT,
    );
  }
  if (rows) db.exec(rows);
  return db;
}

/** A PostgreSQL schema (reached through `db`) left at `version`, with `rows` (SQL) written. */
export async function postgresLeftAt(
  db: Pick<pg.Client, 'query'>,
  version: number,
  rows = '',
): Promise<void> {
  await db.query('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)');
  for (const m of migrationsUpTo('postgres', version)) {
    await db.query(m.sql);
    await db.query('INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)', [
      m.version,
      APPLIED_AT,
    ]);
  }
  if (rows) await db.query(rows);
}

/** The app's SQLite store opened (so migrated) on a file left at `version` with `rows`. */
export function upgradedSqliteStore(version: number, rows: string): Store & { db: Database.Database } {
  const path = tempDatabase();
  sqliteLeftAt(version, rows, path).close();
  return openSqliteStore(path);
}

/** The app's PostgreSQL store opened (so migrated) on a fresh schema left at `version` with `rows`. */
export async function upgradedPostgresStore(version: number, rows: string): Promise<Store> {
  const url = await freshSchemaUrl();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await postgresLeftAt(client, version, rows);
  } finally {
    await client.end();
  }
  return openPostgresStore(url, { max: 2 });
}
