import pg from 'pg';
import { type DatabaseTlsError, parseDatabaseTls, tlsOptions } from '../../config/database-tls.js';
import { storeAreas } from '../areas.js';
import {
  type LockName,
  type Params,
  type PatchedTable,
  POSTGRES_ONLY,
  type QueryName,
  queriesFor,
  toPostgres,
  updateStatement,
} from '../queries.js';
import type { Row } from '../rows.js';
import { migrationsFor } from '../schema.js';
import { type Engine, runAwaited, type TransactionStatements } from '../statements.js';
import type { Store } from '../types.js';

/**
 * The store on PostgreSQL, for deployments without a persistent disk or with several instances.
 * Same behaviour as the SQLite store (one behaviour suite runs against both). TLS follows the
 * URL's `sslmode` with libpq's meaning ({@link tlsOptions}); an unknown mode or an unreadable
 * certificate file throws {@link DatabaseTlsError} before any connection is made.
 */
export async function openPostgresStore(
  url: string,
  options: {
    max?: number;
    /**
     * Told when an idle connection fails (the server restarted, a fail-over, a dropped
     * connection). The pool replaces it; without a listener the pool's 'error' event would end
     * the process.
     */
    onIdleError?: (error: Error) => void;
  } = {},
): Promise<Store & { pool: pg.Pool }> {
  const pool = openPool(url, options.max);
  pool.on('error', (error) => options.onIdleError?.(error));
  await migratePostgres(pool);

  const engine: Engine = {
    ...statementsOn(pool),
    shared: true,
    // Each transaction on a connection of its own, every statement awaited there in turn.
    transaction: (operation) => inTransaction(pool, (client) => runAwaited(operation, statementsOn(client))),
  };
  const store = storeAreas(engine);
  return {
    ...store,
    pool,
    async insertJob(job, firstRun, now) {
      try {
        return await store.insertJob(job, firstRun, now);
      } catch (error) {
        // Two starts raced in one thread on two connections and the unique thread index refused
        // this one: once more, and it returns the job the other start recorded.
        if ((error as { constraint?: string }).constraint === 'jobs_thread')
          return store.insertJob(job, firstRun, now);
        throw error;
      }
    },
    // PostgreSQL checkpoints on its own, in its own processes: nothing here waits for one.
    checkpoint: async () => undefined,
    async close() {
      await pool.end();
    },
  };
}

/** The connection pool, its TLS always explicit. */
function openPool(url: string, max: number | undefined): pg.Pool {
  const tls = parseDatabaseTls(url);
  return new pg.Pool({
    connectionString: tls.connectionString,
    max: max ?? 10,
    types,
    // Always explicit, so neither pg's reading of the URL nor PGSSLMODE can weaken it.
    ssl: tlsOptions(tls),
    ...(tls.negotiation ? ({ sslnegotiation: tls.negotiation } as pg.PoolConfig) : {}),
  });
}

/** The schema migrations, in PostgreSQL's column types. */
export const pgMigrations = migrationsFor('postgres');

/** Advisory lock key held while migrating, so instances starting together migrate once. */
export const MIGRATION_LOCK_KEY = 7_204_118_533;

// BIGINT (epoch milliseconds) and COUNT come back as numbers, not strings.
export const types = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === 20
      ? (v: string) => Number(v)
      : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
};

/** Applies the numbered migrations not yet applied, under an advisory lock. */
export function migratePostgres(pool: pg.Pool): Promise<void> {
  return onConnection(pool, async (client) => {
    try {
      await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
      await client.query(
        'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)',
      );
      const { rows } = await client.query('SELECT version FROM schema_migrations');
      const applied = new Set(rows.map((r) => Number(r.version)));
      for (const migration of pgMigrations) {
        if (applied.has(migration.version)) continue;
        await client.query('BEGIN');
        try {
          await client.query(migration.sql);
          await client.query('INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)', [
            migration.version,
            Date.now(),
          ]);
          await client.query('COMMIT');
        } catch (error) {
          // On a lost connection the rollback fails too; the migration's own error is the one to tell.
          await client.query('ROLLBACK').catch(() => undefined);
          throw error;
        }
      }
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
    }
  });
}

/**
 * The store's statements on PostgreSQL, run by name with named parameters, and its transactions.
 */
const queries = { ...queriesFor('postgres'), ...POSTGRES_ONLY };
type Name = QueryName | LockName;
export type Queryable = Pick<pg.PoolClient, 'query'>;

/** Runs a statement by name, its `:name` parameters bound as `$n`. */
export const exec = (db: Queryable, name: Name, params: Params = {}) => {
  const { text, values } = toPostgres(queries[name], params);
  return db.query(text, values);
};
/** The first row, parsed; undefined when there is none. */
export const one = async <T>(db: Queryable, name: Name, params: Params, parse: (row: Row) => T) => {
  const row = (await exec(db, name, params)).rows[0] as Row | undefined;
  return row === undefined ? undefined : parse(row);
};
/** Every row, parsed. */
export const many = async <T>(db: Queryable, name: Name, params: Params, parse: (row: Row) => T) =>
  ((await exec(db, name, params)).rows as Row[]).map(parse);
/** The number of rows the statement changed. */
export const write = async (db: Queryable, name: Name, params: Params) =>
  (await exec(db, name, params)).rowCount ?? 0;

/** Applies a patch's defined keys to one row (see {@link updateStatement}). */
export async function updateRow(
  db: Queryable,
  table: PatchedTable,
  id: number,
  patch: Record<string, unknown>,
  claimant?: string,
): Promise<number> {
  const update = updateStatement(table, id, patch, claimant);
  if (!update) return 0;
  const { text, values } = toPostgres(update.sql, update.params);
  return (await db.query(text, values)).rowCount ?? 0;
}

/**
 * The store's statements on `db`: the pool (each statement on whichever connection is free), or
 * one transaction's connection, whose locks last until it ends.
 */
export const statementsOn = (db: Queryable): TransactionStatements => ({
  one: (name, params, parse) => one(db, name, params, parse),
  many: (name, params, parse) => many(db, name, params, parse),
  write: (name, params) => write(db, name, params),
  update: (table, id, patch, claimant) => updateRow(db, table, id, patch, claimant),
  lock: (name, params) => exec(db, name, params),
});

/**
 * Runs `work` on one connection checked out of the pool. A connection that ends while checked out
 * (a restart or fail-over of the server) says so as an 'error' event, which the pool listens for
 * only on idle connections: unheard, it would end the process. The work fails through its query
 * instead, and the connection is discarded, as is one the work found `broken`.
 */
async function onConnection<T>(
  pool: pg.Pool,
  work: (client: pg.PoolClient, broken: (error: Error) => void) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  const ended = (error: Error) => {
    broken = error;
  };
  client.on('error', ended);
  try {
    return await work(client, ended);
  } finally {
    client.removeListener('error', ended);
    client.release(broken);
  }
}

/** Runs `work` in one transaction on one connection of the pool. */
export function inTransaction<T>(pool: pg.Pool, work: (db: pg.PoolClient) => Promise<T>): Promise<T> {
  return onConnection(pool, async (client, broken) => {
    try {
      await client.query('BEGIN');
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      // A connection that cannot even roll back is discarded, not handed to the next caller.
      await client.query('ROLLBACK').catch(broken);
      throw error;
    }
  });
}
