import type { Backend, TopicMeta } from '../backends/backend.js'
import type { RecordInput } from '../backends/record.js'
import { ClosedError, abortErrorFrom } from '../core/errors.js'
import { cachedHash64, type Partitioner } from '../core/hash64.js'
import type { TypeRegistry } from '../core/message-types.js'
import { checkInt, checkNonNegative } from '../core/names.js'
import type { Key, RecordMetadata } from '../core/types.js'
import { prepareRecord, type SendItem } from './prepare.js'

/** Options of `twain.producer()`. */
export interface ProducerOptions {
  /** Maps a key to a partition. @default TwainMQ's `hash64(key) % partitions` */
  partitioner?: Partitioner
  /** Wait this long for more sends before writing a batch. 0 = the sends of one tick form a batch. @default 0 */
  lingerMs?: number
  /** Most records written in one batch (larger batches are split). @default 10000 */
  maxBatch?: number
  /** Aborting closes the producer: sends not yet written reject with `AbortError`. */
  signal?: AbortSignal
}

/** Per-send options. */
export interface SendOptions {
  headers?: Record<string, string>
  /** A registered message type: the value is validated and stored as tagged JSON. */
  type?: string
  /** Write to this partition instead of the partitioner's choice. */
  partition?: number
}

interface Pending {
  items: SendItem[]
  resolve: (r: RecordMetadata[]) => void
  reject: (e: unknown) => void
}

const MAX_BATCH_BYTES = 8 * 1024 * 1024

/**
 * Writes messages to one topic. Sends issued in the same tick (or within `lingerMs`) are written
 * as one batch per partition, so `Promise.all` of many `send`s costs one write per partition.
 */
export class Producer<V = unknown> implements AsyncDisposable {
  private queue: Pending[] = []
  private scheduled = false
  private inflight = new Set<Promise<void>>()
  private closed = false
  private meta: Promise<TopicMeta> | undefined
  private readonly partitioner: Partitioner
  private readonly lingerMs: number
  private readonly maxBatch: number
  private readonly offAbort: () => void

  /** @internal Use `twain.producer()`. */
  constructor(
    private readonly backend: Backend,
    readonly topic: string,
    private readonly producerId: string,
    private readonly types: TypeRegistry,
    options: ProducerOptions = {},
    private readonly onClose: (p: Producer<V>) => void = () => undefined,
  ) {
    this.partitioner = options.partitioner ?? cachedHash64()
    this.lingerMs = checkNonNegative('lingerMs', options.lingerMs ?? 0)
    this.maxBatch = checkInt('maxBatch', options.maxBatch ?? 10_000, 1, 1_000_000)
    const signal = options.signal
    const onAbort = () => this.abort(abortErrorFrom(signal as AbortSignal))
    signal?.addEventListener('abort', onAbort, { once: true })
    this.offAbort = () => signal?.removeEventListener('abort', onAbort)
    if (signal?.aborted) this.abort(abortErrorFrom(signal))
  }

  /** Send one message; resolves with where it was written. */
  async send(key: Key, value: V, options: SendOptions = {}): Promise<RecordMetadata> {
    const [r] = await this.enqueue([{ key, value, headers: options.headers, type: options.type, partition: options.partition }])
    return r as RecordMetadata
  }

  /** Send several messages; all are validated first, so one bad item writes nothing. */
  sendBatch(items: Array<{ key: Key; value: V; headers?: Record<string, string>; type?: string; partition?: number }>): Promise<RecordMetadata[]> {
    if (!Array.isArray(items)) return Promise.reject(new TypeError('sendBatch expects an array of { key, value } items'))
    if (items.length === 0) return Promise.resolve([])
    return this.enqueue(items as SendItem[])
  }

  private enqueue(items: SendItem[]): Promise<RecordMetadata[]> {
    if (this.closed) return Promise.reject(new ClosedError(`Producer of topic "${this.topic}" is closed`))
    return new Promise<RecordMetadata[]>((resolve, reject) => {
      this.queue.push({ items, resolve, reject })
      if (!this.scheduled) {
        this.scheduled = true
        if (this.lingerMs > 0) setTimeout(() => this.startFlush(), this.lingerMs)
        else queueMicrotask(() => this.startFlush())
      }
    })
  }

  private startFlush(): void {
    this.scheduled = false
    const batch = this.queue
    this.queue = []
    if (batch.length === 0) return
    const p = this.write(batch).finally(() => this.inflight.delete(p))
    this.inflight.add(p)
  }

  private async write(batch: Pending[]): Promise<void> {
    let meta: TopicMeta
    try {
      this.meta ??= this.backend.getTopic(this.topic)
      meta = await this.meta
    } catch (e) {
      this.meta = undefined
      for (const b of batch) b.reject(e)
      return
    }
    // Prepare every record; a send with a bad item fails alone and writes nothing.
    const ok: Array<{ pending: Pending; records: Array<{ partition: number; record: RecordInput }> }> = []
    for (const pending of batch) {
      try {
        const records = []
        for (const item of pending.items) {
          const r = prepareRecord(meta, item, this.partitioner, this.types)
          records.push(r instanceof Promise ? await r : r)
        }
        ok.push({ pending, records })
      } catch (e) {
        pending.reject(e)
      }
    }
    // Group by partition, keeping send order; remember where each record goes.
    const byPartition = new Map<number, { records: RecordInput[]; slots: Array<[RecordMetadata[], number]> }>()
    const results = ok.map((o) => new Array<RecordMetadata>(o.records.length))
    ok.forEach((o, i) =>
      o.records.forEach(({ partition, record }, j) => {
        let g = byPartition.get(partition)
        if (!g) byPartition.set(partition, (g = { records: [], slots: [] }))
        g.records.push(record)
        g.slots.push([results[i] as RecordMetadata[], j])
      }),
    )
    const failed = new Map<RecordMetadata[], unknown>()
    await Promise.all(
      [...byPartition].map(async ([partition, g]) => {
        for (let start = 0; start < g.records.length; ) {
          let end = start
          let bytes = 0
          while (end < g.records.length && end - start < this.maxBatch && (end === start || bytes < MAX_BATCH_BYTES)) {
            const r = g.records[end] as RecordInput
            bytes += r.key.length + r.value.length + 64
            end++
          }
          try {
            const base = await this.backend.append(this.topic, partition, g.records.slice(start, end), this.producerId)
            for (let k = start; k < end; k++) {
              const [res, j] = g.slots[k] as [RecordMetadata[], number]
              res[j] = { partition, offset: base + (k - start) }
            }
          } catch (e) {
            for (let k = start; k < end; k++) failed.set((g.slots[k] as [RecordMetadata[], number])[0], e)
          }
          start = end
        }
      }),
    )
    ok.forEach((o, i) => {
      const res = results[i] as RecordMetadata[]
      if (failed.has(res)) o.pending.reject(failed.get(res))
      else o.pending.resolve(res)
    })
  }

  /** Resolves when everything sent so far has been written (or has failed). */
  async flush(): Promise<void> {
    if (this.scheduled || this.queue.length) this.startFlush()
    while (this.inflight.size) await Promise.allSettled([...this.inflight])
  }

  /** Flush, then refuse further sends. Idempotent. */
  async close(): Promise<void> {
    if (!this.closed) {
      this.closed = true
      this.offAbort()
      this.onClose(this)
    }
    await this.flush()
  }

  private abort(e: unknown): void {
    const queued = this.queue
    this.queue = []
    for (const q of queued) q.reject(e)
    void this.close()
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close()
  }
}
