import type { Backend, PartitionReader } from '../backends/backend.js'
import { ClosedError, InvalidArgumentError } from '../core/errors.js'
import type { Key, Message } from '../core/types.js'
import type { BatchIterator } from './batch-iterator.js'
import { MessageStream } from './message-stream.js'
import { ChangeQueue, type TableChange } from './table-changes.js'
import { Wake } from './wake.js'

/** Options of `twain.table()`. */
export interface TableOptions {
  /**
   * How many changes one iteration of {@link Table.changes} may have waiting before the table waits
   * for it to take them (a slow reader of changes slows the table rather than growing memory).
   * Default 4096.
   */
  changesBuffer?: number
  /** Aborting it closes the table. Default none. */
  signal?: AbortSignal
}

/** What a table needs from its `Twain`. */
export interface TableContext {
  store: Backend
  /** Per-batch post-processing (registered-type validation), as tails and histories do. */
  decode: ((batch: Message[]) => Message[] | Promise<Message[]>) | undefined
  /** The `Twain`'s live iterations, which it ends on close. */
  iterations: Set<BatchIterator<unknown>>
  /** Called once the table is closed. */
  done(table: Table<unknown, Key>): void
  /** Told of a log rollback the table read past (default: a process warning). */
  onRollback?: ((e: Error) => void) | undefined
}

const MAX_BATCH = 4096

/**
 * The latest value of every key of a topic, kept up to date as records arrive (README, "Tables").
 * A record with a `null` value (a tombstone) removes its key. Made by `twain.table(topic)`; it
 * starts reading at once, from the topic's first retained record.
 */
export class Table<V = unknown, K extends Key = Key> {
  readonly #topic: string
  readonly #ctx: TableContext
  readonly #limit: number
  readonly #values = new Map<K, V>()
  readonly #queues = new Set<ChangeQueue<V, K>>()
  readonly #wake = new Wake()
  readonly #stop = new AbortController()
  readonly #ready: Promise<void>
  #readers: PartitionReader[] = []
  #dirty: boolean[] = []
  #unwatch: Array<() => void> = []
  #failure: unknown
  /** `ready()` has resolved: changes may hold the table up from now on (not before, or a reader of
   * changes that awaits `ready()` would wait for itself). */
  #caughtUp = false
  #released: Promise<void> | undefined
  #closing: Promise<void> | undefined
  readonly #run: Promise<void>
  readonly #signal: AbortSignal | undefined

  /** @internal Tables are made by `twain.table()`. */
  constructor(topic: string, ctx: TableContext, options: TableOptions = {}) {
    const limit = options.changesBuffer ?? 4096
    if (!Number.isSafeInteger(limit) || limit < 1) {
      throw new InvalidArgumentError(`table() option changesBuffer is ${String(limit)}: use an integer ≥ 1`)
    }
    this.#topic = topic
    this.#ctx = ctx
    this.#limit = limit
    this.#signal = options.signal
    // The ends `ready()` waits for: those of this call (a send that resolved before it is counted).
    const snapshot = ctx.store.endOffsetsSnapshot(topic)
    let caughtUp!: () => void
    let failed!: (e: unknown) => void
    this.#ready = new Promise<void>((resolve, reject) => {
      caughtUp = resolve
      failed = reject
    })
    this.#ready.catch(() => undefined)
    // Closed: a `ready()` still waiting rejects with `ClosedError` (one that resolved stays so).
    const closed = () => failed(new ClosedError(`table of "${topic}" was closed`))
    this.#run = this.#follow(snapshot, () => {
      this.#caughtUp = true
      caughtUp()
    }).then(closed, (e: unknown) => {
      if (this.#stop.signal.aborted) return closed()
      this.#failure = e
      failed(e)
      for (const q of this.#queues) q.fail(e)
      // Nothing more will be read: the readers and watches go now, not at close().
      void this.#release()
    })
    if (options.signal) {
      if (options.signal.aborted) void this.close()
      else options.signal.addEventListener('abort', () => void this.close(), { once: true })
    }
  }

  /** The topic this table follows. */
  get topic(): string {
    return this.#topic
  }

  /**
   * Resolves once the table holds every record the topic had when `table()` was called (on a
   * compacted topic this reads one record per key, not the history). Rejects if the table cannot
   * read the topic (e.g. `TopicNotFoundError`) or was closed first (`ClosedError`).
   */
  ready(): Promise<void> {
    return this.#ready
  }

  /** The latest value of `key`, or `undefined` when the table holds none. */
  get(key: K): V | undefined {
    return this.#values.get(key)
  }

  /** Whether the table holds a value for `key`. */
  has(key: K): boolean {
    return this.#values.has(key)
  }

  /** How many keys the table holds. */
  get size(): number {
    return this.#values.size
  }

  /** Every key and its latest value, in the order the keys were first set. */
  entries(): IterableIterator<[K, V]> {
    return this.#values.entries()
  }

  /**
   * A live stream of the changes the table applies from now on (AsyncIterable and Observable):
   * `{ key, value, previous, message }`, `value` `null` for a removal. Each iteration sees the
   * changes applied after it began; it ends when the table closes and fails if the table fails.
   */
  changes(): MessageStream<TableChange<V, K>> {
    return new MessageStream<TableChange<V, K>>(
      {
        open: () => {
          if (this.#failure !== undefined) throw this.#failure
          const q = new ChangeQueue<V, K>(this.#limit, (done) => void this.#queues.delete(done))
          if (this.#closing) q.end()
          else this.#queues.add(q)
          return q
        },
      },
      this.#signal,
      this.#ctx.iterations,
    )
  }

  /** Stop following the topic and release its readers; iterations of `changes()` end. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#stop.abort()
      for (const q of this.#queues) q.end()
      await this.#run
      await this.#release()
      this.#ctx.done(this as unknown as Table<unknown, Key>)
    })()
    return this.#closing
  }

  #release(): Promise<void> {
    this.#released ??= (async () => {
      for (const u of this.#unwatch) u()
      this.#unwatch = []
      await Promise.all(this.#readers.map((r) => r.close().catch(() => undefined)))
    })()
    return this.#released
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close()
  }

  async #follow(snapshot: number[] | Promise<number[]> | undefined, caughtUp: () => void): Promise<void> {
    const store = this.#ctx.store
    const signal = this.#stop.signal
    const meta = await store.getTopic(this.#topic)
    const ends = (await snapshot) ?? (await store.offsets(this.#topic)).map((o) => o.end)
    const behind = new Set<number>()
    for (let p = 0; p < meta.partitions; p++) {
      if (signal.aborted) break
      this.#readers.push(await store.openReader(this.#topic, p, 0))
      this.#dirty.push(true)
      if ((ends[p] ?? 0) > 0) behind.add(p)
      this.#unwatch.push(
        store.watch(this.#topic, p, () => {
          this.#dirty[p] = true
          this.#wake.wake()
        }),
      )
    }
    if (behind.size === 0 && !signal.aborted) caughtUp()
    while (!signal.aborted) {
      this.#wake.take()
      const parts: number[] = []
      for (let p = 0; p < this.#readers.length; p++) {
        if (!this.#dirty[p]) continue
        this.#dirty[p] = false
        parts.push(p)
      }
      if (parts.length === 0) {
        await this.#wake.wait(signal)
        continue
      }
      const batches = await Promise.all(parts.map((p) => this.#read(p)))
      if (signal.aborted) break
      for (let i = 0; i < parts.length; i++) {
        const p = parts[i] as number
        const batch = batches[i] as Message[]
        const reader = this.#readers[p] as PartitionReader
        // A reader may stop short of MAX_BATCH with more to come (a window or segment boundary): read again.
        if (batch.length > 0) this.#dirty[p] = true
        // A read that finds nothing below the snapshot's end has caught up (the rest was compacted away).
        if (batch.length === 0 || reader.next >= (ends[p] ?? 0)) behind.delete(p)
        this.#apply(batch)
      }
      if (behind.size === 0) caughtUp()
      await this.#drain()
    }
  }

  async #read(p: number): Promise<Message[]> {
    const reader = this.#readers[p] as PartitionReader
    const batch = await reader.read(MAX_BATCH)
    if (this.#stop.signal.aborted) return batch
    const rolledBack = reader.takeRollback()
    // The table reads the records stored there now, so it ends right; the rollback is a process warning.
    if (rolledBack) {
      if (this.#ctx.onRollback) this.#ctx.onRollback(rolledBack)
      else process.emitWarning(rolledBack)
    }
    const decode = this.#ctx.decode
    return batch.length > 0 && decode ? decode(batch) : batch
  }

  #apply(batch: Message[]): void {
    const values = this.#values
    const tell = this.#queues.size > 0
    for (let i = 0; i < batch.length; i++) {
      const m = batch[i] as Message<V | null, K>
      const previous = tell ? values.get(m.key) : undefined
      if (m.value === null) values.delete(m.key)
      else values.set(m.key, m.value)
      if (tell) {
        const change: TableChange<V, K> = { key: m.key, value: m.value, previous, message: m }
        for (const q of this.#queues) q.push(change)
      }
    }
  }

  /** Wait for iterations of `changes()` that have `changesBuffer` changes waiting (once caught up). */
  async #drain(): Promise<void> {
    if (!this.#caughtUp) return
    for (const q of this.#queues) {
      const full = q.full()
      if (full) await full
    }
  }
}
