import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import {
  MIGRATION_LOCK_KEY,
  migratePostgres,
  pgMigrations,
  types,
} from '../../../src/store/postgres/migrate.js';
import { waitFor } from '../../helpers/http.js';
import { APPLIED_AT, postgresLeftAt } from '../../helpers/old-store.js';
import {
  dropFreshSchema,
  freshSchemaUrl,
  postgresAvailable,
  shownUrl,
  TEST_DATABASE_URL,
} from '../../helpers/postgres.js';

const server = await postgresAvailable();
const T0 = 1_700_000_000_000;
/** The last version before the unused number 11. */
const BEFORE_GAP = 10;

describe.runIf(server.ok)('PostgreSQL migrations', () => {
  const pools: pg.Pool[] = [];
  const urls: string[] = [];
  /** A pool on a fresh schema of its own (or on `url`'s). */
  const poolOn = async (url?: string) => {
    const at = url ?? (await freshSchemaUrl());
    if (!url) urls.push(at);
    const pool = new pg.Pool({ connectionString: at, max: 2, types });
    pools.push(pool);
    return { pool, url: at };
  };
  const applied = async (pool: pg.Pool) =>
    (
      await pool.query(
        'SELECT version, applied_at, xmin::text::bigint AS tx FROM schema_migrations ORDER BY version',
      )
    ).rows as { version: number; applied_at: number; tx: number }[];
  afterEach(async () => {
    await Promise.all(pools.splice(0).map((p) => p.end()));
    for (const url of urls.splice(0)) await dropFreshSchema(url);
  });

  it('apply every migration once, in order, when several instances start at the same time; again, nothing', async () => {
    const { url } = await poolOn();
    const instances = await Promise.all([1, 2, 3].map(() => poolOn(url)));
    await Promise.all(instances.map(({ pool }) => migratePostgres(pool)));
    const pool = instances[0]?.pool as pg.Pool;
    const rows = await applied(pool);
    expect(rows.map((r) => r.version)).toEqual(pgMigrations.map((m) => m.version));
    // Each in its own transaction, committed after the one before it.
    for (let i = 1; i < rows.length; i++) expect(rows[i]?.tx).toBeGreaterThan(rows[i - 1]?.tx ?? 0);
    await migratePostgres(pool);
    expect(await applied(pool)).toEqual(rows);
  });

  it('leave nothing of a failed migration, then bring a schema left before the unused number up to the last', async () => {
    const { pool, url } = await poolOn();
    await postgresLeftAt(pool, BEFORE_GAP);
    // In the way of version 12's table, after its first statement has run.
    await pool.query('CREATE TABLE feedback_votes (x INTEGER)');
    await expect(migratePostgres(pool)).rejects.toThrow(/"feedback_votes" already exists/);
    expect(Math.max(...(await applied(pool)).map((r) => r.version))).toBe(BEFORE_GAP);
    const column = await pool.query(
      "SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'jobs' AND column_name = 'stopped_run'",
    );
    expect(column.rows).toEqual([]);

    await pool.query('DROP TABLE feedback_votes');
    // The migration lock was let go: another instance is not kept waiting.
    const { pool: next } = await poolOn(url);
    await migratePostgres(next);
    const rows = await applied(next);
    expect(rows.map((r) => r.version)).toEqual(pgMigrations.map((m) => m.version));
    // Only what was missing ran now.
    expect(rows.filter((r) => r.applied_at !== APPLIED_AT).map((r) => r.version)).toEqual(
      pgMigrations.filter((m) => m.version > BEFORE_GAP).map((m) => m.version),
    );
    expect((await next.query('SELECT COUNT(*) AS n FROM feedback_votes')).rows).toEqual([{ n: 0 }]);
    // Jobs watched before the refused polls were counted apart start from none.
    const refusals = await next.query(
      "SELECT data_type, is_nullable, column_default FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'jobs' AND column_name = 'poll_refusals'",
    );
    expect(refusals.rows).toEqual([{ data_type: 'integer', is_nullable: 'NO', column_default: '0' }]);
  });

  it('fail, rather than end the process, when the connection migrating ends (a restart of the server)', async () => {
    const { url } = await poolOn();
    const name = `migrate-${Math.random().toString(36).slice(2)}`;
    const named = new URL(url);
    named.searchParams.set('application_name', name);
    const { pool } = await poolOn(named.toString());
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    try {
      // Another instance migrating: this one waits for the lock, on a connection of its own.
      await holder.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
      const migrating = migratePostgres(pool).then(
        () => undefined,
        (error: Error) => error,
      );
      const waiting =
        "SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'";
      const { pid } = await waitFor(
        'the migration waiting',
        async () => (await holder.query(waiting, [name])).rows[0],
      );
      await holder.query('SELECT pg_terminate_backend($1)', [pid]);
      expect((await migrating)?.message).toMatch(/terminating connection/);
    } finally {
      await holder.end();
    }
    // The next start migrates as usual.
    await migratePostgres(pool);
    expect((await applied(pool)).map((r) => r.version)).toEqual(pgMigrations.map((m) => m.version));
  });

  it('read BIGINT times and counts as numbers, and leave other types as pg reads them', async () => {
    const pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 1, types });
    pools.push(pool);
    const { rows } = await pool.query(
      `SELECT ${T0}::bigint AS at, COUNT(*) AS n, 1.5::numeric AS ratio, '{"a":1}'::jsonb AS payload FROM (SELECT 1) one`,
    );
    expect(rows).toEqual([{ at: T0, n: 1, ratio: '1.5', payload: { a: 1 } }]);
  });
});

if (!server.ok)
  console.warn(`PostgreSQL migration tests NOT RUN: no server at ${shownUrl()} (${server.why})`);
