import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'property-tests/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Tests spawn their own child processes; two cores, so keep file-level parallelism modest.
    maxWorkers: 2,
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
