import { ASSISTANT_THREAD_QUERIES, FIGURES_QUERIES, HOME_VIEW_QUERIES } from './areas.js';
import { CLUSTER_QUERIES } from './cluster-store.js';
import { FEEDBACK_QUERIES } from './feedback.js';
import { JOB_QUERIES } from './jobs.js';
import { OUTBOX_QUERIES } from './outbox.js';
import { PULL_REQUEST_QUERIES } from './pull-requests.js';
import { RETENTION_QUERIES } from './retention.js';
import { RUN_LENGTH_QUERIES } from './run-lengths.js';
import type { Dialect } from './schema.js';
import { SLACK_PAUSE_QUERIES } from './slack-pauses.js';
import { USES_QUERIES } from './uses.js';

/**
 * Every statement of the store, each written once for SQLite and PostgreSQL with `:name`
 * parameters in its area's module (its SQL beside the methods that run it) and gathered here.
 * `{{lock}}` marks where PostgreSQL takes row locks that concurrent claimers skip, `{{forUpdate}}`
 * where it locks a row for the rest of the transaction; SQLite has a single writer and needs
 * neither. The locks only PostgreSQL takes are kept here (`POSTGRES_ONLY`), and so is how a
 * statement's `:name` parameters become PostgreSQL's `$n` (`toPostgres`).
 */
const SHARED = {
  ...JOB_QUERIES,
  ...RETENTION_QUERIES,
  ...HOME_VIEW_QUERIES,
  ...ASSISTANT_THREAD_QUERIES,
  ...FIGURES_QUERIES,
  ...CLUSTER_QUERIES,
  ...OUTBOX_QUERIES,
  ...USES_QUERIES,
  ...FEEDBACK_QUERIES,
  ...PULL_REQUEST_QUERIES,
  ...SLACK_PAUSE_QUERIES,
  ...RUN_LENGTH_QUERIES,
} as const;

/**
 * Advisory lock key held while taking over a gone instance's work, so two instances never both do
 * (one more than the migrations' key, `MIGRATION_LOCK_KEY` in `postgres/postgres-store.ts`).
 */
const TAKE_OVER_LOCK_KEY = 7_204_118_534;
/**
 * First keys of the two-key advisory locks that serialise use reservations: one lock per person
 * and one per project (the second key hashes the id), always taken in that order.
 */
const USER_USES_LOCK_KEY = 720_411;
const PROJECT_USES_LOCK_KEY = 720_412;

/**
 * The locks a transaction takes (`TransactionStatements.lock`), which only PostgreSQL runs: there
 * several instances share the store, so what SQLite's single writer serialises by itself needs a
 * lock, held until the transaction ends.
 */
export const POSTGRES_ONLY = {
  /** Serialises run numbering per job (see `insertRun`), and the changes to one job. */
  lockJobPostgres: 'SELECT id FROM jobs WHERE id = :jobId FOR UPDATE',
  /** Serialises take-overs: each sees what the one before it took, so no row is taken twice. */
  takeOverLockPostgres: `SELECT pg_advisory_xact_lock(${TAKE_OVER_LOCK_KEY})`,
  /**
   * Serialise use reservations per person and per project: the next reservation for this person
   * or project (on any instance) waits, and its counts, read after that, include this one.
   */
  userUsesLockPostgres: `SELECT pg_advisory_xact_lock(${USER_USES_LOCK_KEY}, hashtext(:id))`,
  projectUsesLockPostgres: `SELECT pg_advisory_xact_lock(${PROJECT_USES_LOCK_KEY}, hashtext(:id))`,
} as const;

export type QueryName = keyof typeof SHARED;
export type LockName = keyof typeof POSTGRES_ONLY;

/**
 * The database server's own time in epoch milliseconds, read when the statement runs (not when
 * its transaction began): what every instance's ownership decisions are timed by.
 */
const POSTGRES_NOW = '(extract(epoch from clock_timestamp()) * 1000)::bigint';

/**
 * The shared statements in one dialect, still with `:name` parameters. `{{now}}` is the store's
 * clock: the server's on PostgreSQL, the `:clock` parameter on SQLite (one process, so the
 * process's clock is the only one there is).
 */
export function queriesFor(dialect: Dialect): Record<QueryName, string> {
  const lock = dialect === 'postgres' ? 'FOR UPDATE SKIP LOCKED' : '';
  const forUpdate = dialect === 'postgres' ? 'FOR UPDATE' : '';
  const clock = dialect === 'postgres' ? POSTGRES_NOW : ':clock';
  const out = {} as Record<QueryName, string>;
  for (const [name, sql] of Object.entries(SHARED) as [QueryName, string][]) {
    out[name] = sql
      .replace('{{lock}}', lock)
      .replace('{{forUpdate}}', forUpdate)
      .replaceAll('{{now}}', clock);
  }
  return out;
}

/** Tables a patch may change. */
export type PatchedTable = 'jobs' | 'runs' | 'outbox' | 'pull_requests';

/**
 * `UPDATE table SET a = :a, … WHERE id = :id` for the defined keys of a patch (snake_case
 * columns, the patch's own keys as parameters); undefined when nothing is to change. With
 * `claimant`, only while the row's claim is still that instance's.
 */
export function updateStatement(
  table: PatchedTable,
  id: number,
  patch: Record<string, unknown>,
  claimant?: string,
): { sql: string; params: Record<string, unknown> } | undefined {
  const keys = Object.keys(patch).filter((key) => patch[key] !== undefined);
  if (keys.length === 0) return undefined;
  const params = Object.fromEntries(keys.map((key) => [key, patch[key]]));
  return {
    sql: updateSql(table, keys, claimant !== undefined),
    params: { ...params, id, ...(claimant === undefined ? {} : { claimant }) },
  };
}

/** The text of each update built so far, by table, columns and fence: patches repeat a few shapes. */
const updateTexts = new Map<string, string>();

function updateSql(table: PatchedTable, keys: string[], fenced: boolean): string {
  const shape = `${table} ${fenced} ${keys.join(' ')}`;
  let sql = updateTexts.get(shape);
  if (sql === undefined) {
    const sets = keys.map((key) => `${key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)} = :${key}`);
    sql = `UPDATE ${table} SET ${sets.join(', ')} WHERE id = :id${fenced ? ' AND claimed_by = :claimant' : ''}`;
    updateTexts.set(shape, sql);
  }
  return sql;
}

/** Values of a statement's named parameters, by name (`:jobId` takes `params.jobId`). */
export type Params = Readonly<Record<string, unknown>>;

/** Thrown when a statement names a parameter its caller did not give. */
export class MissingParameterError extends Error {
  override name = 'MissingParameterError';
  constructor(parameter: string, sql: string) {
    super(`no value for :${parameter} in ${sql.trim().split('\n')[0]}`);
  }
}

/**
 * A `:name` parameter. Not preceded by `:` or a word character, so PostgreSQL casts (`x::text`)
 * and times in literals are left alone. The shared statements hold no `:` inside string literals.
 */
const NAMED = /(?<![:\w]):([A-Za-z_]\w*)/g;

/**
 * A statement written with `:name` parameters as PostgreSQL's `$n` text and its values in order.
 * A name used twice is one parameter. SQLite needs no such step: better-sqlite3 binds `:name`
 * from an object itself (and refuses a missing one the same way).
 */
export function toPostgres(sql: string, params: Params): { text: string; values: unknown[] } {
  const values: unknown[] = [];
  const numbers = new Map<string, number>();
  const text = sql.replace(NAMED, (_match, name: string) => {
    let n = numbers.get(name);
    if (n === undefined) {
      if (!Object.hasOwn(params, name)) throw new MissingParameterError(name, sql);
      n = values.push(params[name]);
      numbers.set(name, n);
    }
    return `$${n}`;
  });
  return { text, values };
}
