import { releaseItem } from './settleable.js'
import { abortErrorFrom, type AbortError } from '../core/errors.js'

/** The wait ended because its time was up (the pull stays pending for the next `pull()`). */
export const TIMEOUT: unique symbol = Symbol('timeout')
/** The wait ended because the iteration was ended by `return()` or the signal. */
export const STOPPED: unique symbol = Symbol('stopped')
/** The source is exhausted. */
export const END: unique symbol = Symbol('end')

/** What one wait on the source gave: an item, or why there is none. */
export type Pulled<T> = { readonly item: T } | typeof END | typeof TIMEOUT | typeof STOPPED

const noop = (): void => undefined

/**
 * One iteration's connection to its source: the operators' shared answer to three problems.
 *
 * - **A pull that loses a race is kept, not lost.** `pull(timeoutMs)` races the source's `next()`
 *   against a timer; when the timer wins the `next()` stays pending and the following `pull()`
 *   reuses it, so no item is skipped (batch's `maxWaitMs`).
 * - **Ending never waits for the source.** `stop()` (the operator's `return()`) and the signal
 *   wake every wait at once and call the source iterator's `return()` without awaiting it: async
 *   generators and IxJS `from()` queue `return()` behind a pending `next()`, so awaiting it could
 *   hang for as long as the source has nothing to say.
 * - **No listener outlives its wait.** Every wait registers its own waker and timer and removes
 *   both when it settles, so a long iteration does not pile reactions onto one shared promise.
 */
export class Upstream<T> {
  readonly #source: AsyncIterable<T>
  /** The operator's `signal` option and the signal IxJS passes to `[Symbol.asyncIterator](signal)`. */
  readonly #signals: AbortSignal[]
  /** Given to the source's `[Symbol.asyncIterator]()`, as IxJS operators do. */
  readonly #sourceSignal: AbortSignal | undefined
  #abortedBy: AbortSignal | undefined
  #iterator: AsyncIterator<T> | undefined
  /** A `next()` of the source that no wait has consumed yet. */
  #pending: Promise<IteratorResult<T>> | undefined
  #sourceEnded = false
  #stop: 'returned' | 'aborted' | undefined
  #closed = false
  readonly #wakers = new Set<() => void>()
  readonly #onAbort = (event: Event): void => {
    this.#abortedBy ??= event.target as AbortSignal
    this.#end('aborted')
  }

  /**
   * @param signal the operator's `signal` option.
   * @param outer the signal IxJS passes to `[Symbol.asyncIterator](signal)`; also handed to the source.
   */
  constructor(source: AsyncIterable<T>, signal: AbortSignal | undefined, outer?: AbortSignal) {
    this.#source = source
    this.#sourceSignal = outer
    this.#signals = [signal, outer].filter((s): s is AbortSignal => s !== undefined)
    const aborted = this.#signals.find((s) => s.aborted)
    if (aborted) {
      this.#abortedBy = aborted
      this.#stop = 'aborted'
      this.#closed = true
    } else for (const s of this.#signals) s.addEventListener('abort', this.#onAbort, { once: true })
  }

  /** Ended by `stop()` or by the signal. */
  get stopped(): boolean {
    return this.#stop !== undefined
  }

  /** Ended by the signal. */
  get aborted(): boolean {
    return this.#stop === 'aborted'
  }

  /** The error an aborted iteration throws (the signal's reason when that is an `AbortError`). */
  abortError(): AbortError {
    return abortErrorFrom(this.#abortedBy as AbortSignal)
  }

  /**
   * The source's next item. Resolves `TIMEOUT` when `timeoutMs` passes first (the source's
   * `next()` is kept for the next call), `STOPPED` when the iteration ends first, `END` when the
   * source is exhausted; rejects with the source's error.
   */
  pull(timeoutMs?: number): Promise<Pulled<T>> {
    if (this.#stop) return Promise.resolve(STOPPED)
    if (this.#sourceEnded) return Promise.resolve(END)
    let pending = this.#pending
    if (!pending) {
      try {
        const open = this.#source[Symbol.asyncIterator] as (
          this: AsyncIterable<T>,
          signal?: AbortSignal,
        ) => AsyncIterator<T>
        this.#iterator ??= open.call(this.#source, this.#sourceSignal)
        pending = Promise.resolve(this.#iterator.next())
      } catch (e) {
        pending = Promise.reject(e)
      }
      // Nobody may be waiting when it rejects (a timer won): keep that from being "unhandled".
      pending.catch(noop)
      this.#pending = pending
    }
    return this.race(pending, timeoutMs).then(
      (r): Pulled<T> => {
        if (r === TIMEOUT) return TIMEOUT
        if (r !== STOPPED && this.#stop && !r.done) releaseItem(r.value)
        // The item may arrive just after return(): hand it back to the source (see #end).
        if (r === STOPPED || this.#stop) return STOPPED
        this.#pending = undefined
        if (r.done) {
          this.#sourceEnded = true
          return END
        }
        return { item: r.value }
      },
      (e: unknown) => {
        this.#pending = undefined
        this.#sourceEnded = true
        throw e
      },
    )
  }

  /** `promise`, unless the iteration stops (`STOPPED`) or `timeoutMs` passes (`TIMEOUT`) first. */
  race<V>(promise: Promise<V>, timeoutMs?: number): Promise<V | typeof TIMEOUT | typeof STOPPED> {
    if (this.#stop) return Promise.resolve(STOPPED)
    return new Promise((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined
      const settle = (): void => {
        this.#wakers.delete(wake)
        if (timer !== undefined) clearTimeout(timer)
      }
      const wake = (): void => {
        settle()
        resolve(STOPPED)
      }
      this.#wakers.add(wake)
      if (timeoutMs !== undefined && timeoutMs !== Infinity) {
        timer = setTimeout(
          () => {
            settle()
            resolve(TIMEOUT)
          },
          Math.max(0, timeoutMs),
        )
      }
      promise.then(
        (v) => {
          settle()
          resolve(v)
        },
        (e: unknown) => {
          settle()
          reject(e)
        },
      )
    })
  }

  /** `promise`, unless the iteration stops first (`STOPPED`). */
  until<V>(promise: Promise<V>): Promise<V | typeof STOPPED> {
    return this.race(promise) as Promise<V | typeof STOPPED>
  }

  /** Wait `ms` (`TIMEOUT`), or less if the iteration stops (`STOPPED`). */
  sleep(ms: number): Promise<typeof TIMEOUT | typeof STOPPED> {
    if (this.#stop) return Promise.resolve(STOPPED)
    return new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer)
        resolve(STOPPED)
      }
      const timer = setTimeout(
        () => {
          this.#wakers.delete(wake)
          resolve(TIMEOUT)
        },
        Math.max(0, ms),
      )
      this.#wakers.add(wake)
    })
  }

  /** End the iteration quietly (the operator's `return()`): release the source, wake every wait. */
  stop(): void {
    this.#end('returned')
  }

  /** The iteration finished by itself (source done or failed): drop the signal listener. */
  close(): void {
    if (this.#closed) return
    this.#closed = true
    for (const s of this.#signals) s.removeEventListener('abort', this.#onAbort)
  }

  #end(how: 'returned' | 'aborted'): void {
    if (this.#stop) return
    this.#stop = how
    this.close()
    const it = this.#iterator
    if (it && !this.#sourceEnded && typeof it.return === 'function') {
      // Not awaited, on purpose (see the class comment). A failure here has nobody to report to.
      try {
        void Promise.resolve(it.return()).catch(noop)
      } catch {
        // a synchronous throw from return() is equally unreportable
      }
    }
    // A read still under way may yet deliver an item nobody will emit: give it back.
    this.#pending?.then((r) => (r.done ? undefined : releaseItem(r.value)), noop)
    this.#pending = undefined
    for (const wake of [...this.#wakers]) wake()
  }
}
