import Database from 'better-sqlite3';
import { type Params, type QueryName, queriesFor, updateStatement } from '../../src/store/queries.js';
import type { Row } from '../../src/store/rows.js';
import { migrate } from '../../src/store/sqlite/sqlite-store.js';
import { type Engine, runAtOnce, runAwaited, type Statements } from '../../src/store/statements.js';

/**
 * A store area's {@link Statements} on a migrated in-memory SQLite database, for testing an area
 * written once without an engine around it, and an {@link Engine} of them, whose transactions run
 * the operations on them. `awaited` hands every result back a turn later, as PostgreSQL's pool
 * does; otherwise at once, as SQLite does. `ran` lists the statements run. Given `db` (an open
 * SQLite store's, say, to record rows through its inserts), runs on it instead.
 */
export function areaStatements(
  options: { awaited?: boolean; clock?: () => number; db?: Database.Database } = {},
) {
  const db = options.db ?? new Database(':memory:');
  if (!options.db) migrate(db);
  const sql = queriesFor('sqlite');
  const ran: { name: QueryName | 'update'; params: Params }[] = [];
  const clock = options.clock ?? (() => 1_700_000_000_000);
  const later = <T>(value: () => T): T | Promise<T> =>
    options.awaited ? new Promise((resolve) => setImmediate(() => resolve(value()))) : value();
  const timed = (name: QueryName, params: Params) => {
    ran.push({ name, params });
    return { clock: clock(), ...params };
  };
  const statements: Statements = {
    one: <T>(name: QueryName, params: Params, parse: (row: Row) => T) =>
      later(() => {
        const row = db.prepare(sql[name]).get(timed(name, params)) as Row | undefined;
        return row === undefined ? undefined : parse(row);
      }),
    many: <T>(name: QueryName, params: Params, parse: (row: Row) => T) =>
      later(() => (db.prepare(sql[name]).all(timed(name, params)) as Row[]).map(parse)),
    write: (name, params) => later(() => db.prepare(sql[name]).run(timed(name, params)).changes),
    update: (table, id, patch, claimant) =>
      later(() => {
        ran.push({ name: 'update', params: { table, id, ...patch } });
        const built = updateStatement(table, id, patch, claimant);
        return built ? db.prepare(built.sql).run(built.params).changes : 0;
      }),
  };
  const inside = { ...statements, lock: () => undefined };
  const engine: Engine = {
    ...statements,
    shared: false,
    async transaction(operation) {
      if (!options.awaited) return db.transaction(() => runAtOnce(operation, inside)).immediate();
      db.exec('BEGIN IMMEDIATE');
      try {
        const result = await runAwaited(operation, inside);
        db.exec('COMMIT');
        return result;
      } catch (error) {
        db.exec('ROLLBACK');
        throw error;
      }
    },
  };
  return { db, ran, statements, engine };
}

/** Both ways an engine hands back a statement's result: SQLite's at once, PostgreSQL's awaited. */
export const HANDED_BACK = [
  ['at once (SQLite)', false],
  ['awaited (PostgreSQL)', true],
] as const;
