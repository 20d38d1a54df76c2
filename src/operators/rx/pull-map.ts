import { Observable } from 'rxjs'
import { InvalidArgumentError } from '../../core/errors.js'
import { asyncIterableOption, integerOption, optionsObject, signalOption } from '../options.js'
import { releaseItem } from '../settleable.js'
import { abortable } from './abortable.js'

/** Options of {@link pullMap}. */
export interface PullMapOptions {
  /**
   * Most handlers running at once (an integer ≥ 1), and so most items taken from the source and
   * not yet finished. Results are emitted as handlers finish: in the source's order with 1.
   * @default 1
   * @example
   * ```ts
   * pullMap(twain.tail('orders', { from: 'start' }), (m) => index(m.value), { concurrency: 4 })
   * ```
   */
  concurrency?: number
  /**
   * Aborting errors the Observable with `AbortError` and ends the source's iteration at once.
   * @default undefined (not abortable)
   * @example
   * ```ts
   * pullMap(twain.tail('orders'), (m) => index(m.value), { signal: AbortSignal.timeout(60_000) })
   * ```
   */
  signal?: AbortSignal
}

/**
 * An Observable of `handler(item)` for each item of an `AsyncIterable` (a tail, a history, a
 * consumer), that **pulls** the next item only when a handler is free: RxJS's `mergeMap(handler,
 * concurrency)`, with the source read at the handlers' pace.
 *
 * `from(stream).pipe(concatMap(handler))` cannot do that: an Observable has no backpressure, so
 * `from()` pushes everything the stream reads as fast as it reads it, and `concatMap` queues it in
 * memory — a tail started at the start of a long topic holds the whole backlog. With `pullMap` at
 * most `concurrency` items are taken and not finished, besides what the source itself reads ahead
 * (a tail or history reads up to 4096 records at a time).
 *
 * - A handler that throws (or rejects) errors the Observable with its error; the source's
 *   iteration ends, and handlers already running finish unobserved.
 * - Unsubscribing (e.g. `take(n)`) ends the source's iteration at once (a tail's or consumer's
 *   blocked read included); a group message pulled and not yet handled is handed back
 *   (`release()`); one whose handler is running stays as the handler leaves it.
 * - The source completing completes the Observable once the running handlers have finished.
 *
 * @example
 * ```ts
 * import { pullMap } from 'twainmq/rx'
 * pullMap(twain.tail<Order>('orders', { from: 'start' }), (m) => sink.write(m.value), { concurrency: 4 })
 *   .subscribe({ error: console.error })
 * ```
 */
export function pullMap<T, R>(
  source: AsyncIterable<T>,
  handler: (item: T, index: number) => R | PromiseLike<R>,
  options?: PullMapOptions,
): Observable<Awaited<R>> {
  const where = 'pullMap()'
  asyncIterableOption(where, source)
  if (typeof handler !== 'function')
    throw new InvalidArgumentError(`${where}: the handler must be a function, got ${typeof handler}`)
  const o = optionsObject(where, options)
  const concurrency = integerOption(where, 'concurrency', o.concurrency ?? 1, 1)
  const signal = signalOption(where, o.signal)
  return new Observable<Awaited<R>>((subscriber) => {
    const it = source[Symbol.asyncIterator]()
    let stopped = false
    let index = 0
    // One `next()` at a time: an async iterator need not take concurrent calls.
    let pulls: Promise<unknown> = Promise.resolve()
    const pull = (): Promise<IteratorResult<T>> => {
      const p = pulls.then(() => it.next())
      pulls = p.catch(() => undefined)
      return p
    }
    const stop = (): void => {
      if (stopped) return
      stopped = true
      void Promise.resolve()
        .then(() => it.return?.())
        .catch(() => undefined)
    }
    const work = async (): Promise<void> => {
      for (;;) {
        const r = await pull()
        if (stopped) {
          if (!r.done) releaseItem(r.value)
          return
        }
        if (r.done) return
        const result = await handler(r.value, index++)
        if (stopped) return
        subscriber.next(result)
      }
    }
    Promise.all(Array.from({ length: concurrency }, work)).then(
      () => {
        if (stopped) return
        stopped = true // the source is done: nothing to end
        subscriber.complete()
      },
      (error: unknown) => {
        if (stopped) return
        stop()
        subscriber.error(error)
      },
    )
    return stop
  }).pipe(abortable(signal))
}
