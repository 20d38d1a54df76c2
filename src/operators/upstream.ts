import { releaseItem } from './settleable.js'
import { capturedPromise, lastCaptured } from '../core/captured-promise.js'
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
 * - **No listener outlives its wait.** A pull adds one reaction to the source's `next()` (none
 *   when an earlier pull that timed out added it already), and the pulls share one timer, moved
 *   only when a deadline comes sooner; every other wait (`until`, `sleep`) registers its own waker
 *   (and `sleep` its timer) and removes it when it settles. So a long iteration piles no
 *   reactions onto one shared promise, and a batch costs one timer, not one per message.
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
  /** `#pending` has this upstream's reaction (`#onNext`, `#onFail`). */
  #watched = false
  /** The waiting pull: its promise and how to settle it (undefined: none waits). */
  #waiting: Promise<Pulled<T>> | undefined
  #resolve: ((p: Pulled<T>) => void) | undefined
  #reject: ((e: unknown) => void) | undefined
  /** When the waiting pull times out (`performance.now()` ms; Infinity: never). */
  #deadline = Infinity
  /** The timer of pulls' timeouts, and when it fires. */
  #timer: NodeJS.Timeout | undefined
  #timerAt = Infinity
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
   * source is exhausted; rejects with the source's error. One pull waits at a time: a pull made
   * while another waits starts once that one has its answer (so no two get the same item).
   */
  pull(timeoutMs?: number): Promise<Pulled<T>> {
    if (this.#stop) return Promise.resolve(STOPPED)
    if (this.#sourceEnded) return Promise.resolve(END)
    const before = this.#waiting
    if (before !== undefined) {
      const again = (): Promise<Pulled<T>> => this.pull(timeoutMs)
      return before.then(again, again)
    }
    let pending = this.#pending
    if (pending === undefined) {
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
      this.#pending = pending
      this.#watched = false
    }
    const waiting = capturedPromise<Pulled<T>>()
    this.#resolve = lastCaptured.resolve
    this.#reject = lastCaptured.reject
    this.#waiting = waiting
    // One reaction per `next()` of the source, whichever pull it answers (a pull that timed out
    // leaves it to the next one). It also keeps a rejection nobody waits for from being "unhandled".
    if (!this.#watched) {
      this.#watched = true
      pending.then(this.#onNext, this.#onFail)
    }
    if (timeoutMs === undefined || timeoutMs === Infinity) {
      this.#deadline = Infinity
      this.#disarm()
    } else this.#arm(Math.max(0, timeoutMs))
    return waiting
  }

  /** The source's `next()` settled with `r`: the waiting pull gets it, else it stays for the next pull. */
  readonly #onNext = (r: IteratorResult<T>): void => {
    this.#watched = false
    const resolve = this.#resolve
    // Nobody waits (the pull timed out): kept in `#pending`. Stopped: `#end` hands it back.
    if (resolve === undefined || this.#stop) return
    this.#settled()
    this.#pending = undefined
    if (r.done === true) {
      this.#sourceEnded = true
      resolve(END)
    } else resolve({ item: r.value })
  }

  readonly #onFail = (e: unknown): void => {
    this.#watched = false
    const reject = this.#reject
    if (reject === undefined || this.#stop) return
    this.#settled()
    this.#pending = undefined
    this.#sourceEnded = true
    reject(e)
  }

  /** The waiting pull has its answer. */
  #settled(): void {
    this.#resolve = this.#reject = undefined
    this.#waiting = undefined
  }

  /**
   * The waiting pull times out in `ms`. One timer serves a run of pulls with the same deadline
   * (a batch's pulls, all timed from its first message): it is set again only when it would fire
   * too late, and when it fires early (the deadline moved on) it waits the rest.
   */
  #arm(ms: number): void {
    const at = performance.now() + ms
    this.#deadline = at
    if (this.#timer !== undefined) {
      if (this.#timerAt <= at + 1) return
      clearTimeout(this.#timer)
    }
    this.#timerAt = at
    this.#timer = setTimeout(this.#onTimer, ms)
  }

  #disarm(): void {
    if (this.#timer === undefined) return
    clearTimeout(this.#timer)
    this.#timer = undefined
    this.#timerAt = Infinity
  }

  readonly #onTimer = (): void => {
    this.#timer = undefined
    this.#timerAt = Infinity
    const resolve = this.#resolve
    if (resolve === undefined || this.#deadline === Infinity) return
    // A timer may fire up to a millisecond before `performance.now()` reaches its time.
    const left = this.#deadline - performance.now()
    if (left > 1) return this.#arm(left)
    this.#settled()
    resolve(TIMEOUT)
  }

  /** `promise`, unless the iteration stops first (`STOPPED`). */
  until<V>(promise: Promise<V>): Promise<V | typeof STOPPED> {
    if (this.#stop) return Promise.resolve(STOPPED)
    return new Promise((resolve, reject) => {
      const wake = (): void => {
        this.#wakers.delete(wake)
        resolve(STOPPED)
      }
      this.#wakers.add(wake)
      promise.then(
        (v) => {
          this.#wakers.delete(wake)
          resolve(v)
        },
        (e: unknown) => {
          this.#wakers.delete(wake)
          reject(e)
        },
      )
    })
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
    this.#disarm()
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
    const resolve = this.#resolve
    if (resolve !== undefined) {
      this.#settled()
      resolve(STOPPED)
    }
    for (const wake of [...this.#wakers]) wake()
  }
}
