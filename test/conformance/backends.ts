/**
 * The backends the conformance and consumer-core suites run against (not a test file). Each test
 * gets a fresh store: a new temporary directory, or a new key prefix on the suite's private
 * redis-server.
 */
import { randomBytes } from 'node:crypto'
import { Cluster, Redis } from 'ioredis'
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest'
import { open, type FileOpenOptions, type Twain } from '../../src/index.js'
import { selectKinds } from '../helpers/backend-filter.js'
import { RedisCluster } from '../helpers/redis-cluster.js'
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

/** What a store kind can do where the contract leaves room (as `Capabilities` in test/contract/kinds.ts). */
export interface StoreCaps {
  /** Message headers are stored (twainmq-v1: a send with headers, so a dead letter, is refused with `InvalidArgumentError`). */
  headers: boolean
  /** `trim` works (twainmq-v1 refuses it with `InvalidArgumentError`: TwainMQ keeps every day chunk). */
  trim: boolean
  /** Retention limits are accepted (twainmq-v1: `createTopic` with limits rejects with `InvalidArgumentError`). */
  retention: boolean
  /** `mode: 'shared'` consumers exist (Redis only). */
  shared: boolean
}

export interface BackendKind {
  /** 'twainmq-v1': the file backend on a Python TwainMQ 0.1.9 root (`format: 'twainmq-v1'`). */
  name: 'file' | 'redis' | 'cluster' | 'twainmq-v1'
  caps: StoreCaps
  /** Redis or a Redis Cluster (the Redis backend). */
  redis: boolean
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
  /** A client for key commands on the suite's Redis or Cluster (redis kinds only). */
  keyClient?: () => Redis | Cluster
  /** `CLIENT LIST` of every server (redis kinds only). */
  clientList?: () => Promise<string>
}

const file = (format: 'native' | 'twainmq-v1' = 'native'): BackendKind => {
  const dirs: Array<() => void> = []
  // As the contract suite's `twainmq-v1` kind (test/contract/kinds.ts), through open(): its topics are
  // created in the TwainMQ format; groups and their coordination are the file backend's own.
  const formatOption = format === 'native' ? {} : { format }
  return {
    name: format === 'native' ? 'file' : format,
    caps:
      format === 'native'
        ? { headers: true, trim: true, retention: true, shared: false }
        : { headers: false, trim: false, retention: false, shared: false },
    redis: false,
    hooks() {
      afterAll(() => {
        for (const rm of dirs.splice(0)) rm()
      })
    },
    store() {
      const t = tempDir('twainmq-conf-')
      dirs.push(t.remove)
      return { target: t.dir, prefix: '', open: (o) => open(t.dir, { pollMs: 50, ...formatOption, ...o }) }
    },
    waitingReads: () => Promise.resolve(directoryWatches()),
  }
}

const redis = (): BackendKind => {
  let server: RedisServer | undefined
  let admin: Redis | undefined
  return {
    name: 'redis',
    caps: { headers: true, trim: true, retention: true, shared: true },
    redis: true,
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
    keyClient: () => admin as Redis,
    clientList: async () => String(await (admin as Redis).client('LIST')),
  }
}

/** A 3-master Redis Cluster with a replica each, one per test file; each test a fresh key prefix. */
const cluster = (): BackendKind => {
  let nodes: RedisCluster | undefined
  let client: Cluster | undefined
  const started = (): RedisCluster => {
    if (!nodes) throw new Error('Redis Cluster not started (call hooks() in the describe block)')
    return nodes
  }
  const masters = async () => {
    const c = started()
    return (await c.masters()).map((m) => c.admin(m))
  }
  return {
    name: 'cluster',
    caps: { headers: true, trim: true, retention: true, shared: true },
    redis: true,
    hooks() {
      beforeAll(async () => {
        nodes = await RedisCluster.start()
        client = new Cluster(
          nodes.nodes.map((n) => ({ host: '127.0.0.1', port: n.port })),
          { redisOptions: { protocol: 2 } },
        )
      }, 60_000)
      afterAll(async () => {
        client?.disconnect()
        await nodes?.destroy()
      })
    },
    store() {
      const url = started().url
      const prefix = `c${randomBytes(5).toString('hex')}:`
      return { target: url, prefix, open: (o) => open(url, { prefix, ...o }) }
    },
    async waitingReads() {
      let n = 0
      for (const m of await masters()) n += await blockedClients(m)
      return n
    },
    keyClient: () => client as Cluster,
    async clientList() {
      const lists = await Promise.all((await masters()).map((m) => m.client('LIST')))
      return lists.map(String).join('\n')
    },
  }
}

/** Every backend kind, for `describe.each(backends())('… on $name', (kind) => …)`. */
export const backends = (): BackendKind[] => selectKinds([file(), redis(), cluster()])

/**
 * Every store kind: both backends and the Python TwainMQ store (a file root in TwainMQ 0.1.9
 * format). The consumer-core suites (test/integration/groups/groups-*.test.ts) run on these.
 */
export const everyStore = (): BackendKind[] => selectKinds([file(), redis(), file('twainmq-v1')])

/**
 * Per-test store and a first instance on it, closed after each test (with any extra instances the
 * test opened through `ctx.open`).
 */
export function perTest(
  kind: BackendKind,
  options: FileOpenOptions = {},
): { readonly twain: Twain; readonly store: Store; open(o?: FileOpenOptions): Promise<Twain> } {
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
