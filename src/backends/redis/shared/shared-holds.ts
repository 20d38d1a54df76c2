import type { EntryRef, SharedDelivery } from '../../shared.js'
import type { SharedAcks } from './shared-acks.js'
import { eachScripted, idOf, offsetOf, offsetsOf } from '../entry-codec.js'
import { delivery } from './shared-entries.js'
import type { MemberState } from './shared-state.js'
import { refreshHeld } from './shared-touch.js'

/** Entries per release script call. */
const RELEASE_BATCH = 1000
/** Least time between refreshes (for tiny `claimAfterMs`). */
const MIN_PERIOD_MS = 5

/**
 * What a shared member holds, kept: every entry it handed out or buffered is held until
 * acknowledged or given back; it refreshes held entries (XCLAIM to itself, JUSTID) every
 * `claimAfterMs / 3` so others cannot claim them while it works, redelivers held entries on request
 * and gives entries back to the group. Entries it held and lost to another member are reported.
 */
export class SharedHolds {
  readonly touchEveryMs: number
  private touchRun: Promise<void> | undefined

  constructor(
    private readonly s: MemberState,
    private readonly acks: SharedAcks,
  ) {
    this.touchEveryMs = Math.max(MIN_PERIOD_MS, Math.floor(s.options.claimAfterMs / 3))
  }

  /** Refresh held entries (all of them, or those not refreshed for a period). */
  touch(all: boolean): Promise<void> {
    const s = this.s
    if (this.touchRun || s.halted) return this.touchRun ?? Promise.resolve()
    const run = (async () => {
      await this.acks.flush().catch((e) => s.events.error(e as Error))
      const now = Date.now()
      const stale = all ? Infinity : now - this.touchEveryMs
      const onError = (e: Error) => void (s.halted || s.events.error(e))
      const lost = (
        await Promise.all(s.parts.map((p) => refreshHeld(s.scripts, s.group, s.name, p, stale, now, onError)))
      ).flat()
      if (lost.length) s.events.lost(lost)
    })()
    this.touchRun = run
    void run.finally(() => {
      if (this.touchRun === run) this.touchRun = undefined
    })
    return run
  }

  /** The refresh under way, if any. */
  get refreshing(): Promise<void> | undefined {
    return this.touchRun
  }

  async redeliver(entries: readonly EntryRef[]): Promise<SharedDelivery[]> {
    const s = this.s
    const out: SharedDelivery[] = []
    const lost: EntryRef[] = []
    for (const [p, offsets] of s.byPartition(entries)) {
      const [flat, gone, trimmed] = await s.scripts.call(
        'shared-redeliver',
        [p.key],
        [s.group, s.name, ...offsets.map(idOf)],
      )
      for (const o of offsetsOf(gone)) {
        if (p.held.delete(o)) lost.push(p.ref(o))
      }
      s.reportTrimmed(p, trimmed)
      const now = Date.now()
      eachScripted(flat, (id, count, record, producer) => {
        const offset = offsetOf(id)
        p.held.set(offset, { count, refreshed: now })
        out.push(delivery(p, offset, record, s.ids.of(producer), count))
      })
    }
    if (lost.length) s.events.lost(lost)
    return out
  }

  async giveBack(entries: readonly EntryRef[], delivered: boolean): Promise<void> {
    const s = this.s
    if (s.replaced) return // the name's entries are the other member's now
    if (this.touchRun) await this.touchRun.catch(() => undefined) // a refresh under way would make them fresh again
    for (const [p, offsets] of s.byPartition(entries)) {
      // Held (as given) until released: a look for entries the member does not know of meanwhile
      // must not take them up again; never refreshed nor acknowledged from now on.
      const now = Date.now()
      for (const o of offsets) {
        const h = p.held.get(o)
        if (h) h.given = true
        else p.held.set(o, { count: 1, refreshed: now, given: true })
      }
      try {
        for (let i = 0; i < offsets.length; i += RELEASE_BATCH) {
          const chunk = offsets.slice(i, i + RELEASE_BATCH)
          await s.scripts.call(
            'shared-release',
            [p.key],
            [s.group, s.name, s.options.claimAfterMs, delivered ? '0' : '1', ...chunk.map(idOf)],
          )
        }
      } finally {
        for (const o of offsets) if (p.held.get(o)?.given) p.held.delete(o)
      }
    }
  }
}
