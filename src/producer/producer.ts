import type { Backend, TopicMeta } from '../backends/backend.js'
import { ClosedError, InvalidArgumentError, TopicNotFoundError, abortErrorFrom } from '../core/errors.js'
import { cachedHash64, type Partitioner } from '../core/hash64.js'
import { checkInt, checkNonNegative } from '../core/names.js'
import type { Key, RecordMetadata } from '../core/types.js'
import { MAX_WINDOW_MS } from '../backends/record.js'
import { appendIdempotent, hasIds } from './idempotent.js'
import { IssueOrder } from './issue-order.js'
import { MAX_BATCH_BYTES, chunkEnd, place } from './partition-batches.js'
import { Preparer, type TypeCheck } from './prepare.js'
import { SendRecord, settleSend, type PreparedRecord, type SendItem } from './send-record.js'
import { TextFlusher } from './text-flush.js'
import type { InstanceTelemetry } from '../telemetry/hooks.js'

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
  /**
   * How long a send's `id` is remembered: a send whose id its partition stored within this many
   * milliseconds (by any producer, process or restart) is not stored again and resolves with the
   * stored message's offset (`duplicate: true`). From 1 ms to a day. A partition remembers at least its
   * last 100,000 ids (`MAX_REMEMBERED_IDS`) whatever the window. @default 300000 (5 minutes)
   */
  dedupWindowMs?: number
  /**
   * A send made inside an active OpenTelemetry span stores its W3C trace context in the message's
   * headers (`traceparent`, `tracestate`): README, "Observability". Only where the application has
   * `@opentelemetry/api` and `open()` did not turn telemetry off.
   * @default the `open()` option `telemetry.propagate` (true)
   */
  propagate?: boolean
}

/** Per-send options. */
export interface SendOptions {
  headers?: Record<string, string>
  /** A registered message type: the value is validated and stored as tagged JSON. */
  type?: string
  /** Write to this partition instead of the partitioner's choice. */
  partition?: number
  /**
   * An idempotency id (at most 512 UTF-8 bytes): a send whose id the partition stored within the
   * producer's `dedupWindowMs` is not stored again and resolves with the stored message's offset
   * and `duplicate: true`. Stored as the header `x-twain-id`, which readers see. Ids are per
   * partition: send a retried message with the same key (or `partition`).
   */
  id?: string
  /**
   * The message's event time: ms since the epoch (a finite number ≥ 0, fractions allowed) or a
   * `Date`, stored as its `timestamp`; anything else is an `InvalidArgumentError`. Timestamps need
   * not grow with offsets: reads `from: { time }` start at the first offset whose timestamp is at
   * or after the time, and retention by age removes only what is older (see the README). Not
   * with `id` (refused: an id is remembered by the time its message is stored).
   * @default the time the message is appended
   * @example producer.send(key, reading, { timestamp: reading.measuredAt })
   */
  timestamp?: number | Date
}

/** A queued `sendBatch` (resolves with an array); single sends queue as `SendRecord`s. */
interface BatchPending {
  items: SendItem[]
  resolve: (r: RecordMetadata[]) => void
  reject: (e: unknown) => void
  /** Filled in when the flush prepares it; undefined when it failed validation (already rejected). */
  prepared?: PreparedRecord[] | undefined
}
type Pending = BatchPending | SendRecord

/**
 * Writes messages to one topic. Sends issued in the same tick (or within `lingerMs`) are written
 * as one batch per partition, so `Promise.all` of many `send`s costs one write per partition.
 * `K` narrows the keys `send` accepts at compile time (`Producer<Order, number>` refuses string
 * keys); at run time keys are checked against the topic's key type (`InvalidKeyError`).
 */
export class Producer<V = unknown, K extends Key = Key> implements AsyncDisposable {
  private queue: Pending[] = []
  /** Every queued send is a plain text send (see `TextFlusher`); with the UTF-16 units of their values. */
  private textOnly = true
  private textUnits = 0
  /** The backend's frame path, when it has one. */
  private readonly text: TextFlusher | undefined
  private readonly order = new IssueOrder()
  private scheduled = false
  private inflight = new Set<Promise<void>>()
  private closed = false
  private meta: Promise<TopicMeta> | undefined
  /** What `meta` resolved to, so a flush after the first reads it without awaiting. */
  private metaNow: TopicMeta | undefined
  private readonly forgetMeta = (): void => void (this.meta = this.metaNow = undefined)
  private readonly partitioner: Partitioner
  private readonly lingerMs: number
  private readonly maxBatch: number
  private readonly dedupWindowMs: number
  private readonly offAbort: () => void
  /** Where sends inside a span store its context in their headers (undefined: they do not). */
  private readonly tracing: InstanceTelemetry | undefined

  /** @internal Use `twain.producer()`. */
  constructor(
    private readonly backend: Backend,
    readonly topic: string,
    private readonly producerId: string,
    private readonly types: TypeCheck,
    options: ProducerOptions = {},
    private readonly onClose: (p: Producer<V, K>) => void = () => undefined,
    telemetry?: InstanceTelemetry,
  ) {
    if (options.propagate !== undefined && typeof options.propagate !== 'boolean')
      throw new InvalidArgumentError(`propagate must be a boolean, got ${JSON.stringify(options.propagate)}`)
    this.tracing = (options.propagate ?? telemetry?.propagate) ? telemetry : undefined
    this.text = backend.frames ? new TextFlusher(backend.frames, topic, producerId) : undefined
    this.partitioner = options.partitioner ?? cachedHash64()
    this.lingerMs = checkNonNegative('lingerMs', options.lingerMs ?? 0)
    this.maxBatch = checkInt('maxBatch', options.maxBatch ?? 10_000, 1, 1_000_000)
    this.dedupWindowMs = checkInt('dedupWindowMs', options.dedupWindowMs ?? 300_000, 1, MAX_WINDOW_MS)
    const signal = options.signal
    const onAbort = () => this.abort(abortErrorFrom(signal as AbortSignal))
    signal?.addEventListener('abort', onAbort, { once: true })
    this.offAbort = () => signal?.removeEventListener('abort', onAbort)
    if (signal?.aborted) this.abort(abortErrorFrom(signal))
  }

  /**
   * Send one message; resolves with where it was written. A string is stored as text, bytes as
   * bytes, anything else as JSON — refused with `InvalidArgumentError` where JSON would change it
   * (`NaN`, a `Map`, a function inside an object…); a `Date` is stored as its ISO string.
   */
  send(key: K, value: V, options?: SendOptions): Promise<RecordMetadata> {
    if (this.closed) return Promise.reject(new ClosedError(`Producer of topic "${this.topic}" is closed`))
    if (this.tracing !== undefined) {
      const sc = this.tracing.activeContext()
      if (sc !== undefined) options = { ...options, headers: this.tracing.withContext(options?.headers, sc) }
    }
    const r = new SendRecord(key, value, options)
    this.push(r)
    return r.promise
  }

  /** Send several messages; all are validated first, so one bad item writes nothing. */
  sendBatch(
    items: Array<{
      key: K
      value: V
      headers?: Record<string, string>
      type?: string
      partition?: number
      id?: string
      timestamp?: number | Date
    }>,
  ): Promise<RecordMetadata[]> {
    if (!Array.isArray(items))
      return Promise.reject(
        new InvalidArgumentError(
          `sendBatch expects an array of { key, value } items, got ${items === null ? 'null' : typeof items}`,
        ),
      )
    if (items.length === 0) return Promise.resolve([])
    if (this.closed) return Promise.reject(new ClosedError(`Producer of topic "${this.topic}" is closed`))
    const sc = this.tracing?.activeContext()
    if (sc !== undefined) {
      const tracing = this.tracing as InstanceTelemetry
      items = items.map((it) =>
        it !== null && typeof it === 'object' ? { ...it, headers: tracing.withContext(it.headers, sc) } : it,
      )
    }
    return new Promise<RecordMetadata[]>((resolve, reject) =>
      this.push({ items: items as SendItem[], resolve, reject }),
    )
  }

  /** Queue a send for the next flush. */
  private push(p: Pending): void {
    this.queue.push(p)
    if (this.textOnly) {
      if (
        p instanceof SendRecord &&
        typeof p.value === 'string' &&
        p.headers === undefined &&
        p.type === undefined &&
        p.eventTime === undefined // a text frame stamps its records with one time
      )
        this.textUnits += p.value.length + (p.id === undefined ? 0 : p.id.length + 16)
      else this.textOnly = false
    }
    if (!this.scheduled) {
      this.scheduled = true
      if (this.lingerMs > 0) setTimeout(() => this.startFlush(), this.lingerMs)
      else queueMicrotask(() => this.startFlush())
    }
  }

  private startFlush(): void {
    this.scheduled = false
    const batch = this.queue
    const text =
      this.textOnly && batch.length <= this.maxBatch && this.textUnits * 3 + batch.length * 64 < MAX_BATCH_BYTES
    this.queue = []
    this.textOnly = true
    this.textUnits = 0
    if (batch.length === 0) return
    const p = this.write(batch, text).finally(() => this.inflight.delete(p))
    this.inflight.add(p)
  }

  /** Write a flush (`text`: only plain text sends, within one batch's limits). */
  private async write(batch: Pending[], text: boolean): Promise<void> {
    const { ahead, issued } = this.order.take()
    try {
      if (ahead !== undefined) await ahead
      await this.writeInTurn(batch, text, issued)
    } finally {
      issued()
    }
  }

  private async writeInTurn(batch: Pending[], text: boolean, issued: () => void): Promise<void> {
    let meta = this.metaNow
    if (meta === undefined) {
      const lookup = (this.meta ??= this.backend.getTopic(this.topic))
      try {
        meta = await lookup
      } catch (e) {
        if (this.meta === lookup) this.forgetMeta()
        for (const b of batch) b.reject(e)
        return
      }
      if (this.meta === lookup) this.metaNow = meta
    }
    // Prepare every record; a send with a bad item fails alone and writes nothing.
    const prep = new Preparer(meta, this.partitioner, this.types, Date.now())
    const framed = text && this.text?.write(batch as SendRecord[], prep, issued, this.forgetMeta, this.dedupWindowMs)
    if (framed) return framed
    if (batch.length === 1) {
      const single = batch[0] as Pending
      if (single instanceof SendRecord) return this.writeOne(single, prep, issued)
      const batchFramed = this.text?.writeBatch(single, prep, issued, this.forgetMeta, this.maxBatch)
      if (batchFramed) return batchFramed
    }
    const byPartition = new Map<number, PreparedRecord[]>()
    const only: PreparedRecord[] | undefined = meta.partitions === 1 ? [] : undefined
    let bytes = 0
    let singles = 0
    for (const pending of batch) {
      try {
        if (pending instanceof SendRecord) {
          let r = prep.send(pending)
          if (r instanceof Promise) r = await r
          bytes += place(r, only, byPartition)
          singles++
          continue
        }
        const items = pending.items
        const records: PreparedRecord[] = new Array(items.length)
        for (let i = 0; i < items.length; i++) {
          const r = prep.item(items[i] as SendItem)
          records[i] = r instanceof Promise ? await r : r
        }
        pending.prepared = records
        for (const r of records) bytes += place(r, only, byPartition)
      } catch (e) {
        pending.reject(e)
      }
    }
    if (only?.length) byPartition.set(0, only)
    // Write each partition's records in send order; offsets are written back into the records. A
    // send settles when its partition's write does: a slow partition (a master failing over) holds
    // up only the sends to it, and batches spanning it. Its single sends are found in its records
    // (a `SendRecord` is its own prepared record), in send order.
    const failures = new Map<PreparedRecord, unknown>()
    const writes = Promise.all(
      [...byPartition].map(async ([partition, records]) => {
        await this.writePartition(partition, records, failures)
        if (singles > 0) {
          for (let i = 0; i < records.length; i++) {
            const r = records[i] as PreparedRecord
            if (r instanceof SendRecord) settleSend(r, failures)
          }
        }
      }),
    )
    // Every first append is issued now; a partition written in several batches keeps the turn until done.
    if (bytes < MAX_BATCH_BYTES && [...byPartition.values()].every((rs) => rs.length <= this.maxBatch)) issued()
    await writes
    for (const pending of batch) {
      if (pending instanceof SendRecord) continue // settled with its partition, or rejected in preparation
      const records = pending.prepared
      if (records === undefined) continue
      let error: unknown
      if (failures.size) for (const r of records) if (failures.has(r)) error ??= failures.get(r)
      if (error !== undefined) pending.reject(error)
      else {
        const out = new Array<RecordMetadata>(records.length)
        for (let i = 0; i < records.length; i++) {
          const r = records[i] as PreparedRecord
          out[i] = r.duplicate
            ? { partition: r.partition, offset: r.offset, duplicate: true }
            : { partition: r.partition, offset: r.offset }
        }
        pending.resolve(out)
      }
    }
  }

  /** A flush of one `send`: no grouping by partition, one append. */
  private async writeOne(send: SendRecord, prep: Preparer, issued: () => void): Promise<void> {
    let append: Promise<number>
    try {
      const r = prep.send(send)
      if (r instanceof Promise) await r
      append = !hasIds([send])
        ? this.backend.append(this.topic, send.partition, [send], this.producerId)
        : appendIdempotent(this.backend, this.topic, send.partition, [send], this.producerId, this.dedupWindowMs)
    } catch (e) {
      return send.reject(e)
    } finally {
      issued()
    }
    try {
      const offset = await append
      send.resolve(
        send.duplicate ? { partition: send.partition, offset, duplicate: true } : { partition: send.partition, offset },
      )
    } catch (e) {
      if (e instanceof TopicNotFoundError) this.forgetMeta()
      send.reject(e)
    }
  }

  /** Write one partition's records in order, in batches of at most `maxBatch` records / 8 MiB. */
  private async writePartition(
    partition: number,
    records: PreparedRecord[],
    failures: Map<PreparedRecord, unknown>,
  ): Promise<void> {
    for (let start = 0; start < records.length;) {
      const end = chunkEnd(records, start, this.maxBatch)
      const chunk = start === 0 && end === records.length ? records : records.slice(start, end)
      try {
        if (hasIds(chunk))
          await appendIdempotent(this.backend, this.topic, partition, chunk, this.producerId, this.dedupWindowMs)
        else {
          const base = await this.backend.append(this.topic, partition, chunk, this.producerId)
          for (let k = 0; k < chunk.length; k++) (chunk[k] as PreparedRecord).offset = base + k
        }
      } catch (e) {
        if (e instanceof TopicNotFoundError) this.forgetMeta() // deleted (maybe re-created): look it up again
        for (const r of chunk) failures.set(r, e)
      }
      start = end
    }
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
    this.textOnly = true
    this.textUnits = 0
    this.scheduled = false
    for (const q of queued) q.reject(e)
    void this.close()
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close()
  }
}
