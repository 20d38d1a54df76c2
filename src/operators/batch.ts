import { releaseItem } from './settleable.js'
import { BatchAssembler, type MessageBatch } from './message-batch.js'
import { asyncIterableOption, integerOption, numberOption, optionsObject, signalOption } from './options.js'
import { AsyncIterableX } from 'ix/asynciterable/asynciterablex'
import type { Settleable } from './settleable.js'
import type { BatchOperator } from './typed-operators.js'
import { Serial } from './serial.js'
import { END, TIMEOUT, Upstream, type Pulled } from './upstream.js'

/** Options of {@link batch} (and `batchRx`). */
export interface BatchOptions {
  /**
   * Most messages in one batch (an integer ≥ 1). A batch is emitted as soon as it is full.
   * @example
   * ```ts
   * pipe(consumer, batch({ size: 500 }))
   * ```
   */
  size: number
  /**
   * Longest time a batch waits for more messages, counted from its first message; then the partial
   * batch is emitted. `0` emits whatever is available without waiting.
   * @default Infinity (only full batches, and the remainder when the source ends)
   * @example
   * ```ts
   * pipe(consumer, batch({ size: 100, maxWaitMs: 50 }))
   * ```
   */
  maxWaitMs?: number
  /**
   * Aborting ends the iteration at once with `AbortError`, even while it waits on the source. The
   * messages of an unfinished batch stay unsettled.
   * @default undefined (not abortable)
   * @example
   * ```ts
   * pipe(consumer, batch({ size: 100, signal: controller.signal }))
   * ```
   */
  signal?: AbortSignal
}

/** {@link BatchOptions} checked and with defaults applied. */
export interface ResolvedBatchOptions {
  readonly size: number
  readonly maxWaitMs: number
  readonly signal: AbortSignal | undefined
}

/** Check {@link BatchOptions}; throws `InvalidArgumentError` naming the bad value. */
export function resolveBatchOptions(where: string, options: BatchOptions | undefined): ResolvedBatchOptions {
  const o = optionsObject<BatchOptions>(where, options)
  return {
    size: integerOption(where, 'size', o.size, 1),
    maxWaitMs: numberOption(where, 'maxWaitMs', o.maxWaitMs ?? Infinity, 0),
    signal: signalOption(where, o.signal),
  }
}

/**
 * Groups messages into {@link MessageBatch}es: frozen arrays with `ack()`, `nack()` and `term()`
 * that settle every message in them. The batch does not settle anything by itself.
 *
 * - A batch never holds more than `size` messages; a full batch is emitted at once.
 * - A partial batch is emitted `maxWaitMs` after its first message arrived, while the source is
 *   still silent. The source's pending `next()` is kept, not lost: the message it brings starts the
 *   next batch.
 * - When the source ends, the remainder is emitted as a last (partial) batch. When the source
 *   fails, the messages collected so far are emitted first and the error comes with the next read.
 * - At most `size` messages are held, and the source is read only while the consumer of this
 *   operator waits for a batch.
 * - `return()` resolves at once and calls the source iterator's `return()` without awaiting it; the
 *   messages of the unfinished batch stay unsettled (they will be delivered again).
 *
 * @example
 * ```ts
 * import { batch, pipe } from 'twainmq/operators'
 * for await (const b of pipe(consumer, batch({ size: 100, maxWaitMs: 50 }))) {
 *   await db.insertMany(b.map((m) => m.value))
 *   b.ack()
 * }
 * ```
 */
export function batch<T extends Settleable = Settleable>(options: BatchOptions): BatchOperator<T> {
  const resolved = resolveBatchOptions('batch()', options)
  return <M extends T>(source: AsyncIterable<M>) => {
    asyncIterableOption('batch()', source)
    return new BatchIterable<M>(source, resolved)
  }
}

class BatchIterable<T extends Settleable> extends AsyncIterableX<MessageBatch<T>> {
  constructor(
    private readonly source: AsyncIterable<T>,
    private readonly options: ResolvedBatchOptions,
  ) {
    super()
  }

  [Symbol.asyncIterator](signal?: AbortSignal): AsyncIterableIterator<MessageBatch<T>> {
    return new BatchIterator(this.source, this.options, signal)
  }
}

const DONE: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined })

class BatchIterator<T extends Settleable> implements AsyncIterableIterator<MessageBatch<T>> {
  readonly #up: Upstream<T>
  readonly #assembler: BatchAssembler<T>
  readonly #maxWaitMs: number
  /** The source failed after a partial batch was emitted: the error comes with the next read. */
  #failure: { error: unknown } | undefined
  #finished = false
  /** `next()` calls run one at a time (a batch being filled is one call's). */
  readonly #serial = new Serial()

  constructor(source: AsyncIterable<T>, options: ResolvedBatchOptions, outer: AbortSignal | undefined) {
    this.#up = new Upstream(source, options.signal, outer)
    this.#assembler = new BatchAssembler<T>(options.size)
    this.#maxWaitMs = options.maxWaitMs
  }

  [Symbol.asyncIterator](): this {
    return this
  }

  async next(): Promise<IteratorResult<MessageBatch<T>>> {
    const turn = this.#serial.enter()
    if (turn !== undefined) await turn
    try {
      return await this.#next()
    } finally {
      this.#serial.leave()
    }
  }

  async #next(): Promise<IteratorResult<MessageBatch<T>>> {
    if (this.#finished) return DONE
    if (this.#up.aborted) return this.#abort()
    if (this.#failure) {
      this.#finished = true
      this.#up.close()
      throw this.#failure.error
    }
    for (;;) {
      let pulled: Pulled<T>
      try {
        pulled = await this.#up.pull(this.#assembler.dueIn(this.#maxWaitMs))
      } catch (error) {
        const partial = this.#assembler.flush()
        if (partial) {
          this.#failure = { error }
          return { done: false, value: partial }
        }
        this.#finished = true
        this.#up.close()
        throw error
      }
      if (typeof pulled === 'object') {
        const full = this.#assembler.add(pulled.item)
        if (full) return { done: false, value: full }
      } else if (pulled === TIMEOUT) {
        return { done: false, value: this.#assembler.flush() as MessageBatch<T> }
      } else if (pulled === END) {
        const rest = this.#assembler.flush()
        if (rest) return { done: false, value: rest }
        this.#finished = true
        this.#up.close()
        return DONE
      } else {
        if (this.#up.aborted) return this.#abort()
        this.#finished = true
        this.#releasePartial()
        return DONE
      }
    }
  }

  return(): Promise<IteratorResult<MessageBatch<T>>> {
    this.#finished = true
    this.#up.stop()
    this.#releasePartial()
    return Promise.resolve(DONE)
  }

  /** A batch still being filled was never emitted: hand its messages back to the source. */
  #releasePartial(): void {
    for (const m of this.#assembler.flush() ?? []) releaseItem(m)
  }

  #abort(): never {
    this.#finished = true
    this.#releasePartial()
    throw this.#up.abortError()
  }
}
