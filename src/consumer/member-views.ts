import type { BatchSource } from '../stream/batch-iterator.js'

/** Most messages one view takes at a time. */
const MAX_DELIVER = 256
/**
 * A view that handed out this many messages in one go lets the event loop turn (`setImmediate`)
 * before the next, when its member wants it (a processor with outputs queued: decision 233). From
 * a full buffer, deliveries and an application's loop run in microtasks only, and a processor's
 * output writes wait for a turn: without one they would wait until the buffer ran dry, with every
 * message delivered meanwhile and its outputs alive.
 */
const TURN_EVERY = 512
/**
 * Longest a view hands out messages without the event loop turning (ms): then it lets it turn
 * before the next (decision 240). Messages come from the buffer in microtasks, so a loop whose body
 * waits for no I/O (a backlog read ahead, a message nacked again and again) never let it turn: no
 * timer ran (the member's heartbeats, the application's), no I/O, no signal handler.
 */
const MAX_BUSY_MS = 50

/** What the views need of their member (its core). */
export interface ViewedMember<T> {
  readonly state: 'running' | 'closing' | 'closed'
  /** The fatal failure that ended the member, if any. */
  readonly failure: unknown
  /** A view throws the fatal failure (so it needs no warning). */
  failureSeen(): void
  /** Hand up to `n` buffered messages to the application (marking them delivered). */
  take(n: number): T[]
  /** Take back messages a view received but never emitted. */
  unread(items: T[]): void
  /** Whether `skip` applies (a view asks it of each message only then). */
  readonly skips?: boolean
  /** A message handed to a view that went stale before it was emitted (`BatchSource.skip`). */
  skip?(m: T): boolean
}

/** What the views tell the member's parts. */
export interface ViewListener {
  /** Whether something iterates changed (`count` went to or from 0, or by one). */
  keepAliveChanged(): void
  /** `demand` changed. */
  demandChanged(): void
  /** The application started waiting for messages (`waitingSince` went from undefined to a time). */
  waitingStarted(): void
}

/**
 * The views of a membership: each iteration of the consumer (and `poll()`) takes buffered
 * messages from the one member. A view waits (abortably) for more; its end hands back what it
 * took and never emitted. Until something iterates or polls, the member reads nothing.
 */
export class MemberViews<T> {
  /** Live iterations (views) of this membership. */
  count = 0
  /** `poll()` was called: from then on the member reads ahead for polls, as for an iteration. */
  #polled = false
  readonly #waiting = new Set<() => void>()
  /** Since when (ms, `Date.now()`) some view has waited for messages without a break. */
  #waitingSince = 0
  /** Since when polls have found nothing (undefined: the last poll took something). */
  #pollEmptySince: number | undefined

  /** @param turnWanted whether a view that handed out `TURN_EVERY` messages in one go waits for a turn (none: never). */
  constructor(
    private readonly member: ViewedMember<T>,
    private readonly listener: ViewListener,
    private readonly turnWanted?: () => boolean,
  ) {}

  /**
   * Whether anything wants messages: a live iteration, or `poll()` was called. Until then a member
   * reads nothing (it is a member all the same), so an idle consumer holds nothing.
   */
  get demand(): boolean {
    return this.count > 0 || this.#polled
  }

  /** Up to `n` buffered messages, without waiting (the first call starts reading ahead). */
  poll(n: number): T[] {
    if (!this.#polled && this.member.state === 'running') {
      this.#polled = true
      this.listener.demandChanged()
    }
    const got = this.member.take(Math.max(0, Math.floor(n)))
    if (got.length > 0) this.#pollEmptySince = undefined
    else if (n >= 1 && this.#pollEmptySince === undefined) {
      this.#pollEmptySince = Date.now()
      if (this.count === 0) this.listener.waitingStarted()
    }
    return got
  }

  /**
   * Since when (ms, `Date.now()`) the application has been waiting for messages: a view waiting
   * now, or, while nothing iterates, polls finding nothing since then. Undefined when it is busy
   * with what it has (an iteration not waiting, or a poll that took something).
   */
  get waitingSince(): number | undefined {
    if (this.#waiting.size > 0) return this.#waitingSince
    return this.count === 0 ? this.#pollEmptySince : undefined
  }

  /** A view: takes buffered messages, waiting (abortably) for more; its end releases what it held. */
  open(): BatchSource<T> {
    const member = this.member
    this.count++
    this.listener.keepAliveChanged()
    if (this.count === 1) this.listener.demandChanged()
    let open = true
    /** Messages handed out since the event loop last turned (as far as this view knows). */
    let sinceTurn = 0
    /** When (`Date.now()`) this view began handing out messages with no turn of the event loop since (0: it turned). */
    let busySince = 0
    const turned = (): void => void (busySince = 0)
    return {
      next: async (signal) => {
        for (;;) {
          if (member.failure !== undefined) {
            member.failureSeen()
            throw member.failure
          }
          if (member.state !== 'running') return undefined
          if (sinceTurn >= TURN_EVERY && this.turnWanted?.() === true) {
            sinceTurn = 0
            await new Promise<void>((resolve) => setImmediate(resolve))
            if (signal.aborted) return undefined
            continue
          }
          if (busySince !== 0 && Date.now() - busySince >= MAX_BUSY_MS) {
            // `turned` runs in this turn, before the promise resolves: busy from the next batch on.
            await new Promise<void>((resolve) => setImmediate(resolve))
            if (signal.aborted) return undefined
            continue
          }
          const batch = member.take(MAX_DELIVER)
          if (batch.length > 0) {
            sinceTurn += batch.length
            if (busySince === 0) {
              busySince = Date.now()
              setImmediate(turned)
            }
            return batch
          }
          sinceTurn = 0
          await new Promise<void>((resolve) => {
            const done = () => {
              this.#waiting.delete(done)
              signal.removeEventListener('abort', done)
              resolve()
            }
            const first = this.#waiting.size === 0
            if (first) this.#waitingSince = Date.now()
            this.#waiting.add(done)
            if (first) this.listener.waitingStarted()
            signal.addEventListener('abort', done, { once: true })
            if (signal.aborted) done()
          })
          if (signal.aborted) return undefined
        }
      },
      unread: (items) => member.unread(items),
      skip: member.skips === true ? (m) => member.skip?.(m) === true : undefined,
      close: () => {
        if (!open) return
        open = false
        this.count--
        this.listener.keepAliveChanged()
        if (this.count === 0) this.listener.demandChanged()
      },
    }
  }

  /** Wake every view waiting for messages (new ones arrived, or the member is ending). */
  wake(): void {
    for (const w of [...this.#waiting]) w()
  }
}
