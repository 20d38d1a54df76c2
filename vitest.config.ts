import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'property-tests/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Three files at a time on the two-core machine: most of a test's time is spent waiting (on
    // child processes, servers, timers), and the suite passes with two full runs side by side
    // (four workers). Fewer made `npm test` take over 10 minutes.
    maxWorkers: 3,
    // Off unless asked for (`npm run coverage`, or `--coverage.enabled` as CI does). Counts only
    // code run in vitest's workers: what runs only in spawned children (the CLI's end-to-end
    // tests, fault-test members) is not counted.
    coverage: {
      provider: 'v8',
      include: ['src/**/*.ts'],
      reporter: ['text-summary'],
    },
  },
})
