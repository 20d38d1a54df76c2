import { AsyncIterableX } from 'ix/asynciterable/asynciterablex'
import { InvalidArgumentError } from '../core/errors.js'
import { asyncIterableOption, optionsObject, signalOption } from './options.js'
import { PerMessageIterator } from './per-message.js'
import type { Settleable } from './settleable.js'
import type { MessageOperator } from './typed-operators.js'
import { STOPPED } from './upstream.js'

/** Which messages go on; the others are acked. A throw or rejection fails the message. */
export type FilterAckPredicate<T> = (message: T) => boolean | PromiseLike<boolean>

/** Options of {@link filterAck} (and `filterAckRx`). */
export interface FilterAckOptions {
  /**
   * Aborting ends the iteration at once with `AbortError`, even while it waits on the source or on
   * an async predicate. The message being tested then stays unsettled.
   * @default undefined (not abortable)
   * @example
   * ```ts
   * pipe(consumer, filterAck((m) => m.type === 'Order', { signal }))
   * ```
   */
  signal?: AbortSignal
}

/** Check `filterAck`'s arguments; throws `InvalidArgumentError` naming the bad value. */
export function resolveFilterAck(
  where: string,
  predicate: unknown,
  options: FilterAckOptions | undefined,
): AbortSignal | undefined {
  if (typeof predicate !== 'function')
    throw new InvalidArgumentError(
      `${where}: the predicate must be a function, got ${predicate === null ? 'null' : typeof predicate}`,
    )
  return signalOption(where, optionsObject(where, options).signal)
}

/** Whether `x` is a promise-like (a predicate may be async). */
export const isThenable = (x: unknown): x is PromiseLike<unknown> =>
  typeof (x as { then?: unknown } | null)?.then === 'function'

/**
 * Passes on the messages `predicate` keeps and **acks the ones it drops**, so filtering can never
 * stall a consumer group. (A plain `filter` — IxJS's or RxJS's — drops messages without settling
 * them: they stay in flight, the partition's commit cannot pass them, and once `maxInFlight`
 * messages are dropped the consumer receives nothing more.)
 *
 * - A dropped message counts as done: it is acked and committed like a handled one. It is not
 *   released or nacked, since either would deliver it again, forever.
 * - The predicate may be async; messages are tested one at a time, in source order, and the source
 *   is read only while the consumer of this operator waits, so at most one message is held.
 * - A predicate that throws or rejects gets its message nacked (it is delivered again), and the
 *   error ends the iteration.
 * - `return()` and the signal end the iteration at once, even while an async predicate runs; the
 *   message being tested then stays unsettled. The source's `return()` is called, not awaited.
 *
 * @param predicate `true` to pass the message on; `false` to ack it and drop it.
 * @example
 * ```ts
 * import { ack, filterAck, pipe } from 'twainmq/operators'
 * for await (const m of pipe(consumer, filterAck((m) => m.type === 'Order'), ack(handle))) {
 *   console.log('handled', m.offset)
 * }
 * ```
 */
export function filterAck<T extends Settleable & H, H = T>(
  predicate: FilterAckPredicate<H>,
  options?: FilterAckOptions,
): MessageOperator<T> {
  const signal = resolveFilterAck('filterAck()', predicate, options)
  return <M extends T>(source: AsyncIterable<M>) => {
    asyncIterableOption('filterAck()', source)
    return new FilterAckIterable<M>(source, predicate, signal)
  }
}

class FilterAckIterable<T extends Settleable> extends AsyncIterableX<T> {
  constructor(
    private readonly source: AsyncIterable<T>,
    private readonly predicate: FilterAckPredicate<T>,
    private readonly signal: AbortSignal | undefined,
  ) {
    super()
  }

  [Symbol.asyncIterator](signal?: AbortSignal): AsyncIterableIterator<T> {
    return new FilterAckIterator(this.source, this.predicate, this.signal, signal)
  }
}

class FilterAckIterator<T extends Settleable> extends PerMessageIterator<T, T> {
  readonly #predicate: FilterAckPredicate<T>

  constructor(
    source: AsyncIterable<T>,
    predicate: FilterAckPredicate<T>,
    signal: AbortSignal | undefined,
    outer: AbortSignal | undefined,
  ) {
    super(source, signal, outer)
    this.#predicate = predicate
  }

  protected async handle(m: T): Promise<IteratorResult<T> | undefined> {
    let keep: unknown
    try {
      keep = this.#predicate(m)
      if (isThenable(keep)) keep = await this.up.until(Promise.resolve(keep))
    } catch (error) {
      m.nack()
      this.fail()
      throw error
    }
    if (keep === STOPPED || this.up.stopped) return this.stopped(m)
    if (keep) return { done: false, value: m }
    m.ack()
    return undefined
  }
}
