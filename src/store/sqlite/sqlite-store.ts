import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { storeAreas } from '../areas.js';
import { type Params, type PatchedTable, type QueryName, queriesFor, updateStatement } from '../queries.js';
import type { Row } from '../rows.js';
import { migrationsFor } from '../schema.js';
import { type Engine, type Operation, runAtOnce, type Statements } from '../statements.js';
import type { Store } from '../types.js';

/**
 * Opens (creating if needed) the SQLite store at `path` (`:memory:` for tests), in WAL mode,
 * with migrations applied. The file and the folders created for it are private to the app's user.
 */
export function openSqliteStore(
  path: string,
  options: {
    /** The store's clock, which heartbeats and claims are timed by (epoch ms). */
    now?: () => number;
  } = {},
): Store & { db: Database.Database } {
  const db = openDatabase(path);
  const statements = statementsOf(db, options.now ?? Date.now);
  // Its one writer serialises the transactions (also across connections to the same file): no
  // lock is ever needed.
  const inside = { ...statements, lock: () => undefined };
  const inTransaction = db.transaction((operation: Operation<unknown>) => runAtOnce(operation, inside));
  const engine: Engine = {
    ...statements,
    shared: false,
    // BEGIN IMMEDIATE: the write lock from the start, so a transaction never fails for want of it
    // halfway. Runs at once, when the method is called (see `withGroupedInserts`).
    transaction: async <T>(operation: Operation<T>) => inTransaction.immediate(operation) as T,
  };
  return withGroupedInserts(db, {
    ...storeAreas(engine),
    db,
    async checkpoint() {
      db.pragma('wal_checkpoint(PASSIVE)');
    },
    async close() {
      if (db.open) db.close();
    },
  });
}

/** The database file, private to its owner, in WAL mode and migrated. */
function openDatabase(path: string): Database.Database {
  if (path !== ':memory:') preparePrivateFile(path);
  const db = new Database(path);
  try {
    db.pragma('journal_mode = WAL');
    // NORMAL is durable against process crashes in WAL mode; only a power loss can lose the tail.
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    db.pragma('busy_timeout = 5000');
    migrate(db);
    return db;
  } catch (error) {
    db.close();
    // SQLite's own words ("file is not a database") do not say which file.
    throw new Error(`the SQLite store at ${path} cannot be opened: ${(error as Error).message}`, {
      cause: error,
    });
  }
}

/** Reads and writes by query name, each statement prepared once and given the store's clock. */
function statementsOf(db: Database.Database, clock: () => number) {
  // better-sqlite3 binds the statements' `:name` parameters from an object as they are written.
  const statements = Object.fromEntries(
    Object.entries(queriesFor('sqlite')).map(([name, sql]) => [name, db.prepare(sql)]),
  ) as Record<QueryName, Database.Statement>;
  // Rows are read as arrays and keyed here: better-sqlite3 builds a row object through V8's API
  // one column at a time, which costs twice what reading the row does (a job's has 39 columns).
  // The names are read again when a row's width changes: a later release's migration adds
  // columns (at the end) while this one runs, and `SELECT *` then reads them too.
  const columns = new Map<QueryName, string[]>();
  const namesOf = (name: QueryName, values: unknown[]): string[] => {
    let names = columns.get(name);
    if (names?.length !== values.length) {
      names = statements[name].columns().map((column) => column.name);
      columns.set(name, names);
    }
    return names;
  };
  for (const statement of Object.values(statements)) if (statement.reader) statement.raw(true);
  const rowOf = (name: QueryName, values: unknown[]): Row => {
    const names = namesOf(name, values);
    const row: Row = {};
    for (let i = 0; i < names.length; i++) row[names[i] as string] = values[i];
    return row;
  };
  // Every statement gets the store's clock as `:clock` (the statements' `{{now}}`); those that do
  // not name it ignore it. A caller's own `clock` wins (see the take-over in `cluster-store.ts`).
  const timed = (params: Params): Params => ({ clock: clock(), ...params });
  const one = <T>(name: QueryName, params: Params, parse: (row: Row) => T): T | undefined => {
    const values = statements[name].get(timed(params)) as unknown[] | undefined;
    return values === undefined ? undefined : parse(rowOf(name, values));
  };
  const many = <T>(name: QueryName, params: Params, parse: (row: Row) => T): T[] =>
    (statements[name].all(timed(params)) as unknown[][]).map((values) => parse(rowOf(name, values)));
  const write = (name: QueryName, params: Params): number => statements[name].run(timed(params)).changes;
  // Patches touch a handful of column sets over and over: prepare each statement once.
  const updates = new Map<string, Database.Statement>();
  const update = (table: PatchedTable, id: number, patch: Record<string, unknown>, claimant?: string) => {
    const built = updateStatement(table, id, patch, claimant);
    if (!built) return 0;
    let statement = updates.get(built.sql);
    if (!statement) {
      statement = db.prepare(built.sql);
      updates.set(built.sql, statement);
    }
    return statement.run(built.params).changes;
  };
  return { one, many, write, update } satisfies Statements;
}

/** The schema migrations, in SQLite's column types. */
export const migrations = migrationsFor('sqlite');

/** Applies the numbered migrations that the database has not seen yet. */
export function migrate(db: Database.Database): void {
  db.exec(
    'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)',
  );
  const applied = new Set(
    db
      .prepare('SELECT version FROM schema_migrations')
      .all()
      .map((r) => (r as { version: number }).version),
  );
  for (const migration of migrations) {
    if (applied.has(migration.version)) continue;
    db.transaction(() => {
      db.exec(migration.sql);
      db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(
        migration.version,
        Date.now(),
      );
    }).immediate();
  }
}

/** Mode of folders created for the store: only the app's user may list or enter them. */
export const STORE_DIRECTORY_MODE = 0o700;
/** Mode of the database file and its `-wal` and `-shm` companions: only the app's user may read them. */
export const STORE_FILE_MODE = 0o600;

/**
 * Makes the database file private before SQLite opens it, whatever the umask: folders created
 * for it get 0700 (an existing folder, which may be the working directory, is left alone), and
 * the file, created here if missing, gets 0600, as do companions left by an earlier run. SQLite
 * creates `-wal` and `-shm` with the database file's mode.
 */
export function preparePrivateFile(path: string): void {
  const file = resolve(path);
  const dir = dirname(file);
  const first = mkdirSync(dir, { recursive: true, mode: STORE_DIRECTORY_MODE });
  if (first) {
    for (let at = dir; ; at = dirname(at)) {
      chmodSync(at, STORE_DIRECTORY_MODE);
      if (at === first || dirname(at) === at) break;
    }
  }
  closeSync(openSync(file, 'a', STORE_FILE_MODE));
  for (const companion of [file, `${file}-wal`, `${file}-shm`]) {
    if (existsSync(companion)) chmodSync(companion, STORE_FILE_MODE);
  }
}

/** The inserts of one turn of the event loop, committed together. */
interface Group {
  waiters: Array<{ resolve: () => void; reject: (error: unknown) => void }>;
  /** Set once committed (or failed): a waiter that comes later settles at once. */
  outcome?: { error: unknown } | 'committed';
}

/**
 * `store` with the jobs its `insertJob` records in one turn of the event loop committed in one
 * transaction: the first insert opens it, the inserts that follow (the commands Slack sent
 * together) join it, and it commits once the turn's I/O callbacks are done (`setImmediate`).
 * Each insert resolves only after that commit, so a command is still durable before it is
 * acknowledged; a failed commit rejects every insert of the group. Every other method commits
 * the open group first, so background work's writes are durable the moment they return, as
 * without grouping. One commit per burst instead of one per command is most of an insert's cost.
 */
export function withGroupedInserts<S extends Store>(db: Database.Database, store: S): S {
  let open: Group | undefined;

  const commit = () => {
    const group = open;
    if (!group) return;
    open = undefined;
    try {
      db.exec('COMMIT');
      group.outcome = 'committed';
    } catch (error) {
      if (db.inTransaction) db.exec('ROLLBACK');
      group.outcome = { error };
    }
    for (const waiter of group.waiters.splice(0)) settle(group, waiter);
  };

  const settle = (group: Group, waiter: Group['waiters'][number]) => {
    if (group.outcome === 'committed') waiter.resolve();
    else if (group.outcome) waiter.reject(group.outcome.error);
  };

  const insertJob: Store['insertJob'] = async (job, firstRun, now) => {
    if (!open) {
      db.exec('BEGIN IMMEDIATE');
      open = { waiters: [] };
      setImmediate(commit);
    }
    const group = open;
    // Runs at once, in a savepoint of the group's transaction: a failed insert undoes only itself.
    const result = await store.insertJob(job, firstRun, now);
    await new Promise<void>((resolve, reject) => {
      const waiter = { resolve, reject };
      if (group.outcome) settle(group, waiter);
      else group.waiters.push(waiter);
    });
    return result;
  };

  /** Every other method, made to commit the open group first; built once each. */
  const committingFirst = new Map<PropertyKey, (...args: unknown[]) => unknown>();
  return new Proxy(store, {
    get(target, key, receiver) {
      if (key === 'insertJob') return insertJob;
      const value = Reflect.get(target, key, receiver);
      if (typeof value !== 'function') return value;
      let wrapped = committingFirst.get(key);
      if (!wrapped) {
        wrapped = (...args: unknown[]) => {
          commit();
          return value.apply(target, args);
        };
        committingFirst.set(key, wrapped);
      }
      return wrapped;
    },
  });
}
