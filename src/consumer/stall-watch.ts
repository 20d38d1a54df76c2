import { StalledError } from '../core/errors.js'

/** What the stall watch looks at: its member's state, what it holds, whether the application waits. */
export interface WatchedMember {
  readonly state: 'running' | 'closing' | 'closed'
  readonly memberId: string
  readonly opts: { readonly group: string; readonly maxInFlight: number; readonly stallWarningMs: number }
  /** Since when the application has waited for messages (undefined: it is busy with what it has). */
  readonly views: { readonly waitingSince: number | undefined }
  /** Report a background failure (an `'error'` event, else a process warning once per code). */
  emitError(e: unknown): void
}

/**
 * The "no silent stall" rule: a member that has held `maxInFlight` messages, acking or terming
 * none, for `stallWarningMs` while the application waits for more reports a `StalledError`
 * (`ERR_STALLED`) once; a settlement ends the stall, and a new one is reported again.
 *
 * It costs nothing per message: what the member holds only grows in the fetch loop's rounds, and a
 * round only starts once the refill mark is free. So a member found holding `maxInFlight` with no
 * round since it filled up has settled nothing since (a settlement would have lowered the count,
 * and only a round raises it again). The loop tells it where rounds start and end; one timer
 * (unreferenced: a warning never keeps the process alive) checks while the member is full.
 */
export class StallWatch {
  /** When the member last filled up (`Date.now()`), with no round since; undefined: not full. */
  #fullSince: number | undefined
  #reported = false
  #timer: NodeJS.Timeout | undefined

  constructor(
    private readonly member: WatchedMember,
    /** What the member holds now (fetched, not settled). */
    private readonly held: () => number,
  ) {}

  /** A fetch round starts: the member is below its refill mark, so whatever stall there was ended. */
  roundStarted(): void {
    this.#fullSince = undefined
    this.#reported = false
  }

  /** A fetch round ended: if it filled the member, the watch starts. */
  roundEnded(): void {
    const ms = this.member.opts.stallWarningMs
    if (ms === Infinity || this.#fullSince !== undefined || !this.#full()) return
    this.#fullSince = Date.now()
    this.#schedule(ms)
  }

  /** The fetch loop ended. */
  stop(): void {
    clearTimeout(this.#timer)
    this.#timer = undefined
  }

  #full(): boolean {
    return this.held() >= this.member.opts.maxInFlight
  }

  #schedule(ms: number): void {
    if (this.#timer !== undefined) return
    this.#timer = setTimeout(() => this.#check(), Math.max(1, ms))
    this.#timer.unref()
  }

  #check(): void {
    this.#timer = undefined
    const member = this.member
    const since = this.#fullSince
    if (member.state !== 'running' || since === undefined || this.#reported) return
    // Something was settled (or handed back to the group) since it filled up: no stall; the next round re-arms.
    if (!this.#full()) return void (this.#fullSince = undefined)
    const ms = member.opts.stallWarningMs
    const waiting = member.views.waitingSince
    // Busy with what it holds (a slow handler, not a wait for more): look again later.
    if (waiting === undefined) return this.#schedule(ms)
    const stalledFrom = Math.max(since, waiting)
    const due = stalledFrom + ms - Date.now()
    if (due > 0) return this.#schedule(due)
    this.#reported = true
    member.emitError(this.#error(Date.now() - since))
  }

  #error(stalledMs: number): StalledError {
    const { group, maxInFlight, stallWarningMs } = this.member.opts
    const held = this.held()
    return new StalledError(
      `Member "${this.member.memberId}" of group "${group}" holds ${held} messages (maxInFlight ${maxInFlight}) and has acked or termed none for ${stalledMs} ms while the application waits for more: nothing more is fetched until some are settled. Ack (or term) messages as they are done, settle them in batches, or raise maxInFlight above what the application holds at once (stallWarningMs ${stallWarningMs} sets when this is reported)`,
      { held, maxInFlight, stalledMs },
    )
  }
}
