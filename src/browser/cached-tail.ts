// A tail with `cache` (loaded on demand, like the tab share): what the page's cache holds of the
// stream from the tail's `from` on is given at once, then the network read goes on from where the
// cache ends; every batch read is stored. A tail whose `from` the cache does not cover (`now`, a
// token before the range, the stream's start once the range's beginning was evicted) reads from
// `from`, and the cache starts its range again where the read joins it.
import type { BrowserMessage } from './message.js'
import { appendRange, loadRange, type CachedRange } from './message-cache.js'
import { formatPosition, parsePosition, type Position } from './tokens.js'

/** A read's batches (as `BrowserMessageStream` takes them). */
export interface BatchReader<V> {
  next(): Promise<BrowserMessage<V>[] | undefined>
  close(): void
}

/** Cached messages given in batches of at most this many. */
const BATCH = 1000

export class CachedTailReader<V> implements BatchReader<V> {
  private readonly cached: BrowserMessage<V>[][] = []
  private inner: BatchReader<V> | undefined
  private readonly ready: Promise<void>
  private closed = false
  /** The next batch stored is the stream's first messages. */
  private atStart: boolean
  /** Stores, one at a time and in order (a store's failure leaves the cache as it was). */
  private storing: Promise<void> = Promise.resolve()

  constructor(
    private readonly stream: string,
    private readonly key: string,
    private readonly from: Position,
    private readonly max: number,
    private readonly open: (from: Position) => BatchReader<V>,
  ) {
    this.atStart = from.base === '-1' && from.skip === 0
    this.ready = this.start()
  }

  private async start(): Promise<void> {
    let range: CachedRange | undefined
    try {
      range = await loadRange(this.key)
    } catch {
      range = undefined // an unreadable cache: read as without one
    }
    const at = range === undefined ? -1 : this.indexOf(range)
    if (range === undefined || at < 0) {
      this.inner = this.closed ? undefined : this.open(this.from)
      return
    }
    const rest = range.messages.slice(at)
    for (let i = 0; i < rest.length; i += BATCH)
      this.cached.push(rest.slice(i, i + BATCH).map((m) => ({ stream: this.stream, ...m }) as BrowserMessage<V>))
    this.atStart = false
    this.inner = this.closed ? undefined : this.open(parsePosition(range.resume))
  }

  /** Where `from` is in the range (its length: at its end), or -1 when the range does not cover it. */
  private indexOf(range: CachedRange): number {
    if (this.from.base === 'now') return -1
    if (this.atStart) return range.fromStart ? 0 : -1
    const token = formatPosition(this.from)
    if (token === range.resume) return range.messages.length
    return range.messages.findIndex((m) => m.offset === token)
  }

  async next(): Promise<BrowserMessage<V>[] | undefined> {
    await this.ready
    const cached = this.cached.shift()
    if (cached !== undefined) return cached
    if (this.closed || this.inner === undefined) return undefined
    const batch = await this.inner.next()
    if (batch !== undefined && batch.length > 0) {
      const fromStart = this.atStart
      this.atStart = false
      const copy = batch.slice() // the stream's iterator takes messages off the batch it is given
      this.storing = this.storing
        .then(() => appendRange(this.key, copy as BrowserMessage<unknown>[], fromStart, this.max))
        .catch(() => undefined) // quota, a closed database: the page reads on, the cache lags
    }
    return batch
  }

  close(): void {
    this.closed = true
    this.cached.length = 0
    this.inner?.close()
    void this.ready.then(() => this.inner?.close())
  }
}
