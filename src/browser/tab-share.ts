// One live read per stream for all the pages of an origin (`connect(url, { shareTabs: true })`):
// the pages that tail a stream elect a leader with a Web Lock; the leader alone holds the live
// request and passes each batch to the others on a BroadcastChannel. A page whose leader closes
// (the lock is released with it) hands the read to the next page waiting for the lock, which reads
// on from the last batch any page saw; each page fills what it missed with plain GETs
// (shared-reader.ts), so no page sees a gap or a repeat.
import { ConnectionError, HttpError } from '../core/errors.js'
import type { CatchUpPlan } from './catch-up.js'
import type { BrowserMessage } from './message.js'
import { StreamReader } from './reader.js'
import { compareTokens, parsePosition } from './tokens.js'

/** What the pages of a share say to each other. */
type Wire =
  | { kind: 'batch'; messages: BrowserMessage<unknown>[] }
  | { kind: 'leader'; hidden: boolean; at?: string | undefined }
  | { kind: 'at'; at: string }
  | { kind: 'hello' }
  | { kind: 'closed' }
  | { kind: 'failed'; name: string; message: string; status: number; url: string }

/** A tail of this page that takes part in a share. */
export interface ShareMember {
  /** A batch of the shared live read, in order (possibly overlapping what it has, possibly after a gap). */
  deliver(messages: BrowserMessage<unknown>[]): void
  /** The stream was closed (`error` undefined) or the live read failed for good. */
  ended(error: Error | undefined): void
  /** Where the member reads on from (a gateway token), when it is reading live. */
  position(): string | undefined
  /**
   * The shared read has reached `at` (a gateway token): its batches before it were sent, and may
   * not all have reached this page (a page's channel hears only what is posted once it is set
   * up; a leader's read from 'now' starts wherever the stream ends then).
   */
  reached(at: string): void
}

interface LockManagerLike {
  request(
    name: string,
    options: { signal?: AbortSignal; steal?: boolean },
    callback: () => Promise<void>,
  ): Promise<unknown>
}

/** The part of a BroadcastChannel a share uses. */
interface ChannelLike {
  postMessage(message: unknown): void
  close(): void
  onmessage: ((event: { data: unknown }) => void) | null
}

type ChannelConstructor = new (name: string) => ChannelLike

/** The Web Locks and BroadcastChannel of this page, when it has both (else tails are not shared). */
function shareSupport(): { locks: LockManagerLike; Channel: ChannelConstructor } | undefined {
  const g = globalThis as unknown as { navigator?: { locks?: LockManagerLike }; BroadcastChannel?: ChannelConstructor }
  const locks = g.navigator?.locks
  if (locks === undefined || typeof locks.request !== 'function' || typeof g.BroadcastChannel !== 'function')
    return undefined
  return { locks, Channel: g.BroadcastChannel }
}

const shares = new Map<string, TabShare>()

/** The share of `key` in this page (made when its first member joins; gone when its last leaves). */
export function shareOf(key: string, plan: CatchUpPlan): TabShare | undefined {
  const had = shares.get(key)
  if (had !== undefined) return had
  const support = shareSupport()
  if (support === undefined) return undefined
  const share = new TabShare(key, plan, support.locks, support.Channel)
  shares.set(key, share)
  return share
}

/** The page's visibility, where it has a document (a worker or Node has none: always "visible"). */
const doc = (globalThis as unknown as { document?: { hidden?: unknown; addEventListener?: unknown } }).document
const pageHidden = (): boolean => doc !== undefined && doc.hidden === true

export class TabShare {
  private readonly members = new Set<ShareMember>()
  /** The name of the lock and of the channel. */
  private readonly lockName: string
  private readonly channel: ChannelLike
  /** The current lock request (a newer one replaces it); its abort stops it waiting. */
  private request: { id: number; stop: AbortController } | undefined
  private requests = 0
  /** The lead: the request whose lock this page holds, and what ends it (releases the lock) when the last member leaves or the lock was stolen. */
  private leadership: { id: number; stop: () => void } | undefined
  /** The furthest position a shared batch reached (where a new leader reads on from). */
  private lastEnd: string | undefined
  /** What the leader said of its page: hidden pages pause their reads (`@durable-streams/client`). */
  private leaderHidden = false
  private done = false
  private readonly onVisibility = (): void => this.visibilityChanged()

  constructor(
    private readonly key: string,
    private readonly plan: CatchUpPlan,
    private readonly locks: LockManagerLike,
    Channel: ChannelConstructor,
  ) {
    this.lockName = `twainmq-tail:${key}`
    const channel = (this.channel = new Channel(this.lockName))
    channel.onmessage = (e) => this.received(e.data as Wire)
    const d = doc as { addEventListener?: (t: string, f: () => void) => void } | undefined
    d?.addEventListener?.('visibilitychange', this.onVisibility)
    this.ask(false)
    channel.postMessage({ kind: 'hello' } satisfies Wire) // a leader that is hidden already says so
  }

  /** Whether this page holds the live read now. */
  get leading(): boolean {
    return this.leadership !== undefined
  }

  join(member: ShareMember): void {
    this.members.add(member)
  }

  leave(member: ShareMember): void {
    this.members.delete(member)
    if (this.members.size > 0 || this.done) return
    this.done = true
    shares.delete(this.key)
    this.request?.stop.abort()
    this.request = undefined
    this.leadership?.stop()
    this.channel.close()
    const d = doc as { removeEventListener?: (t: string, f: () => void) => void } | undefined
    d?.removeEventListener?.('visibilitychange', this.onVisibility)
  }

  /**
   * Ask for the lock: in the queue, or (`steal`) at once, taking it from a leader whose page is
   * hidden. When the request ends (the lead ended, the lock was stolen) and the page still tails
   * the stream, it asks again, at the back of the queue.
   */
  private ask(steal: boolean): void {
    if (this.done) return
    this.request?.stop.abort()
    const id = ++this.requests
    const stop = new AbortController()
    this.request = { id, stop }
    const options = steal ? { steal: true } : { signal: stop.signal }
    void this.locks
      .request(this.lockName, options, () => this.lead(id))
      .catch(() => undefined) // stopped waiting, or stolen while leading
      .then(() => {
        if (this.leadership?.id === id) this.leadership.stop() // the lock is gone (stolen): so is the lead
        if (this.request?.id === id) {
          this.request = undefined
          this.ask(false)
        }
      })
  }

  /** This page got the lock: read live and share every batch, until it leaves or the lock is stolen. */
  private async lead(id: number): Promise<void> {
    if (this.done || this.request?.id !== id) return
    const from = this.startFrom()
    let stopped = false
    // Each request of the read says where it starts: a page whose tail is behind it reads the gap.
    const started = (at: string): void => {
      if (!stopped) this.send({ kind: 'at', at })
    }
    const reader = new StreamReader<unknown>(
      { ...this.plan, from: parsePosition(from), live: true, to: undefined, limit: undefined },
      started,
    )
    const released = new Promise<void>((resolve) => (this.leadership = { id, stop: resolve }))
    this.send({ kind: 'leader', hidden: pageHidden() })
    const reading = (async () => {
      try {
        for (;;) {
          const batch = await reader.next()
          if (stopped) return // the lead ended (this page left, or another took the read): nothing to tell
          if (batch === undefined) return this.send({ kind: 'closed' })
          this.send({ kind: 'batch', messages: batch })
        }
      } catch (e) {
        if (stopped) return
        const err = e as Partial<HttpError>
        this.send({
          kind: 'failed',
          name: err.name ?? 'Error',
          message: err.message ?? String(e),
          status: err.status ?? 0,
          url: err.url ?? this.plan.url,
        })
      }
    })()
    await released
    stopped = true
    this.leadership = undefined
    reader.close()
    await reading
  }

  /** A hidden leader tells the others (one of them, visible, takes the read); a follower made visible takes it from a hidden leader. */
  private visibilityChanged(): void {
    if (this.done) return
    if (this.leading) this.send({ kind: 'leader', hidden: pageHidden() })
    else if (!pageHidden() && this.leaderHidden) this.takeOver()
  }

  private takeOver(): void {
    // After a short random wait, and only if no other page took the read meanwhile (its new
    // leader says it is visible): several visible pages do not all steal in turn.
    setTimeout(() => {
      if (this.done || this.leading || !this.leaderHidden || pageHidden()) return
      this.leaderHidden = false // one steal per hidden leader: the new leader says whether it is hidden
      this.ask(true)
    }, Math.random() * 50)
  }

  /** Where a new leader reads from: the furthest a batch or a member reached, else the tail. */
  private startFrom(): string {
    let best = this.lastEnd
    for (const m of this.members) {
      const p = m.position()
      if (p !== undefined && (best === undefined || compareTokens(p, best) > 0)) best = p
    }
    return best ?? 'now'
  }

  private reached(at: string): void {
    if (this.lastEnd === undefined || compareTokens(at, this.lastEnd) > 0) this.lastEnd = at
    for (const m of [...this.members]) m.reached(at)
  }

  /** To the other pages, and to this page's own members. */
  private send(w: Wire): void {
    if (this.done) return
    this.channel.postMessage(w)
    if (w.kind !== 'leader') this.received(w)
  }

  private received(w: Wire): void {
    if (this.done) return
    if (w.kind === 'hello') {
      // With where the read is: the new page's channel may have missed batches posted before it was set up.
      if (this.leading) this.send({ kind: 'leader', hidden: pageHidden(), at: this.lastEnd })
      return
    }
    if (w.kind === 'leader') {
      this.leaderHidden = w.hidden
      if (w.at !== undefined) this.reached(w.at)
      if (w.hidden && !pageHidden() && !this.leading) this.takeOver()
      return
    }
    if (w.kind === 'at') return this.reached(w.at)
    if (w.kind === 'batch') {
      const last = w.messages[w.messages.length - 1]
      if (last === undefined) return
      if (this.lastEnd === undefined || compareTokens(last.resume, this.lastEnd) > 0) this.lastEnd = last.resume
      for (const m of [...this.members]) m.deliver(w.messages)
      return
    }
    const error =
      w.kind === 'closed'
        ? undefined
        : w.name === 'ConnectionError'
          ? new ConnectionError(w.message)
          : new HttpError(w.message, { status: w.status, url: w.url })
    for (const m of [...this.members]) m.ended(error)
  }
}
