/**
 * The backends every conformance suite runs against (not a test file). Each test gets a fresh
 * store: a new temporary directory, or a new key prefix on the suite's private redis-server.
 */
import { randomBytes } from 'node:crypto'
import { Redis } from 'ioredis'
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest'
import { open, type FileOpenOptions, type Twain } from '../../src/index.js'
import { RedisServer } from '../helpers/redis-server.js'
import { tempDir } from '../helpers/tmp.js'
import { blockedClients, directoryWatches } from '../helpers/waiting-reads.js'

export interface Store {
  /** A path, or a redis:// URL. */
  target: string
  /** Redis key prefix of this store ('' for the file backend). */
  prefix: string
  /** Another instance on the same store. */
  open(options?: FileOpenOptions): Promise<Twain>
}

export interface BackendKind {
  name: 'file' | 'redis'
  /** Call once at the top of a describe block: hooks that start/stop what the backend needs. */
  hooks(): void
  /** A fresh, empty store. */
  store(): Store
  /**
   * How many reads wait for new data right now, so a test can wait until a read is blocked: Redis
   * clients blocked in XREAD/XREADGROUP; for the file backend, open directory watches (a waiting
   * read watches each partition directory it reads). Compare with a count taken before.
   */
  waitingReads(): Promise<number>
  /** The suite's Redis server (redis only). */
  server?: () => RedisServer
}

const file = (): BackendKind => {
  const dirs: Array<() => void> = []
  return {
    name: 'file',
    hooks() {
      afterAll(() => {
        for (const rm of dirs.splice(0)) rm()
      })
    },
    store() {
      const t = tempDir('twainmq-conf-')
      dirs.push(t.remove)
      return { target: t.dir, prefix: '', open: (o) => open(t.dir, { pollMs: 50, ...o }) }
    },
    waitingReads: () => Promise.resolve(directoryWatches()),
  }
}

const redis = (): BackendKind => {
  let server: RedisServer | undefined
  let admin: Redis | undefined
  return {
    name: 'redis',
    hooks() {
      beforeAll(async () => {
        server = await RedisServer.start()
        admin = new Redis({ port: server.port, host: '127.0.0.1', protocol: 2 })
      })
      afterAll(async () => {
        admin?.disconnect()
        await server?.destroy()
      })
    },
    store() {
      if (!server) throw new Error('redis-server not started (call hooks() in the describe block)')
      const url = server.url
      const prefix = `c${randomBytes(5).toString('hex')}:`
      return { target: url, prefix, open: (o) => open(url, { prefix, ...o }) }
    },
    waitingReads() {
      if (!admin) throw new Error('redis-server not started (call hooks() in the describe block)')
      return blockedClients(admin)
    },
    server: () => server as RedisServer,
  }
}

/** Both backends, for `describe.each(backends())('%s', …)`-style use via `kind.name`. */
export const backends = (): BackendKind[] => [file(), redis()]

/**
 * Per-test store and a first instance on it, closed after each test (with any extra instances the
 * test opened through `ctx.open`).
 */
export function perTest(kind: BackendKind, options: FileOpenOptions = {}): { readonly twain: Twain; readonly store: Store; open(o?: FileOpenOptions): Promise<Twain> } {
  let store: Store
  let twain: Twain
  const extra: Twain[] = []
  beforeEach(async () => {
    store = kind.store()
    twain = await store.open(options)
  })
  afterEach(async () => {
    await Promise.all([twain, ...extra.splice(0)].map((t) => t.close().catch(() => undefined)))
  })
  return {
    get twain() {
      return twain
    },
    get store() {
      return store
    },
    async open(o) {
      const t = await store.open(o)
      extra.push(t)
      return t
    },
  }
}
