import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { checkedRow } from '../../src/store/row-checks.js';

const word = z.custom<string>((value) => typeof value === 'string');
const columns = {
  id: z.number().int(),
  name: z.string(),
  note: z.string().nullable(),
  at: z.number().int().nullable(),
  phase: word,
  stopped: word.nullable(),
};
const VALUES = [
  0,
  1,
  -7,
  2 ** 53 - 1,
  2 ** 53,
  1.5,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  '',
  'x',
  '12',
  null,
  undefined,
  true,
  {},
  [],
];

/** Rows with every column set to each of the values in turn, the others kept valid. */
function* rows(): Generator<Record<string, unknown>> {
  const valid = { id: 1, name: 'n', note: null, at: 5, phase: 'active', stopped: null };
  yield valid;
  for (const name of Object.keys(valid)) for (const value of VALUES) yield { ...valid, [name]: value };
  yield { ...valid, extra: 'a later column' };
  const { name: _name, ...missing } = valid;
  yield missing;
}

describe('checkedRow', () => {
  for (const [kind, schema] of [
    ['a row type', z.object(columns)],
    ['a strict row type', z.strictObject(columns)],
  ] as const) {
    it(`passes, for ${kind}, only what the schema passes, and gives it as the schema gives it`, () => {
      const check = checkedRow(schema);
      let passed = 0;
      for (const row of rows()) {
        const fast = check(row);
        const parsed = schema.safeParse(row);
        if (fast === undefined) continue;
        passed++;
        expect(parsed.success, JSON.stringify(row)).toBe(true);
        expect(Object.keys(fast)).toEqual(Object.keys(parsed.data ?? {}));
        expect(fast).toEqual(parsed.data);
      }
      // Every value the schema passes unchanged is checked without it.
      expect(passed).toBeGreaterThan(10);
    });
  }

  it('leaves a row type with a column beyond plain checks to its schema', () => {
    const payload = z.preprocess((value) => JSON.parse(String(value)), z.object({ type: z.string() }));
    expect(checkedRow(z.object({ id: z.number().int(), payload }))({ id: 1, payload: '{"type":"a"}' })).toBe(
      undefined,
    );
    expect(checkedRow(z.object({ n: z.number().int().min(1) }))({ n: 5 })).toBe(undefined);
    expect(checkedRow(z.object({ s: z.coerce.string() }))({ s: 'x' })).toBe(undefined);
  });

  it('refuses a column a strict row type does not name, and passes over it otherwise', () => {
    expect(checkedRow(z.strictObject({ n: z.number().int() }))({ n: 1, m: 2 })).toBe(undefined);
    expect(checkedRow(z.object({ n: z.number().int() }))({ n: 1, m: 2 })).toEqual({ n: 1 });
  });
});
