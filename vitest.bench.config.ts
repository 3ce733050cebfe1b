import { defineConfig } from 'vitest/config';

/** `npm run bench`: the benchmark, one long run against loopback stand-ins. */
export default defineConfig({
  test: {
    include: ['bench/**/*.run.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 1_200_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
