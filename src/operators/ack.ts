import { KeyLanes } from './key-lanes.js'
import { asyncIterableOption, booleanOption, handlerAndOptions, integerOption, signalOption } from './options.js'
import { AsyncIterableX } from 'ix/asynciterable/asynciterablex'
import { laneOf, outcomeOf, releaseItem, type Settleable } from './settleable.js'
import type { MessageOperator } from './typed-operators.js'
import { END, Upstream } from './upstream.js'

/** Work to do for one message before it is acked; a throw or rejection fails it. */
export type AckHandler<T> = (message: T) => unknown

/** Options of {@link ack} (and `ackRx`). */
export interface AckOptions {
  /**
   * Most handlers running at once. Messages of different keys run in parallel; messages of one key
   * run one after another (unless `perKey: false`).
   * @default 1
   * @example
   * ```ts
   * pipe(consumer, ack(save, { concurrency: 8 }))
   * ```
   */
  concurrency?: number
  /**
   * Keep messages of one key in order: a message starts only after the previous message with the
   * same key (compared by value; `7` and `7n` are the same key) has finished. `false` lets any
   * `concurrency` messages run at once. Messages without a key are never held back.
   * @default true
   * @example
   * ```ts
   * pipe(consumer, ack(index, { concurrency: 16, perKey: false }))
   * ```
   */
  perKey?: boolean
  /**
   * Aborting ends the iteration at once with `AbortError`, even while it waits on the source or on
   * a handler. Messages not yet emitted stay un-acked.
   * @default undefined (not abortable)
   * @example
   * ```ts
   * pipe(consumer, ack(save, { signal: AbortSignal.timeout(60_000) }))
   * ```
   */
  signal?: AbortSignal
}

/** {@link AckOptions} checked and with defaults applied. */
export interface ResolvedAckOptions {
  readonly concurrency: number
  readonly perKey: boolean
  readonly signal: AbortSignal | undefined
}

/** Check {@link AckOptions}; throws `InvalidArgumentError` naming the bad value. */
export function resolveAckOptions(where: string, options: Partial<AckOptions>): ResolvedAckOptions {
  return {
    concurrency: integerOption(where, 'concurrency', options.concurrency ?? 1, 1),
    perKey: booleanOption(where, 'perKey', options.perKey, true),
    signal: signalOption(where, options.signal),
  }
}

/** The lane of a message for per-key ordering. */
export const laneOfMessage = (m: Settleable): string | undefined => laneOf(m.key)

/**
 * Runs `handler(message)` (if given), acks the message when it succeeds and emits it.
 *
 * - **Concurrency.** With `concurrency > 1`, messages of different keys are handled in parallel,
 *   messages of one key one after another in source order (`perKey: false` drops that). At most
 *   `concurrency` handlers run, and at most `2 × concurrency − 1` messages are held (pulled from the
 *   source and not yet emitted), so a busy key cannot make it read without bound. The source is only
 *   read while the consumer of this operator waits for a message: with `concurrency: 1` nothing is
 *   read ahead.
 * - **Order.** Messages are emitted as their handlers finish. Messages of one key therefore come out
 *   in source order; across keys (or with `perKey: false`) a quick message may overtake a slow one.
 *   With `concurrency: 1` the output order is the source order.
 * - **Ack on emission.** A handled message is acked when it is handed on, so every emitted message
 *   was acked and no message that was not emitted was acked: a message left behind by `break`,
 *   `return()` or the signal (waiting, running or finished) stays un-acked and is delivered again.
 * - **Failure.** A handler that throws gets its message nacked at once; no more messages are read or
 *   started; handlers already running finish (their successes are emitted, their failures nacked);
 *   then the first error ends the iteration and the source's `return()` is called. Messages that
 *   were waiting for their key stay un-acked. Use `retry` to keep going after failures.
 * - **Ending.** `return()` resolves at once; it calls the source iterator's `return()` without
 *   awaiting it. Running handlers cannot be cancelled: they finish, but their messages are neither
 *   acked nor nacked.
 *
 * @param handler the work per message; without one, messages are just acked.
 * @example
 * ```ts
 * import { ack, pipe } from 'twainmq/operators'
 * for await (const m of pipe(consumer, ack(async (m) => db.save(m.value), { concurrency: 4 }))) {
 *   console.log('done', m.offset)
 * }
 * ```
 */
export function ack<T extends Settleable & H, H = T>(handler?: AckHandler<H>, options?: AckOptions): MessageOperator<T>
/**
 * Acks every message as it passes (no handler).
 * @example
 * ```ts
 * for await (const m of pipe(consumer, ack({ signal }))) console.log(m.value)
 * ```
 */
export function ack<T extends Settleable = Settleable>(options?: AckOptions): MessageOperator<T>
export function ack(first?: AckHandler<Settleable> | AckOptions, second?: AckOptions): MessageOperator<Settleable> {
  const [handler, opts] = handlerAndOptions<AckHandler<Settleable>, AckOptions>('ack()', first, second)
  const options = resolveAckOptions('ack()', opts)
  return <M extends Settleable>(source: AsyncIterable<M>) => {
    asyncIterableOption('ack()', source)
    return new AckIterable<M>(source, handler, options)
  }
}

class AckIterable<T extends Settleable> extends AsyncIterableX<T> {
  constructor(
    private readonly source: AsyncIterable<T>,
    private readonly handler: AckHandler<T> | undefined,
    private readonly options: ResolvedAckOptions,
  ) {
    super()
  }

  [Symbol.asyncIterator](signal?: AbortSignal): AsyncIterableIterator<T> {
    return new AckIterator(this.source, this.handler, this.options, signal)
  }
}

const DONE: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined })

class AckIterator<T extends Settleable> implements AsyncIterableIterator<T> {
  readonly #up: Upstream<T>
  readonly #handler: AckHandler<T> | undefined
  readonly #lanes: KeyLanes<T>
  /** Most messages held at once (pulled, neither emitted nor nacked). */
  readonly #window: number
  /** Handled successfully, to be acked and emitted (in the order they finished). */
  readonly #handled: T[] = []
  #held = 0
  #pulling = false
  /** `next()` calls waiting for a message: the source is read only while someone waits. */
  #demand = 0
  #sourceEnded = false
  #failure: { error: unknown } | undefined
  #finished = false
  #change: { promise: Promise<void>; resolve: () => void } | undefined

  constructor(
    source: AsyncIterable<T>,
    handler: AckHandler<T> | undefined,
    options: ResolvedAckOptions,
    outer: AbortSignal | undefined,
  ) {
    this.#up = new Upstream(source, options.signal, outer)
    this.#handler = handler
    this.#lanes = new KeyLanes<T>(options.concurrency, options.perKey ? laneOfMessage : undefined)
    this.#window = 2 * options.concurrency - 1
  }

  [Symbol.asyncIterator](): this {
    return this
  }

  async next(): Promise<IteratorResult<T>> {
    for (;;) {
      if (this.#finished) return DONE
      if (this.#up.aborted) {
        this.#finished = true
        this.#releaseHeld()
        throw this.#up.abortError()
      }
      if (this.#up.stopped) {
        this.#finished = true
        return DONE
      }
      const m = this.#handled.shift()
      if (m !== undefined) {
        this.#held--
        m.ack()
        return { done: false, value: m }
      }
      if (this.#failure && this.#lanes.running === 0) {
        this.#finished = true
        this.#up.stop()
        throw this.#failure.error
      }
      if (this.#sourceEnded && this.#held === 0) {
        this.#finished = true
        this.#up.close()
        return DONE
      }
      this.#demand++
      try {
        this.#pump()
        await this.#up.until(this.#changed())
      } finally {
        this.#demand--
      }
    }
  }

  return(): Promise<IteratorResult<T>> {
    this.#finished = true
    this.#up.stop()
    this.#releaseHeld()
    return Promise.resolve(DONE)
  }

  /** Messages pulled but never emitted go back to the source (running ones when they finish). */
  #releaseHeld(): void {
    for (const m of this.#handled.splice(0)) releaseItem(m)
    for (const m of this.#lanes.drain()) releaseItem(m)
  }

  /** Read one more message if someone waits, the window has room and nothing has failed. */
  #pump(): void {
    if (this.#pulling || this.#demand === 0 || this.#held >= this.#window) return
    if (this.#sourceEnded || this.#failure || this.#up.stopped) return
    this.#pulling = true
    this.#up.pull().then(
      (p) => {
        this.#pulling = false
        if (p === END) this.#sourceEnded = true
        else if (typeof p === 'object') {
          this.#held++
          this.#lanes.push(p.item)
          this.#startReady()
        }
        this.#notify()
        this.#pump()
      },
      (error: unknown) => {
        this.#pulling = false
        this.#sourceEnded = true
        this.#failure ??= { error }
        this.#notify()
      },
    )
  }

  #startReady(): void {
    if (this.#failure || this.#up.stopped) return
    for (const m of this.#lanes.take()) this.#run(m)
  }

  #run(m: T): void {
    void outcomeOf(this.#handler, m).then((outcome) => {
      if (this.#up.stopped) return releaseItem(m) // the iteration is over: hand it back unsettled
      this.#lanes.finish(m)
      if (outcome.ok) this.#handled.push(m)
      else {
        this.#held--
        m.nack()
        this.#failure ??= { error: outcome.error }
      }
      this.#startReady()
      this.#notify()
      this.#pump()
    })
  }

  /** Resolves at the next change of state (a message read, a handler finished). */
  #changed(): Promise<void> {
    if (!this.#change) {
      let resolve!: () => void
      const promise = new Promise<void>((r) => (resolve = r))
      this.#change = { promise, resolve }
    }
    return this.#change.promise
  }

  #notify(): void {
    const change = this.#change
    this.#change = undefined
    change?.resolve()
  }
}
