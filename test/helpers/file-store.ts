/**
 * The per-test file store of the integration tests (not a test file): before each test a fresh
 * temporary directory with a `Twain` open on it, after each test the `Twain` closed and the
 * directory removed.
 */
import { afterEach, beforeEach } from 'vitest'
import { open, type FileOpenOptions, type Twain } from '../../src/index.js'
import { tempDir } from './tmp.js'

export interface FileStore {
  /** The current test's instance. */
  readonly twain: Twain
  /** The current test's store directory. */
  readonly dir: string
}

/**
 * Call in a describe block (or at the top of a file). `setup` runs on the fresh instance before
 * each test (topics, messages the tests share).
 */
export function useFileStore(options: FileOpenOptions = {}, setup?: (twain: Twain) => Promise<void>): FileStore {
  let tmp: ReturnType<typeof tempDir> | undefined
  let twain: Twain | undefined
  beforeEach(async () => {
    tmp = tempDir()
    twain = await open(tmp.dir, options)
    await setup?.(twain)
  })
  afterEach(async () => {
    try {
      await twain?.close()
    } finally {
      tmp?.remove()
      tmp = undefined
      twain = undefined
    }
  })
  const outside = (): never => {
    throw new Error('useFileStore(): the store exists only while a test runs')
  }
  return {
    get twain() {
      return twain ?? outside()
    },
    get dir() {
      return tmp?.dir ?? outside()
    },
  }
}
