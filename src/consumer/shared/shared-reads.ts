import type { SharedDelivery, SharedMember } from '../../backends/shared.js'
import type { Message } from '../../core/types.js'
import type { FetchRounds } from '../fetch-loop.js'
import type { SharedLedger } from './ledger.js'

/**
 * The shared member's reads, the rounds of its fetch loop (`../fetch-loop.ts`): one fetch from
 * the group (new entries, re-deliveries, claims — the backend's member decides) of what there is
 * room for, which waits for entries itself. A failed fetch is reported and retried after a
 * growing pause (up to 2 s).
 */
export class SharedReads<V> implements FetchRounds {
  readonly #stop = new AbortController()
  /** Aborted (and replaced) when demand ends: a read under way stops waiting. */
  #idle = new AbortController()
  /** Fetches failed in a row. */
  #failures = 0

  constructor(
    private readonly ledger: SharedLedger<V>,
    private readonly member: SharedMember,
  ) {}

  get outstanding(): number {
    return this.ledger.outstanding
  }

  /** Demand ended: a read under way stops waiting. */
  idle(): void {
    this.#idle.abort()
    this.#idle = new AbortController()
  }

  /** The member is leaving: a read or pause under way ends now. */
  stop(): void {
    this.#stop.abort()
  }

  async round(): Promise<boolean> {
    const ledger = this.ledger
    const core = ledger.core
    let got: SharedDelivery[]
    try {
      got = await this.member.fetch(
        core.opts.maxInFlight - ledger.outstanding,
        AbortSignal.any([this.#stop.signal, this.#idle.signal]),
      )
      this.#failures = 0
    } catch (e) {
      if (core.state !== 'running') return true // the loop ends
      core.emitError(e)
      this.#failures++
      await this.#pause(Math.min(50 * 2 ** this.#failures, 2000))
      return true
    }
    if (got.length === 0) return true // the fetch waited for entries itself
    let msgs = got.map((d) => d.message)
    if (core.decode) {
      try {
        msgs = await core.decode(msgs)
      } catch (e) {
        core.emitError(e)
      }
    }
    for (let i = 0; i < got.length; i++) ledger.buffered(msgs[i] as Message, (got[i] as SharedDelivery).deliveryCount)
    if (!core.demand) void ledger.handBack() // the last iteration ended during the read
    core.wakeViews()
    return true
  }

  #pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const signal = this.#stop.signal
      const done = () => {
        clearTimeout(t)
        signal.removeEventListener('abort', done)
        resolve()
      }
      const t = setTimeout(done, ms)
      if (!this.ledger.core.keepAlive) t.unref()
      signal.addEventListener('abort', done, { once: true })
    })
  }
}
