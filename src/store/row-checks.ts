import type { z } from 'zod';

/*
 * Rows checked without running their schema, where that gives the same answer: a row is read
 * many times a job (a job's row has forty columns), and a schema's run costs several times a
 * plain check of each column. What a plain check cannot pass goes through the schema.
 */

type Check = (value: unknown) => boolean;

/**
 * A check of one column that passes exactly the values its schema passes unchanged, for the
 * kinds of column the tables have (text, safe integers, words, and those nullable); undefined
 * for any other (a payload read as JSON), which only the schema can read.
 */
function checkOf(schema: z.ZodType): Check | undefined {
  const def = schema._zod.def as {
    type: string;
    checks?: { _zod: { def: { check?: string; format?: string } } }[];
    innerType?: z.ZodType;
    fn?: Check;
    coerce?: boolean;
  };
  const checks = def.checks ?? [];
  if (def.coerce) return undefined;
  switch (def.type) {
    case 'string':
      return checks.length === 0 ? (value) => typeof value === 'string' : undefined;
    case 'number':
      return checks.length === 1 && checks[0]?._zod.def.format === 'safeint'
        ? Number.isSafeInteger
        : undefined;
    case 'nullable': {
      const inner = def.innerType && checkOf(def.innerType);
      return inner && ((value) => value === null || inner(value));
    }
    case 'custom':
      return def.fn && checks.length === 0 ? (value) => Boolean(def.fn?.(value)) : undefined;
    default:
      return undefined;
  }
}

/**
 * The columns of an object schema whose every column {@link checkOf} can check, in its order,
 * and whether it refuses columns it does not name; undefined when one of them is beyond it.
 */
function columnChecks(schema: z.ZodType): { columns: [string, Check][]; strict: boolean } | undefined {
  const def = schema._zod.def as { type: string; shape?: Record<string, z.ZodType>; catchall?: z.ZodType };
  if (def.type !== 'object' || !def.shape) return undefined;
  const strict = def.catchall?._zod.def.type === 'never';
  if (def.catchall && !strict) return undefined;
  const columns: [string, Check][] = [];
  for (const [name, column] of Object.entries(def.shape)) {
    const check = checkOf(column);
    if (!check) return undefined;
    columns.push([name, check]);
  }
  return { columns, strict };
}

/**
 * The row as `schema` (an object of checkable columns) gives it: its columns, in the schema's
 * order, when every one passes its check and, for a strict schema, it has no others; undefined
 * otherwise (and always, for a schema beyond the checks), for the schema to read or refuse.
 */
export function checkedRow<S>(schema: z.ZodType<S>): (row: Record<string, unknown>) => S | undefined {
  const fast = columnChecks(schema);
  if (!fast) return () => undefined;
  const known = new Set(fast.columns.map(([name]) => name));
  return (row) => {
    if (fast.strict) for (const name in row) if (!known.has(name)) return undefined;
    const out: Record<string, unknown> = {};
    for (const [name, check] of fast.columns) {
      const value = row[name];
      if (!check(value)) return undefined;
      out[name] = value;
    }
    return out as S;
  };
}
