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
