import type pg from 'pg';
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
import type { TransactionStatements } from '../statements.js';

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

/** Runs `work` in one transaction on one connection of the pool. */
export async function inTransaction<T>(pool: pg.Pool, work: (db: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  // A connection that ends while checked out (a restart or fail-over of the server) says so as
  // an 'error' event, which the pool listens for only on idle connections: unheard, it would end
  // the process. The transaction fails through its query instead; the connection is discarded.
  const ended = (error: Error) => {
    broken = error;
  };
  client.on('error', ended);
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    // A connection that cannot even roll back is discarded, not handed to the next caller.
    await client.query('ROLLBACK').catch((rollback: Error) => {
      broken = rollback;
    });
    throw error;
  } finally {
    client.removeListener('error', ended);
    client.release(broken);
  }
}
