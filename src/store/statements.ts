import type { LockName, Params, PatchedTable, QueryName } from './queries.js';
import type { Row } from './rows.js';

/**
 * The engines' common primitives: each runs one named statement of `queries.ts`, SQLite
 * synchronously (its value is returned at once), PostgreSQL awaited on the pool. A store area
 * written once over them awaits every result, which is the value itself on SQLite: its statement
 * still runs when the method is called, inside SQLite's group commit (`withGroupedInserts` in
 * `sqlite/sqlite-store.ts`).
 */
export interface Statements {
  /** The first row, parsed; undefined when there is none. */
  one<T>(name: QueryName, params: Params, parse: (row: Row) => T): T | undefined | Promise<T | undefined>;
  /** Every row, parsed. */
  many<T>(name: QueryName, params: Params, parse: (row: Row) => T): T[] | Promise<T[]>;
  /** The number of rows the statement changed. */
  write(name: QueryName, params: Params): number | Promise<number>;
  /** Applies a patch's defined keys to one row (see `updateStatement`); the rows changed. */
  update(
    table: PatchedTable,
    id: number,
    patch: Record<string, unknown>,
    claimant?: string,
  ): number | Promise<number>;
}

/** The statements inside a transaction: the same, and the locks it holds until it ends. */
export interface TransactionStatements extends Statements {
  /**
   * Takes one of `LOCKS` in `queries.ts`: PostgreSQL's, which several instances share; nothing on
   * SQLite, whose transactions all begin IMMEDIATE and so are serialised by its one writer.
   */
  lock(name: LockName, params: Params): unknown;
}

/** One statement of an {@link Operation}, run by the engine on its transaction's statements. */
export type Step = (run: TransactionStatements) => unknown;

/**
 * An operation of several statements in one transaction, written once for both engines as a
 * generator: each `yield*` of a {@link tx} step runs one statement, whose result the engine hands
 * back, SQLite at once (the whole operation runs synchronously inside its transaction),
 * PostgreSQL awaited on the transaction's connection.
 */
export type Operation<T> = Generator<Step, T, unknown>;

/** The statements an {@link Operation} runs, one `yield*` each. */
export const tx = {
  *one<T>(name: QueryName, params: Params, parse: (row: Row) => T): Operation<T | undefined> {
    return (yield (run) => run.one(name, params, parse)) as T | undefined;
  },
  *many<T>(name: QueryName, params: Params, parse: (row: Row) => T): Operation<T[]> {
    return (yield (run) => run.many(name, params, parse)) as T[];
  },
  *write(name: QueryName, params: Params): Operation<number> {
    return (yield (run) => run.write(name, params)) as number;
  },
  *update(
    table: PatchedTable,
    id: number,
    patch: Record<string, unknown>,
    claimant?: string,
  ): Operation<number> {
    return (yield (run) => run.update(table, id, patch, claimant)) as number;
  },
  *lock(name: LockName, params: Params): Operation<void> {
    yield (run) => run.lock(name, params);
  },
};

/** An engine: its statements, and its transactions, in which it runs {@link Operation}s. */
export interface Engine extends Statements {
  /** Runs `operation` in one transaction: all of its writes, or none when it throws. */
  transaction<T>(operation: Operation<T>): Promise<T>;
  /** Whether several processes may use the store at once (see `StoreLifecycle.shared`). */
  readonly shared: boolean;
}

/** Runs an operation to its end synchronously: SQLite's statements answer at once. */
export function runAtOnce<T>(operation: Operation<T>, run: TransactionStatements): T {
  let step = operation.next();
  while (!step.done) step = operation.next(step.value(run));
  return step.value;
}

/** Runs an operation to its end, awaiting each statement: PostgreSQL's answer over the network. */
export async function runAwaited<T>(operation: Operation<T>, run: TransactionStatements): Promise<T> {
  let step = operation.next();
  while (!step.done) step = operation.next(await step.value(run));
  return step.value;
}
