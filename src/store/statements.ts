import type { Params } from './queries/named.js';
import type { PatchedTable, QueryName } from './queries.js';
import type { Row } from './rows.js';

/**
 * The engines' common primitives: each runs one named statement of `queries.ts`, SQLite
 * synchronously (its value is returned at once), PostgreSQL awaited on the pool. A store area
 * written once over them awaits every result, which is the value itself on SQLite: its statement
 * still runs when the method is called, inside SQLite's group commit (`sqlite/group-commit.ts`).
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
