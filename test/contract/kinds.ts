/**
 * The implementations of the backend contract (`src/backends/backend.ts`) the contract suite runs
 * against, and what each legitimately lacks (not a test file). A new implementation (Redis
 * Cluster) is one more entry in `kinds()`; a test that depends on a capability asserts the
 * documented refusal for the implementations without it instead of skipping them.
 */
import { randomBytes } from 'node:crypto'
import { afterAll, afterEach, beforeAll } from 'vitest'
import type { Backend } from '../../src/backends/backend.js'
import { FileBackend } from '../../src/backends/file/file-backend.js'
import { RedisBackend } from '../../src/backends/redis/redis-backend.js'
import { twainmqFormat } from '../../src/compat/twainmq/twainmq-store.js'
import { selectKinds } from '../helpers/backend-filter.js'
import { RedisServer } from '../helpers/redis-server.js'
import { tempDir } from '../helpers/tmp.js'

/** What an implementation can do, where the contract leaves room. */
export interface Capabilities {
  /**
   * `trimBefore`: 'exact' moves the start to exactly `before`; 'refused' rejects with
   * `InvalidArgumentError` (the twainmq-v1 format keeps every day chunk).
   */
  trim: 'exact' | 'refused'
  /**
   * Retention limits: 'exact' keeps exactly `maxMessages`; 'segments' deletes whole segments, never
   * the active one (keeps at least `maxMessages`); 'none': `createTopic` with limits rejects with
   * `InvalidArgumentError` and `applyRetention` removes nothing.
   */
  retention: 'exact' | 'segments' | 'none'
  /** `TopicMeta.createdAt` is stored as given (else: the config file's time). */
  storesCreatedAt: boolean
  /** Record headers are stored (else: an append with headers rejects with `InvalidArgumentError`). */
  headers: boolean
  /** `Message.producerId` is stored (else: it reads back as ''). */
  producerId: boolean
  /** `endOffsetsSnapshot` answers synchronously ('now') or with a promise issued at the call ('soon'). */
  endOffsets: 'now' | 'soon'
  /** `markAccess`/`lastAccess` keep a topic's last access for every instance (else lastAccess stays undefined). */
  accessTimes: boolean
  /** `Backend.shared` (shared groups) exists. */
  shared: boolean
  /**
   * Compacted topics: 'passes' runs `compact` passes; 'refused': `createTopic` with `compact`
   * rejects with `InvalidArgumentError` (the twainmq-v1 format keeps every record).
   */
  compaction: 'passes' | 'refused'
}

/** Options of one instance on a store (file kinds only; Redis ignores them). */
export interface InstanceOptions {
  /** @default 50 */
  pollMs?: number
  /** @default 64 MiB */
  segmentBytes?: number
}

/** One empty store; every instance opened on it sees the same data. */
export interface Store {
  open(options?: InstanceOptions): Promise<Backend>
}

export interface Kind {
  name: string
  caps: Capabilities
  /** Call once at the top of the kind's describe block: starts/stops what the kind needs. */
  hooks(): void
  /** A fresh, empty store. */
  store(): Store
}

function fileKind(name: 'file' | 'twainmq-v1'): Kind {
  const dirs: Array<() => void> = []
  const twainmq = name === 'twainmq-v1'
  return {
    name,
    caps: twainmq
      ? {
          trim: 'refused',
          retention: 'none',
          storesCreatedAt: false,
          headers: false,
          producerId: false,
          endOffsets: 'now',
          accessTimes: false,
          shared: false,
          compaction: 'refused',
        }
      : {
          trim: 'exact',
          retention: 'segments',
          storesCreatedAt: true,
          headers: true,
          producerId: true,
          endOffsets: 'now',
          accessTimes: true,
          shared: false,
          compaction: 'passes',
        },
    hooks() {
      afterAll(() => {
        for (const rm of dirs.splice(0)) rm()
      })
    },
    store() {
      const t = tempDir('twainmq-contract-')
      dirs.push(t.remove)
      return {
        async open(o = {}) {
          const b = new FileBackend(t.dir, {
            pollMs: o.pollMs ?? 50,
            ...(o.segmentBytes === undefined ? {} : { segmentBytes: o.segmentBytes }),
            // As open() builds it for format 'twainmq-v1' (src/facade/twain.ts).
            ...(twainmq
              ? { foreign: { create: (root, hub) => twainmqFormat(root, hub, {}), createTopicsInIt: true } }
              : {}),
          })
          await b.init()
          return b
        },
      }
    },
  }
}

function redisKind(): Kind {
  let server: RedisServer | undefined
  return {
    name: 'redis',
    caps: {
      trim: 'exact',
      retention: 'exact',
      storesCreatedAt: true,
      headers: true,
      producerId: true,
      endOffsets: 'soon',
      accessTimes: true,
      shared: true,
      compaction: 'passes',
    },
    hooks() {
      beforeAll(async () => {
        server = await RedisServer.start()
      })
      afterAll(async () => {
        await server?.destroy()
      })
    },
    store() {
      if (!server) throw new Error('redis-server not started (call hooks() in the describe block)')
      const url = server.url
      const prefix = `k${randomBytes(5).toString('hex')}:`
      return {
        open: () =>
          RedisBackend.connect(
            { url, cluster: false },
            { prefix, clientId: `contract-${randomBytes(3).toString('hex')}` },
          ),
      }
    },
  }
}

/** Every implementation, for `describe.each(kinds())('$name', (kind) => …)`. */
export const kinds = (): Kind[] => selectKinds([fileKind('file'), fileKind('twainmq-v1'), redisKind()])

/**
 * Per test: `fresh()` makes a new store and opens a first instance on it, `open()` another instance
 * on the same store; every instance is closed after the test.
 */
export function perTest(kind: Kind): {
  fresh(o?: InstanceOptions): Promise<Backend>
  open(o?: InstanceOptions): Promise<Backend>
} {
  let store: Store | undefined
  const opened: Backend[] = []
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((b) => b.close().catch(() => undefined)))
    store = undefined
  })
  const open = async (o?: InstanceOptions): Promise<Backend> => {
    store ??= kind.store()
    const b = await store.open(o)
    opened.push(b)
    return b
  }
  return {
    fresh(o) {
      store = kind.store()
      return open(o)
    },
    open,
  }
}
