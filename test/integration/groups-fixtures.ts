/**
 * Shared fixtures of the groups-*.test.ts files (not a test file): a fresh file store per test,
 * small group timings, and helpers that send, poll and iterate.
 */
import { afterEach, beforeEach } from 'vitest'
import { open, type Consumer, type ConsumerOptions, type GroupMessage, type Twain } from '../../src/index.js'
import { tempDir } from '../helpers/tmp.js'
import { until } from '../helpers/wait.js'

/** Small timings so the suites stay fast. */
export const FAST = { sessionTimeoutMs: 2000, heartbeatIntervalMs: 200, commitIntervalMs: 100 } satisfies Partial<ConsumerOptions>

let tmp: ReturnType<typeof tempDir> | undefined
/** The current test's store (a live binding: set by `useGroupStore`'s beforeEach). */
export let twain: Twain

/** Call once at the top of a test file: each test gets a fresh directory and a `twain` open on it. */
export function useGroupStore(): void {
  beforeEach(async () => {
    tmp = tempDir('twainmq-groups-')
    twain = await open(tmp.dir, { pollMs: 50 })
  })
  afterEach(async () => {
    try {
      await twain.close()
    } finally {
      tmp?.remove()
      tmp = undefined
    }
  })
}

/** The current test's store directory (to open another instance on it). */
export function storeDir(): string {
  if (!tmp) throw new Error('storeDir() outside a test: call useGroupStore() in the file')
  return tmp.dir
}

/** Send `n` string messages to one partition; values `${prefix}${i}`. */
export async function fill(topic: string, partition: number, n: number, prefix = `p${partition}-`): Promise<void> {
  if (n === 0) return
  await twain.producer<string>(topic).sendBatch(Array.from({ length: n }, (_, i) => ({ key: i, value: `${prefix}${i}`, partition })))
}

/** Wait until `poll()` has handed out `n` messages (non-blocking polls in a loop). */
export async function pollN<V>(c: Consumer<V>, n: number, ms = 5000): Promise<GroupMessage<V>[]> {
  const out: GroupMessage<V>[] = []
  await until(() => {
    out.push(...c.pollMany(n - out.length))
    return out.length >= n
  }, ms, `${n} polled messages (got ${out.length})`)
  return out
}

/** The next `n` messages of a `for await` view (the view is ended with break). */
export async function iterN<V>(c: Consumer<V>, n: number, onMessage?: (m: GroupMessage<V>) => void): Promise<GroupMessage<V>[]> {
  const out: GroupMessage<V>[] = []
  if (n === 0) return out
  for await (const m of c) {
    out.push(m)
    onMessage?.(m)
    if (out.length >= n) break
  }
  return out
}

/** The committed offsets of `group` on `topic`, by partition. */
export async function committed(group: string, topic: string): Promise<number[]> {
  const d = await twain.describeGroup(group)
  return d.topics.filter((t) => t.topic === topic).sort((a, b) => a.partition - b.partition).map((t) => t.committed)
}

/** Until `c` owns exactly `n` partitions. */
export async function waitAssigned(c: Consumer, n: number, ms = 3000): Promise<void> {
  await until(() => c.assignments().length === n, ms, `${n} assigned partitions (have ${c.assignments().length})`)
}

/** `topic/partition` strings, sorted (to compare sets of partitions). */
export const sortTp = (xs: Array<{ topic: string; partition: number }>): string[] => xs.map((x) => `${x.topic}/${x.partition}`).sort()
