import type { EntryRef, SharedDelivery } from '../../shared.js'
import { isConnectionError, redisError, type Client } from '../connection.js'
import { isNoGroup } from './no-group.js'
import type { ScriptReply } from '../script-specs.js'
import { confirmDeliveries, type DeliveryConfirm } from './shared-confirm.js'
import { takeScripted, type MemberPartition } from './shared-entries.js'
import { NewEntryReads, READ_MAX } from './shared-new-entries.js'
import type { ClaimMode, MemberState } from './shared-state.js'

/** Least time between claim scans (for tiny `claimAfterMs`). */
const MIN_PERIOD_MS = 5
/**
 * The periodic look for own pending entries the member does not know of takes only entries idle at
 * least this long: younger ones may be in a reply still on its way.
 */
const AUDIT_MIN_IDLE_MS = 1000

/** What the reads need from the member and its group. */
export interface ReadHooks {
  /** Re-create the partition groups (NOGROUP: a Redis restart without persistence, or a deleted stream). */
  rejoin(): Promise<void>
  /** The claim mode to use now. */
  claimMode(): ClaimMode
  /** The server turned out not to know `XREADGROUP … CLAIM`. */
  claimModeFailed(): void
  /** Give entries back to the group (uncounted: they were never handed out). */
  giveBack(refs: EntryRef[]): Promise<void>
}

/**
 * A shared member's reads, in the order `fetch` tries them:
 *
 * - **Recovery first.** Its own pending entries (`XREADGROUP` with an ID, a restart), moving a
 *   cursor past every entry returned, so an entry it never acknowledges cannot make it read the same
 *   entries forever (a livelock).
 * - **Entries it does not know of.** Where a read may have run without its reply reaching the
 *   member, its own pending entries it does not hold (`shared-adopt`, count kept; decision 181).
 * - **Claims.** At least every `claimAfterMs / 2` it scans the group's pending list (XAUTOCLAIM,
 *   keeping the cursor, or `XREADGROUP … CLAIM` on Redis ≥ 8.4) for entries idle longer than
 *   `claimAfterMs`: those of members that died or stalled.
 * - **New entries** ({@link NewEntryReads}), blocking at the latest until the next claim scan is due.
 *
 * Every entry it returns is held from then on; one already held is never returned again (a claim
 * that returns one is dropped). With `replicaAcks`, entries are returned once replicas hold their
 * delivery ({@link confirmDeliveries}).
 */
export class SharedReads {
  private readonly fresh: NewEntryReads
  private readonly scanEveryMs: number
  private nextScan = 0
  /** Next partition a recovery or claim round starts with. */
  private rr = 0

  constructor(
    private readonly s: MemberState,
    client: Client,
    cluster: boolean,
    private readonly hooks: ReadHooks,
    /** With `replicaAcks`: entries are handed out once replicas hold their delivery. */
    private readonly confirm?: DeliveryConfirm,
  ) {
    this.fresh = new NewEntryReads(s, client, cluster, (refs) => hooks.giveBack(refs))
    this.scanEveryMs = Math.max(MIN_PERIOD_MS, Math.floor(s.options.claimAfterMs / 2))
  }

  /** Entries for `max` deliveries at most; with `replicaAcks`, only those whose delivery replicas hold. */
  async fetch(max: number, signal: AbortSignal): Promise<SharedDelivery[]> {
    const got = await this.take(max, signal)
    return this.confirm && got.length > 0 ? confirmDeliveries(this.s, this.confirm, got) : got
  }

  private async take(max: number, signal: AbortSignal): Promise<SharedDelivery[]> {
    const s = this.s
    if (s.stopped || signal.aborted) return []
    this.fresh.resume()
    max = Math.max(1, Math.floor(max))
    try {
      // 1. What this member's name held before (a restart), partition by partition.
      for (let k = 0; k < s.parts.length; k++) {
        const p = s.parts[(this.rr + k) % s.parts.length] as MemberPartition
        while (p.recoverFrom !== undefined && !s.stopped) {
          const got = await this.recover(p, max)
          if (got.length) return got
        }
      }
      // 2. Its own pending entries it does not know of: a read's reply that never reached it.
      for (let k = 0; k < s.parts.length; k++) {
        const p = s.parts[(this.rr + k) % s.parts.length] as MemberPartition
        while (p.adoptFrom !== undefined && !s.stopped) {
          const got = await this.adopt(p, max, p.adoptFrom, 0, -1)
          if (got.length) return got
        }
      }
      // 3. Entries idle too long in the group (dead or stalled members); before the scan, a look at
      // whether Redis counts more pending entries for this member than it holds (a lost reply no
      // failure revealed), taking those idle for a while.
      if (Date.now() >= this.nextScan) {
        this.nextScan = Date.now() + this.scanEveryMs
        // One call per partition, all in flight at once (a member over many partitions).
        const minIdle = Math.min(AUDIT_MIN_IDLE_MS, this.scanEveryMs)
        const adopted = (
          await Promise.all(
            s.parts.filter((p) => p.adoptFrom === undefined).map((p) => this.adopt(p, max, '', minIdle, p.held.size)),
          )
        ).flat()
        if (adopted.length) return adopted
        const got = await this.claim(max)
        if (got.length) return got
      }
      // 4. New entries.
      return await this.fresh.read(max, signal, () => this.nextScan)
    } catch (e) {
      if (s.stopped) return []
      // A call that failed on its connection may have run: what it read is looked at next time.
      if (isConnectionError(e)) for (const p of s.parts) p.doubt()
      if (isNoGroup(e)) {
        await this.hooks.rejoin()
        return []
      }
      throw redisError(`Shared group "${s.group}": read of member "${s.name}" failed`, e)
    }
  }

  /** Scan for claimable entries at the next fetch. */
  scanNow(): void {
    this.nextScan = 0
  }

  private async recover(p: MemberPartition, max: number): Promise<SharedDelivery[]> {
    const s = this.s
    const [last, flat, trimmed] = await s.scripts.call(
      'shared-recover',
      [p.key],
      [s.group, s.name, p.recoverFrom as string, Math.min(max, READ_MAX)],
    )
    if (s.stopped) return []
    p.recoverFrom = last.length === 0 ? undefined : last.toString('latin1')
    s.reportTrimmed(p, trimmed)
    return takeScripted(p, flat, Date.now(), s.ids)
  }

  /**
   * Own pending entries the member does not hold, idle between `minIdleMs` and `claimAfterMs`, from
   * `cursor` on (`shared-adopt`: their delivery count kept, their idle time reset); with `known` ≥ 0
   * only when Redis counts more pending entries for the member than that. A scan that stops short
   * goes on from where it stopped at the next fetch.
   */
  private async adopt(
    p: MemberPartition,
    max: number,
    cursor: string,
    minIdleMs: number,
    known: number,
  ): Promise<SharedDelivery[]> {
    const s = this.s
    const [last, flat, trimmed] = await s.scripts.call(
      'shared-adopt',
      [p.key],
      [s.group, s.name, cursor, Math.min(max, READ_MAX), minIdleMs, s.options.claimAfterMs, known],
    )
    if (s.stopped) return []
    const next = last.toString('latin1')
    p.adoptFrom = next === '' ? undefined : next
    s.reportTrimmed(p, trimmed)
    return takeScripted(p, flat, Date.now(), s.ids)
  }

  private async claim(max: number): Promise<SharedDelivery[]> {
    const s = this.s
    const out: SharedDelivery[] = []
    const n = s.parts.length
    const start = this.rr++ % n
    for (let k = 0; k < n && out.length < max; k++) {
      const p = s.parts[(start + k) % n] as MemberPartition
      const mode = this.hooks.claimMode()
      let reply: ScriptReply<'shared-claim'>
      try {
        reply = await s.scripts.call(
          'shared-claim',
          [p.key],
          [s.group, s.name, s.options.claimAfterMs, p.claimCursor, Math.min(max - out.length, READ_MAX), mode],
        )
      } catch (e) {
        // A server that turns out not to know XREADGROUP … CLAIM: XAUTOCLAIM from now on.
        if (
          mode === 'readgroup' &&
          e instanceof Error &&
          /syntax|unknown|wrong number|CLAIM/i.test(e.message) &&
          !isNoGroup(e)
        ) {
          this.hooks.claimModeFailed()
          k--
          continue
        }
        // Entries claimed from other partitions are held now: they are handed out, not dropped.
        if (out.length === 0) throw e
        if (isConnectionError(e)) p.doubt()
        this.nextScan = 0
        break
      }
      if (s.stopped) return []
      p.claimCursor = reply[0].toString('latin1')
      s.reportTrimmed(p, reply[2])
      out.push(...takeScripted(p, reply[1], Date.now(), s.ids))
    }
    if (out.length >= max) this.nextScan = 0 // there may be more: scan on at the next fetch
    return out
  }

  /** Entries a read returns from now on go back to the group until the next fetch. */
  pause(): void {
    this.fresh.pause()
  }

  /** Keep the process alive while reads block (or not). */
  pin(on: boolean): void {
    this.fresh.pin(on)
  }

  /** End the reads: blocked ones at once. */
  stop(): void {
    this.fresh.stop()
  }
}
