import { defineConfig } from 'vitest/config';

/**
 * The tests `npm run mutate` (Stryker, see scripts/mutate.mjs) runs against each mutant:
 * `MUTATE_TESTS` (comma-separated globs), the tests that hold the module being mutated. Chosen
 * here rather than with Stryker's `--testFiles`, which in 9.6.1 activates a mutant of a
 * module-level value (a regular expression, a set) only after the module was loaded, so such a
 * mutant would survive every test (stryker-js#6144). The tests that start the built app are left out,
 * so there is no global setup building `dist`; each test file gets its own modules.
 */
export default defineConfig({
  test: {
    include: process.env.MUTATE_TESTS?.split(',') ?? ['test/**/*.test.ts'],
    exclude: ['test/index.test.ts', 'test/tools/migrate.test.ts', 'test/faults/**', 'node_modules/**'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
});
