import { defineConfig } from 'vitest/config';

/**
 * `npm run bench` (which builds the app first): the benchmark, one long run against loopback
 * stand-ins; `npm run bench:report`: publishes a run's raw report and the figures made from it.
 */
export default defineConfig({
  test: {
    include: ['bench/**/*.run.ts'],
    // The whole benchmark is one test of about 37 minutes (the busy workspace alone, about 20).
    testTimeout: 3_600_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
