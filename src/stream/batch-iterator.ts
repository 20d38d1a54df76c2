import { AbortError, abortErrorFrom } from '../core/errors.js'

/**
 * A pull source of batches for one iteration. `next` resolves with a non-empty batch, or
 * `undefined` when the source is finished. It must settle promptly once `signal` aborts (it may
 * reject with anything then: the iterator has already moved on). `close` runs exactly once. A
 * batch once handed out is the iterator's: it clears each entry as it yields it (a message the
 * loop is done with is then garbage at once), so a source must not keep using the array.
 */
export interface BatchSource<T> {
  next(signal: AbortSignal): Promise<T[] | undefined>
  close(): Promise<void> | void
  /**
   * Take back items `next` handed out that the iteration never yielded (it ended mid-batch).
   * Consumers use it so a message pulled but not emitted is delivered again by a later iteration.
   */
  unread?(items: T[]): void
  /**
   * Whether an item handed out went stale before the iteration reached it (a processor's message
   * whose partition was rewound since): it is passed over, not yielded. Default: none is.
   */
  skip?(item: T): boolean
}

const QUIET = Symbol('quiet end')

/**
 * Drives a `BatchSource` for one iteration and ends it at once on `return()`, `close()` or an
 * aborted signal — even while `next` is waiting — unlike an async generator, whose `return()`
 * queues behind a pending `next()`.
 */
export class BatchIterator<T> implements AsyncIterator<T> {
  private buf: T[] = []
  private idx = 0
  private finished = false
  private failure: unknown
  private readonly ctrl = new AbortController()
  // Method syntax keeps `T` covariant, so a `MessageStream<Message<string>>` is a `MessageStream<Message<unknown>>`.
  private pending: { resolve(b: T[] | undefined): void; reject(e: unknown): void } | undefined
  private closed: Promise<void> | undefined
  private readonly offAbort: () => void

  /**
   * @param signals any of them aborting ends the iteration with `AbortError` (the stream's `signal`
   * option, and the one passed to `[Symbol.asyncIterator](signal)`, as IxJS does).
   */
  constructor(
    private readonly source: BatchSource<T>,
    signals: ReadonlyArray<AbortSignal | undefined>,
    private readonly onEnd: (it: BatchIterator<unknown>) => void,
  ) {
    const list = signals.filter((s): s is AbortSignal => s !== undefined)
    const onAbort = (event: Event) => this.fail(abortErrorFrom(event.target as AbortSignal))
    this.offAbort = () => {
      for (const s of list) s.removeEventListener('abort', onAbort)
    }
    const aborted = list.find((s) => s.aborted)
    if (aborted) this.fail(abortErrorFrom(aborted))
    else for (const s of list) s.addEventListener('abort', onAbort, { once: true })
  }

  /** The next whole batch (what the Observable bridge emits synchronously), or undefined at the end. */
  nextBatch(): Promise<T[] | undefined> {
    if (this.idx < this.buf.length) {
      const rest = this.idx === 0 ? this.buf : this.buf.slice(this.idx)
      this.buf = []
      this.idx = 0
      return Promise.resolve(rest)
    }
    if (this.failure !== undefined) return Promise.reject(this.failure)
    if (this.finished) return Promise.resolve(undefined)
    if (this.pending) return Promise.reject(new Error('BatchIterator: concurrent next() calls are not supported'))
    return new Promise<T[] | undefined>((resolve, reject) => {
      this.pending = { resolve, reject }
      this.source.next(this.ctrl.signal).then(
        (b) => this.settle(() => (b === undefined ? (this.finish(), resolve(undefined)) : resolve(b))),
        (e) => this.settle(() => (this.fail(e), reject(e))),
      )
    })
  }

  private settle(fn: () => void): void {
    if (!this.pending) return // already ended by return()/abort
    this.pending = undefined
    fn()
  }

  next(): Promise<IteratorResult<T>> {
    // The per-message path: no async frame, one already-resolved promise.
    const buf = this.buf
    const source = this.source
    for (let i = this.idx; i < buf.length; i++) {
      const value = buf[i] as T
      // Yielded: no longer held here, so a message the loop is done with dies young (a batch of
      // thousands kept whole until its end survives scavenges and is copied, then promoted).
      buf[i] = undefined as T
      this.idx = i + 1
      if (source.skip === undefined || !source.skip(value)) return Promise.resolve({ value, done: false })
    }
    return this.nextSlow()
  }

  private async nextSlow(): Promise<IteratorResult<T>> {
    const source = this.source
    for (;;) {
      const b = await this.nextBatch()
      if (!b) return { value: undefined, done: true }
      for (let i = 0; i < b.length; i++) {
        const value = b[i] as T
        b[i] = undefined as T
        if (source.skip !== undefined && source.skip(value)) continue
        this.buf = b
        this.idx = i + 1
        return { value, done: false }
      }
    }
  }

  async return(): Promise<IteratorResult<T>> {
    void this.finish()
    return { value: undefined, done: true }
  }

  async throw(e?: unknown): Promise<IteratorResult<T>> {
    void this.finish()
    throw e
  }

  /** Give items of a batch obtained with `nextBatch` back to the source (they were not emitted). */
  giveBack(items: T[]): void {
    if (items.length > 0) this.source.unread?.(items)
  }

  /** End quietly: pending `next` resolves done, resources are released (not awaited by callers). */
  finish(): Promise<void> {
    if (!this.finished) {
      this.finished = true
      if (this.idx < this.buf.length) this.giveBack(this.buf.slice(this.idx))
      this.buf = []
      this.idx = 0
      const p = this.pending
      this.pending = undefined
      p?.resolve(undefined)
      this.release(QUIET)
    }
    return this.closed ?? Promise.resolve()
  }

  /** End this iteration with `e` (a pending `next` rejects with it). */
  abortWith(e: unknown): void {
    this.fail(e)
  }

  private fail(e: unknown): void {
    if (this.finished) return
    this.failure = e instanceof Error || e === QUIET ? e : new AbortError(String(e))
    this.finished = true
    if (this.idx < this.buf.length) this.giveBack(this.buf.slice(this.idx))
    this.buf = []
    this.idx = 0
    const p = this.pending
    this.pending = undefined
    p?.reject(this.failure)
    this.release(e)
  }

  private release(reason: unknown): void {
    this.offAbort()
    this.ctrl.abort(reason)
    this.closed = Promise.resolve()
      .then(() => this.source.close())
      .catch(() => undefined)
    this.onEnd(this as BatchIterator<unknown>)
  }
}
