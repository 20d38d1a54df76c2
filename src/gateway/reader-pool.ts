import type { PartitionReader, TopicStore } from '../backends/backend.js'
import { perStore } from './per-store.js'

/** Readers parked at most this long unused. */
const IDLE_MS = 5_000
/** Parked readers per store at most (the oldest is closed first). */
const MAX_PARKED = 256

interface Parked {
  reader: PartitionReader
  timer: ReturnType<typeof setTimeout>
}

const pools = perStore<Parked>()
const keyOf = (topic: string, partition: number, incarnation: number, at: number): string => `${topic}~${partition}@${incarnation}:${at}`

/**
 * A reader of one partition of a topic incarnation at `from`: one parked there by an earlier
 * request when there is one (no segment listing, start file or fd open), else a new one. Hand it
 * back with {@link park} when done, or close it.
 */
export async function takeReader(store: TopicStore, topic: string, partition: number, incarnation: number, from: number): Promise<PartitionReader> {
  const pool = pools(store)
  const key = keyOf(topic, partition, incarnation, from)
  const hit = pool.get(key)
  if (hit) {
    pool.delete(key)
    clearTimeout(hit.timer)
    if (hit.reader.next === from) return hit.reader
    void hit.reader.close().catch(() => undefined)
  }
  return store.openReader(topic, partition, from)
}

/** Keep a reader open for the next request that reads on from where it is (closed after 5 s unused). */
export function park(store: TopicStore, topic: string, partition: number, incarnation: number, reader: PartitionReader): void {
  const pool = pools(store)
  const key = keyOf(topic, partition, incarnation, reader.next)
  if (pool.has(key)) {
    void reader.close().catch(() => undefined)
    return
  }
  if (pool.size >= MAX_PARKED) {
    const [oldest] = pool.keys()
    if (oldest !== undefined) drop(pool, oldest)
  }
  const timer = setTimeout(() => drop(pool, key), IDLE_MS)
  timer.unref()
  pool.set(key, { reader, timer })
}

function drop(pool: Map<string, Parked>, key: string): void {
  const p = pool.get(key)
  if (!p) return
  pool.delete(key)
  clearTimeout(p.timer)
  void p.reader.close().catch(() => undefined)
}

/** Close the parked readers of a topic (`undefined`: of every topic), e.g. after it is deleted or when the gateway closes. */
export function closeParked(store: TopicStore, topic?: string): void {
  const pool = pools(store)
  for (const key of [...pool.keys()]) if (topic === undefined || key.startsWith(`${topic}~`)) drop(pool, key)
}
