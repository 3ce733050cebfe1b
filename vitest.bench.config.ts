import { defineConfig } from 'vitest/config';

/**
 * `npm run bench` (which builds the app first): the benchmark, one long run against loopback
 * stand-ins; `npm run bench:report`: publishes a run's raw report and the figures made from it.
 */
export default defineConfig({
  test: {
    include: ['bench/**/*.run.ts'],
    testTimeout: 1_200_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
