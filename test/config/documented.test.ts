import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { envSchema } from '../../src/config/env-schema.js';

/** The configuration reference: every variable, and the access rules' own page. */
const REFERENCE = ['docs/configuration.md', 'docs/access-control.md'];

/** The variables a table row of the reference names in its first column. */
const documented = new Set(
  REFERENCE.flatMap((page) =>
    [
      ...readFileSync(new URL(`../../${page}`, import.meta.url), 'utf8').matchAll(
        /^\| `([A-Z][A-Z0-9_]*)` \|/gm,
      ),
    ].map((m) => m[1] as string),
  ),
);

describe('the configuration reference', () => {
  it('has a row for every variable the bot reads', () => {
    const undocumented = Object.keys(envSchema.shape).filter((name) => !documented.has(name));
    expect(documented.size).toBeGreaterThan(10);
    expect(undocumented).toEqual([]);
  });

  it('has no row for a variable the bot does not read', () => {
    const unknown = [...documented].filter((name) => !(name in envSchema.shape));
    expect(unknown).toEqual([]);
  });
});
