import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: 'forks',
    // Test files share their workers' module cache: every test builds its own app, store and
    // stand-ins, and no module keeps state of its own (metrics use a registry per app), so
    // loading the modules once per worker instead of once per file saves about 40% of the run.
    isolate: false,
    // Two test files at a time: most of a test's time is spent waiting on loopback servers and
    // child processes, so a second worker roughly halves the run on two cores.
    maxWorkers: 2,
  },
});
