// One tail of a page in a tab share (tab-share.ts): the same `next()`/`close()` as `StreamReader`,
// fed by the share's batches instead of a live request of its own. It first reads from its `from`
// to the current end with plain GETs (catch-up.ts); then each shared batch gives what lies past its
// position (a batch it already has is dropped, a batch that starts past it is preceded by a GET
// fill of the gap). While it fills, or while its reader is behind by more than `MAX_QUEUED`
// messages, shared batches are not kept: the fill reads on to the end instead.
import { AbortError } from '../core/errors.js'
import { catchUp, type CatchUpPlan } from './catch-up.js'
import type { BrowserMessage } from './message.js'
import type { BatchReader } from './reader.js'
import { QueueSignals } from './queue-signals.js'
import type { ShareMember, TabShare } from './tab-share.js'
import { compareTokens, formatPosition, parsePosition, type Position } from './tokens.js'

/** Messages queued for a slow reader before shared batches are dropped (and read again later). */
const MAX_QUEUED = 10_000

export class SharedTailReader<V> implements ShareMember, BatchReader<V> {
  private readonly queue: BrowserMessage<V>[][] = []
  private queued = 0
  private readonly abort = new AbortController()
  private pos: Position
  /** Reading with GETs (to `fillTo`, or the end): shared batches wait in `held` (or are dropped). */
  private filling = false
  /** Shared batches that came during a fill to a known point. */
  private held: BrowserMessage<unknown>[][] = []
  private heldCount = 0
  /** The share said the stream is closed while this page was filling or behind. */
  private closeSeen = false
  /** Fill to the end once the reader has taken what is queued (batches were dropped). */
  private behind = false
  /** Where the shared read said it was while this page was filling or behind: read to it after. */
  private reachedAt: string | undefined
  private failure: Error | undefined
  private isEnded = false
  /** The stream is closed: end once the queue is taken. */
  private closedAt = false
  private readonly signals = new QueueSignals()

  constructor(
    private readonly plan: CatchUpPlan,
    from: Position,
    private readonly share: TabShare,
  ) {
    this.pos = from
    share.join(this)
    void this.fill()
  }

  async next(): Promise<BrowserMessage<V>[] | undefined> {
    for (;;) {
      const batch = this.queue.shift()
      if (batch) {
        this.queued -= batch.length
        this.signals.roomFreed()
        if (this.queue.length === 0 && this.behind && !this.filling) void this.fill()
        return batch
      }
      if (this.failure) throw this.failure
      if (this.isEnded || this.closedAt) return undefined
      await this.signals.data()
    }
  }

  close(): void {
    this.end()
  }

  position(): string | undefined {
    return this.filling || this.behind ? undefined : formatPosition(this.pos)
  }

  deliver(messages: BrowserMessage<unknown>[]): void {
    if (this.isEnded || this.closedAt) return
    if (this.filling) {
      this.held.push(messages)
      this.heldCount += messages.length
      if (this.heldCount > MAX_QUEUED) {
        this.held = []
        this.heldCount = 0
        this.behind = true
      }
      return
    }
    if (this.behind) return
    const first = messages[0]
    if (first === undefined) return
    const at = formatPosition(this.pos)
    if (compareTokens(first.offset, at) > 0) {
      // A gap (this page joined after the batches before it, or a new leader read from further on).
      this.hold([messages])
      void this.fill(first.offset)
      return
    }
    // A message that starts before the position and ends past it (a text or byte chunk joining
    // several appends, of which the page has the first): its part past the position is read
    // with a GET, then the messages after it are taken.
    const straddles = messages.findIndex((m) => compareTokens(m.offset, at) < 0 && compareTokens(m.resume, at) > 0)
    if (straddles >= 0) {
      const after = messages.slice(straddles + 1)
      this.hold(after.length > 0 ? [after] : [])
      void this.fill((messages[straddles] as BrowserMessage<unknown>).resume)
      return
    }
    this.take(messages.filter((m) => compareTokens(m.offset, at) >= 0))
  }

  reached(at: string): void {
    if (this.isEnded || this.closedAt) return
    if (this.filling || this.behind) {
      if (this.reachedAt === undefined || compareTokens(at, this.reachedAt) > 0) this.reachedAt = at
      return
    }
    // Batches before `at` that never came here: read them (the batches coming meanwhile are held).
    if (compareTokens(formatPosition(this.pos), at) < 0) void this.fill(at)
  }

  private hold(batches: BrowserMessage<unknown>[][]): void {
    this.held = batches
    this.heldCount = batches.reduce((n, b) => n + b.length, 0)
  }

  ended(error: Error | undefined): void {
    if (error !== undefined) return this.end(error)
    if (!this.filling && !this.behind) {
      this.closedAt = true
      this.signals.signal()
      return
    }
    // Filling (perhaps to a point before the close) or behind: once the batches held are given,
    // a GET to the end reads up to the close and sees the stream closed.
    this.closeSeen = true
  }

  /** GET from the position to `to` (exclusive), or to the end; then the batches held meanwhile. */
  private async fill(to?: string): Promise<void> {
    this.filling = true
    this.behind = false
    try {
      const r = await catchUp<V>(this.plan, this.pos, to, this.abort.signal, async (page) => {
        this.take(page.messages as BrowserMessage<unknown>[])
        while (!this.isEnded && this.queued > MAX_QUEUED) await this.signals.room()
      })
      this.pos = r.position
      if (r.closed) {
        this.closedAt = true
        this.signals.signal()
        return
      }
    } catch (e) {
      if (!this.isEnded) this.end(e instanceof Error ? e : new Error(String(e)))
      return
    } finally {
      this.filling = false
    }
    const held = this.held
    this.hold([])
    for (const batch of held) this.deliver(batch)
    if (this.filling || this.closedAt || this.isEnded) return
    const at = this.reachedAt
    this.reachedAt = undefined
    if (at !== undefined && !this.behind) this.reached(at)
    if (this.filling) return
    // Batches were dropped during the fill and the reader has taken everything, or the stream
    // was closed meanwhile: read on to the end now.
    if ((this.behind && this.queue.length === 0) || this.closeSeen) void this.fill()
  }

  private take(messages: BrowserMessage<unknown>[]): void {
    if (this.isEnded || messages.length === 0) return
    this.queue.push(messages as BrowserMessage<V>[])
    this.queued += messages.length
    this.pos = parsePosition((messages[messages.length - 1] as BrowserMessage<unknown>).resume)
    if (!this.filling && this.queued > MAX_QUEUED) this.behind = true
    this.signals.signal()
  }

  private end(failure?: Error): void {
    if (this.isEnded) return
    this.isEnded = true
    this.failure = failure
    this.abort.abort(new AbortError('the read was closed'))
    this.share.leave(this)
    this.signals.signal()
  }
}
