// One iteration of a browser tail or history: reads through `@durable-streams/client`'s `stream()`
// and, when a read fails with a network error or a retriable status, reads again from the last
// offset it handed on (so nothing is lost or repeated), waiting 100 ms doubling to 2 s between
// tries, for at most `retryMs` of failing in a row. Batches wait in a one-batch queue.
import { stream, type StreamResponse } from '@durable-streams/client'
import { AbortError } from '../core/errors.js'
import type { BrowserMessage } from './message.js'
import { QueueSignals } from './queue-signals.js'
import { backoffMs, FailureClock, pause } from './retry.js'
import { batchTokens, compareTokens, formatPosition, type Position } from './tokens.js'

/** What one iteration reads. */
export interface ReadPlan {
  stream: string
  url: string
  from: Position
  live: boolean
  to: string | undefined
  limit: number | undefined
  headers: () => Record<string, string>
  fetch: typeof fetch | undefined
  retryMs: number
  /** Share the live read with the other pages of the origin under this key (tab-share.ts); undefined: not shared. */
  shareKey?: string | undefined
  /** Keep the tail in the page's cache under this key (cached-tail.ts); undefined: no cache. */
  cache?: { key: string; maxMessages: number } | undefined
}

/** A read's batches, however it reads them (its own request, a tab share, the page cache). */
export interface BatchReader<V> {
  /** The next batch; undefined once the read ended. */
  next(): Promise<BrowserMessage<V>[] | undefined>
  /** Stop at once. */
  close(): void
}

type Chunk = { values: unknown[]; offset: string; closed: boolean; upToDate: boolean }

export class StreamReader<V> implements BatchReader<V> {
  private readonly queue: BrowserMessage<V>[][] = []
  private readonly abort = new AbortController()
  private position: Position
  private emitted = 0
  private sessions = 0
  private failure: Error | undefined
  private ended = false
  private readonly signals = new QueueSignals()

  /**
   * @param onSession told where each request of the read starts (`'now'` resolved to a token): a
   * tab share's leader passes it on, so a page behind it reads what it has not been sent.
   */
  constructor(
    private readonly plan: ReadPlan,
    private readonly onSession?: (at: string) => void,
  ) {
    this.position = plan.from
    void this.run()
  }

  /** The next batch of messages; undefined once the read ended (history done, stream closed). */
  async next(): Promise<BrowserMessage<V>[] | undefined> {
    for (;;) {
      const batch = this.queue.shift()
      if (batch) {
        this.signals.roomFreed()
        return batch
      }
      if (this.failure) throw this.failure
      if (this.ended) return undefined
      await this.signals.data()
    }
  }

  /** Stop: aborts the HTTP request at once. */
  close(): void {
    this.end()
  }

  private end(failure?: Error): void {
    if (this.ended) return
    this.ended = true
    this.failure = failure
    this.abort.abort(new AbortError('the read was closed'))
    this.signals.signal()
  }

  private async run(): Promise<void> {
    const failures = new FailureClock(this.plan.url, this.plan.retryMs)
    while (!this.ended) {
      try {
        const done = await this.session(() => failures.reset())
        if (done) return this.end()
        await pause(backoffMs(0), this.abort.signal) // a live read the server ended: read on
      } catch (error) {
        if (this.ended) return
        const end = failures.verdict(error)
        if (end) return this.end(end)
        await failures.backoff(this.abort.signal)
      }
    }
  }

  /**
   * One `stream()` session from the current position; resolves true when the read is complete,
   * false when the server ended it cleanly (read on). Reads are always live: the client's first
   * requests are catch-up reads, and a history ends at the first up-to-date batch, because with
   * `live: false` the client settles `closed` before the last batch reaches its subscriber.
   */
  private async session(connected: () => void): Promise<boolean> {
    const id = ++this.sessions
    const res = await stream({
      url: this.plan.url,
      offset: this.position.base,
      live: 'sse',
      headers: this.plan.headers(),
      ...(this.plan.fetch ? { fetch: this.plan.fetch } : {}),
      signal: this.abort.signal,
      warnOnHttp: false,
      backoffOptions: { initialDelay: 100, maxDelay: 2000, multiplier: 2, maxRetries: 0 },
    })
    connected()
    if (this.position.base === 'now') this.position = { base: res.offset, skip: 0 }
    this.onSession?.(formatPosition(this.position))
    return new Promise<boolean>((resolve, reject) => {
      // A batch of an older session is dropped: the session after it reads again from before it.
      const accept = async (chunk: Chunk): Promise<void> => {
        if (id !== this.sessions || this.ended) return
        this.take(chunk)
        if (this.ended || chunk.closed || (!this.plan.live && chunk.upToDate)) return resolve(true)
        while (!this.ended && this.queue.length > 0) await this.signals.room()
      }
      subscribe(res, accept)
      // `closed` settles on an error, or when the session ends; a closed stream's last batch is still to come.
      res.closed.then(() => res.streamClosed || resolve(false), reject)
    })
  }

  /** Turns a chunk into messages from the current position; drops what a composite `from` skips. */
  private take(chunk: Chunk): void {
    const start = { base: this.position.base, skip: 0 }
    const tokens = batchTokens(start, chunk.offset, chunk.values.length)
    const messages: BrowserMessage<V>[] = []
    for (let i = this.position.skip; i < chunk.values.length; i++) {
      const offset = tokens[i]!
      if (this.plan.to !== undefined && compareTokens(offset, this.plan.to) >= 0) return this.finishWith(messages)
      messages.push({ stream: this.plan.stream, offset, value: chunk.values[i] as V, resume: tokens[i + 1]! })
      if (++this.emitted === this.plan.limit) return this.finishWith(messages)
    }
    const skipLeft = Math.max(0, this.position.skip - chunk.values.length)
    this.position = skipLeft > 0 ? { base: this.position.base, skip: skipLeft } : { base: chunk.offset, skip: 0 }
    this.push(messages)
  }

  private push(messages: BrowserMessage<V>[]): void {
    if (messages.length === 0) return
    this.queue.push(messages)
    this.signals.signal()
  }

  private finishWith(messages: BrowserMessage<V>[]): void {
    this.push(messages)
    this.ended = true
    this.abort.abort(new AbortError('the read is complete'))
    this.signals.signal()
  }
}

/** Feeds `accept` the response's batches: JSON items, text chunks or byte chunks. */
function subscribe(res: StreamResponse, accept: (chunk: Chunk) => Promise<void>): void {
  const type = res.contentType ?? ''
  if (type.includes('application/json')) {
    res.subscribeJson((b) =>
      accept({ values: [...b.items], offset: b.offset, closed: b.streamClosed, upToDate: b.upToDate }),
    )
  } else if (type.startsWith('text/')) {
    res.subscribeText((c) =>
      accept({
        values: c.text.length > 0 ? [c.text] : [],
        offset: c.offset,
        closed: c.streamClosed,
        upToDate: c.upToDate,
      }),
    )
  } else {
    res.subscribeBytes((c) =>
      accept({
        values: c.data.length > 0 ? [c.data] : [],
        offset: c.offset,
        closed: c.streamClosed,
        upToDate: c.upToDate,
      }),
    )
  }
}
