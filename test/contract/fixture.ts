/**
 * Small tools of the contract suite (not a test file): topic configurations, records encoded the
 * way the producer encodes them, deadlines, and a call counter to wait on.
 */
import type { Backend, TopicMeta } from '../../src/backends/backend.js'
import type { RecordInput } from '../../src/backends/record.js'
import { hash64 } from '../../src/core/hash64.js'
import { TypeRegistry } from '../../src/core/message-types.js'
import type { Key, Message } from '../../src/core/types.js'
import { Preparer } from '../../src/producer/prepare.js'

/** A topic configuration: 1 partition, `u32` keys, no types, no retention, unless overridden. */
export function topicMeta(name: string, o: Partial<Omit<TopicMeta, 'name'>> = {}): TopicMeta {
  return {
    name,
    partitions: 1,
    keyType: 'u32',
    messageTypes: [],
    retention: {},
    maxMessageBytes: 1024 * 1024,
    createdAt: Date.now(),
    ...o,
  }
}

export interface RecordSpec {
  key?: Key
  /** A string is stored as text, a Buffer as bytes. */
  value: string | Buffer
  headers?: Record<string, string>
}

/**
 * Records for `meta`'s partition 0, encoded by the producer's own `Preparer` (key codec, value
 * encoding, size checks), all stamped `timestamp`. Keys default to the record's index.
 */
export function records(
  meta: TopicMeta,
  specs: ReadonlyArray<RecordSpec | string>,
  timestamp = Date.now(),
): RecordInput[] {
  const prep = new Preparer(meta, hash64, new TypeRegistry(), timestamp)
  return specs.map((s, i) => {
    const spec = typeof s === 'string' ? { value: s } : s
    const key =
      spec.key ??
      (meta.keyType === 'u64' ? BigInt(i) : meta.keyType.startsWith('char') || meta.keyType === 'string' ? `k${i}` : i)
    const r = prep.item({ key, value: spec.value, headers: spec.headers, partition: 0 })
    if (r instanceof Promise) throw new Error('an untyped record is prepared synchronously')
    return r
  })
}

/** `n` text records `${tag}${i}`. */
export const texts = (meta: TopicMeta, tag: string, n: number, timestamp?: number): RecordInput[] =>
  records(
    meta,
    Array.from({ length: n }, (_, i) => `${tag}${i}`),
    timestamp,
  )

/** `p`, or a rejection naming `what` once `ms` have passed. */
export async function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not done within ${ms} ms`)), ms)
  })
  try {
    return await Promise.race([p, late])
  } finally {
    clearTimeout(timer)
  }
}

/** Counts calls of `fn`; `after(n)` resolves once it has been called more than `n` times. */
export class Calls {
  count = 0
  private waiters: Array<{ n: number; resolve: () => void }> = []
  readonly fn = (): void => {
    this.count++
    this.waiters = this.waiters.filter((w) => (this.count > w.n ? (w.resolve(), false) : true))
  }

  after(n: number, ms: number, what: string): Promise<void> {
    if (this.count > n) return Promise.resolve()
    return within(new Promise<void>((resolve) => this.waiters.push({ n, resolve })), ms, what)
  }
}

/** The backend's end-offset snapshot (index = partition), taken now (`endOffsetsSnapshot`). */
export function endSnapshot(b: Backend, topic: string): Promise<number[]> {
  const snap = b.endOffsetsSnapshot(topic)
  if (snap === undefined) throw new Error(`backend ${b.kind} has no end-offset snapshot for "${topic}"`)
  return Promise.resolve(snap)
}

/** Read a partition from `from` to its end with one reader (reads of up to `max`). */
export async function readAll(b: Backend, topic: string, from = 0, max = 1000): Promise<Message[]> {
  const r = await b.openReader(topic, 0, from)
  try {
    const out: Message[] = []
    for (;;) {
      const got = await within(r.read(max), 5000, `read of ${topic}`)
      if (got.length === 0) return out
      out.push(...got)
    }
  } finally {
    await r.close()
  }
}
