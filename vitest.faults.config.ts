import { defineConfig } from 'vitest/config';

/** The fault-injection suite: the built app as a child process, killed and restarted. */
export default defineConfig({
  test: {
    include: ['test/faults/**/*.faults.ts'],
    globalSetup: ['test/faults/global-setup.ts'],
    testTimeout: 120_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
});
