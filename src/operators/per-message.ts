import { releaseItem, type Settleable } from './settleable.js'
import { Serial } from './serial.js'
import { END, Upstream } from './upstream.js'

const DONE: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined })

/**
 * The iterator of an operator that takes one message at a time from its source (`filterAck`,
 * `retry`): pulls, ends with the source, ends quietly on `return()` and with `AbortError` on abort,
 * handing an unsettled message back to its source. `handle` decides what a message gives: a result
 * to emit, or `undefined` to go on with the next message.
 */
export abstract class PerMessageIterator<T extends Settleable, R> implements AsyncIterableIterator<R> {
  protected readonly up: Upstream<T>
  protected finished = false
  /** `next()` calls run one at a time. */
  readonly #serial = new Serial()

  constructor(source: AsyncIterable<T>, signal: AbortSignal | undefined, outer: AbortSignal | undefined) {
    this.up = new Upstream(source, signal, outer)
  }

  /** What message `m` gives: a result to emit, or undefined to pull the next one. */
  protected abstract handle(m: T): Promise<IteratorResult<R> | undefined>

  [Symbol.asyncIterator](): this {
    return this
  }

  async next(): Promise<IteratorResult<R>> {
    const turn = this.#serial.enter()
    if (turn !== undefined) await turn
    try {
      for (;;) {
        if (this.finished) return DONE
        let pulled
        try {
          pulled = await this.up.pull()
        } catch (error) {
          this.finish()
          throw error
        }
        if (pulled === END) {
          this.finish()
          return DONE
        }
        if (typeof pulled !== 'object') return this.stopped()
        const out = await this.handle(pulled.item)
        if (out !== undefined) return out
      }
    } finally {
      this.#serial.leave()
    }
  }

  return(): Promise<IteratorResult<R>> {
    this.finished = true
    this.up.stop()
    return Promise.resolve(DONE)
  }

  /** A failure of the message being handled ends the iteration (the error is the caller's to throw). */
  protected fail(): void {
    this.finished = true
    this.up.stop()
  }

  private finish(): void {
    this.finished = true
    this.up.close()
  }

  /** Ended mid-message: hand the unsettled message back to its source. */
  protected stopped(unsettled?: T): IteratorResult<R> {
    this.finished = true
    if (unsettled !== undefined) releaseItem(unsettled)
    if (this.up.aborted) throw this.up.abortError()
    return DONE
  }
}
