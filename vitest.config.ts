import { defineConfig } from 'vitest/config'

/**
 * `test/chaos/` holds the processing storms (kill -9 every few seconds, a model counting every
 * output): minutes each, so `npm test` leaves them to their own tier, `npm run test:chaos`
 * (`TWAINMQ_TEST_TIER=chaos`). CI runs both. `TWAINMQ_TEST_TIER=all` runs everything in one run.
 */
const tier = process.env.TWAINMQ_TEST_TIER ?? 'default'
if (!['default', 'chaos', 'all'].includes(tier))
  throw new Error(`TWAINMQ_TEST_TIER must be default, chaos or all, not ${JSON.stringify(tier)}`)
const chaos = 'test/chaos/**/*.test.ts'

export default defineConfig({
  test: {
    include: tier === 'chaos' ? [chaos] : ['test/**/*.test.ts', 'property-tests/**/*.test.ts'],
    exclude: tier === 'default' ? ['**/node_modules/**', chaos] : ['**/node_modules/**'],
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
