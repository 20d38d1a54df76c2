// A tail with `cache` (loaded on demand, like the tab share): what the page's cache holds of the
// stream from the tail's `from` on is given at once, then the network read goes on from where the
// cache ends; every batch read is stored. A tail whose `from` the cache does not cover (`now`, a
// token before the range, the stream's start once the range's beginning was evicted) reads from
// `from`, and the cache starts its range again where the read joins it.
import type { BrowserMessage } from './message.js'
import type { BatchReader } from './reader.js'
import { statusOf } from './retry.js'
import { appendRange, clearRange, loadRange, type CachedMessage, type CachedRange } from './message-cache.js'
import { formatPosition, parsePosition, type Position } from './tokens.js'

/** Cached messages given in batches of at most this many. */
const BATCH = 1000

export class CachedTailReader<V> implements BatchReader<V> {
  private readonly cached: BrowserMessage<V>[][] = []
  private inner: BatchReader<V> | undefined
  private readonly ready: Promise<void>
  private closed = false
  /** The next batch stored is the stream's first messages. */
  private atStart: boolean
  /** Cached messages were given (the network read goes on from the cache's end). */
  private fromCache = false
  /** The cached messages still being read (given before any network batch). */
  private rest: Promise<void> = Promise.resolve()
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
      // Read only a range that can serve the tail: none for 'now', one from the start for 'start'.
      if (this.from.base !== 'now') range = await loadRange(this.key, (r) => r.fromStart || !this.atStart)
      if (range !== undefined) {
        // A tail from the start got a range from the start (the filter above).
        if (this.atStart) {
          // The common reload: the first part is given while the rest is read.
          const head = await range.head
          this.give(head)
          this.atStart = false
          const rest = range.rest.then(
            (messages) => this.give(messages),
            () => {
              // The rest could not be read: the network read goes on right after the first part.
              this.inner?.close()
              const after = head[head.length - 1]?.resume
              this.inner = this.closed ? undefined : this.open(after === undefined ? this.from : parsePosition(after))
            },
          )
          this.openFrom(range.resume, rest)
          return
        }
        const all = [...(await range.head), ...(await range.rest)]
        const token = formatPosition(this.from)
        const at = token === range.resume ? all.length : all.findIndex((m) => m.offset === token)
        if (at >= 0) {
          this.give(all.slice(at))
          this.openFrom(range.resume, Promise.resolve())
          return
        }
      }
    } catch {
      // an unreadable cache: read as without one
    }
    this.inner = this.closed ? undefined : this.open(this.from)
  }

  /** Queue cached messages, in batches. */
  private give(messages: CachedMessage[]): void {
    if (this.closed) return
    this.fromCache = true
    for (let i = 0; i < messages.length; i += BATCH)
      this.cached.push(messages.slice(i, i + BATCH).map((m) => ({ stream: this.stream, ...m }) as BrowserMessage<V>))
  }

  /** The network read from the cache's end, once the cached messages before it are queued. */
  private openFrom(resume: string, queued: Promise<void>): void {
    this.inner = this.closed ? undefined : this.open(parsePosition(resume))
    this.rest = queued
  }

  async next(): Promise<BrowserMessage<V>[] | undefined> {
    await this.ready
    let cached = this.cached.shift()
    if (cached !== undefined) return cached
    await this.rest // the rest of the cached range comes before the network's batches
    cached = this.cached.shift()
    if (cached !== undefined) return cached
    if (this.closed || this.inner === undefined) return undefined
    let batch: BrowserMessage<V>[] | undefined
    try {
      batch = await this.inner.next()
    } catch (e) {
      // Read on from the cache's end and refused as not of this stream (400: deleted and made
      // again) or trimmed (410): the cache is of a stream that is gone. It is forgotten, so the
      // next tail reads afresh; this one ends with the error.
      const status = statusOf(e)
      if (this.fromCache && (status === 400 || status === 410)) await clearRange(this.key).catch(() => undefined)
      throw e
    }
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
