import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'property-tests/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Tests spawn their own child processes; two cores, so keep file-level parallelism modest.
    maxWorkers: 2,
  },
})
