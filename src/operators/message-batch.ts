import type { Settleable } from './settleable.js'

/**
 * Messages emitted together by `batch` / `batchRx`: a frozen, real `Array` (so `Array.isArray`,
 * indexing, `for…of`, `map` and spreading all work) with methods that settle every message in it.
 *
 * @example
 * ```ts
 * for await (const b of pipe(consumer, batch({ size: 100, maxWaitMs: 50 }))) {
 *   await db.insertMany(b.map((m) => m.value))
 *   b.ack()
 * }
 * ```
 */
export interface MessageBatch<T extends Settleable> extends ReadonlyArray<T> {
  /** `ack()` every message. */
  ack(): void
  /** `nack(options)` every message. */
  nack(options?: { delayMs?: number }): void
  /** `term(reason)` every message. */
  term(reason?: string): void
}

class Batch<T extends Settleable> extends Array<T> implements MessageBatch<T> {
  /** `map`, `filter`, `slice`… of a batch give plain arrays, not batches. */
  static get [Symbol.species](): ArrayConstructor {
    return Array
  }

  ack(): void {
    settleEach(this, (m) => m.ack())
  }

  nack(options?: { delayMs?: number }): void {
    settleEach(this, (m) => m.nack(options))
  }

  term(reason?: string): void {
    settleEach(this, (m) => m.term(reason))
  }
}

/** Settle every message even if one throws; then rethrow the first error. */
function settleEach<T>(items: readonly T[], settle: (m: T) => void): void {
  let failure: { error: unknown } | undefined
  for (const m of items) {
    try {
      settle(m)
    } catch (error) {
      failure ??= { error }
    }
  }
  if (failure) throw failure.error
}

/** A frozen {@link MessageBatch} of `items` (copied). */
export function messageBatch<T extends Settleable>(items: Iterable<T>): MessageBatch<T> {
  const batch = new Batch<T>()
  for (const m of items) batch.push(m)
  return Object.freeze(batch)
}

/**
 * Batch assembly shared by `batch` and `batchRx`: collects items into batches of at most `size` and
 * remembers when the current batch got its first item, for the `maxWaitMs` deadline.
 */
export class BatchAssembler<T extends Settleable> {
  readonly #size: number
  #items: T[] = []
  #firstAt = 0

  constructor(size: number) {
    this.#size = size
  }

  /** Items in the current batch. */
  get length(): number {
    return this.#items.length
  }

  /** Add an item; returns the batch (and starts a new one) when it is full. */
  add(item: T): MessageBatch<T> | undefined {
    if (this.#items.length === 0) this.#firstAt = performance.now()
    this.#items.push(item)
    return this.#items.length >= this.#size ? this.flush() : undefined
  }

  /** The current items as a batch (`undefined` if there are none), and start a new one. */
  flush(): MessageBatch<T> | undefined {
    if (this.#items.length === 0) return undefined
    const batch = messageBatch(this.#items)
    this.#items = []
    return batch
  }

  /** Milliseconds until the current batch is due (`Infinity` when it is empty). */
  dueIn(maxWaitMs: number): number {
    if (this.#items.length === 0) return Infinity
    return Math.max(0, this.#firstAt + maxWaitMs - performance.now())
  }
}
