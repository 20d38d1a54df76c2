import type { PartitionReader, TopicStore } from '../../backends/backend.js'
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
/**
 * What a reader is kept for: the fold of a stream's state and its data reads both start at the
 * offset the last one reached, so one pool of readers keyed by offset alone would hand the fold's
 * reader to the data read (or the reverse) and make the other open a new one on every wake-up.
 */
export type ReaderLane = 'fold' | 'data'

const keyOf = (lane: ReaderLane, topic: string, partition: number, incarnation: number, at: number): string =>
  `${topic}~${partition}@${incarnation}:${at}/${lane}`

/**
 * A reader of one partition of a topic incarnation at `from`, for `lane`: one parked there by an earlier
 * request when there is one (no segment listing, start file or fd open), else a new one. Hand it
 * back with {@link park} when done, or close it.
 */
export async function takeReader(
  store: TopicStore,
  lane: ReaderLane,
  topic: string,
  partition: number,
  incarnation: number,
  from: number,
): Promise<PartitionReader> {
  const pool = pools(store)
  const key = keyOf(lane, topic, partition, incarnation, from)
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
export function park(
  store: TopicStore,
  lane: ReaderLane,
  topic: string,
  partition: number,
  incarnation: number,
  reader: PartitionReader,
): void {
  const pool = pools(store)
  const key = keyOf(lane, topic, partition, incarnation, reader.next)
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
