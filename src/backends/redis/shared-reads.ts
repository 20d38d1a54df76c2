import type { Message } from '../../core/types.js'
import type { EntryRef, SharedDelivery } from '../shared.js'
import { redisError, type Client } from './connection.js'
import { decodeFlaggedPacked, entryFields, isOffsetId, offsetOf, type EntryFields } from './entry-codec.js'
import { delivery, takeScripted, type MemberPartition } from './shared-entries.js'
import type { ScriptReply } from './script-specs.js'
import { GroupReader, type XReadGroupReply } from './shared-reader.js'
import type { ClaimMode, MemberState } from './shared-state.js'

/** Longest a blocking read waits before the member looks for claimable entries again. */
const BLOCK_MS = 5000
/** Most entries one read asks for per partition. */
const READ_MAX = 1000
/** Least time between claim scans (for tiny `claimAfterMs`). */
const MIN_PERIOD_MS = 5

const isNoGroup = (e: unknown): boolean => e instanceof Error && /NOGROUP/.test(e.message)

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
 * - **Claims.** At least every `claimAfterMs / 2` it scans the group's pending list (XAUTOCLAIM,
 *   keeping the cursor, or `XREADGROUP … CLAIM` on Redis ≥ 8.4) for entries idle longer than
 *   `claimAfterMs`: those of members that died or stalled.
 * - **New entries**: blocking XREADGROUP on dedicated connections, or the packed `shared-read`
 *   script while there is a backlog.
 *
 * Every entry it returns is held from then on; one already held is never returned again (a claim
 * that returns one is dropped).
 */
export class SharedReads {
  private readonly readers: GroupReader[]
  private readonly scanEveryMs: number
  private nextScan = 0
  /** Next partition a recovery or claim round starts with. */
  private rr = 0
  /** Wakes a `fetch` waiting on its reads. */
  private readDone: (() => void) | undefined
  /** The last read of new entries filled its count: read on with the packed script, without blocking. */
  private backlog = false
  /** `pause()`d: what a read under way returns goes back to the group. */
  private paused = false

  constructor(
    private readonly s: MemberState,
    client: Client,
    cluster: boolean,
    private readonly hooks: ReadHooks,
  ) {
    const parts = s.parts
    this.readers = cluster ? parts.map((p) => new GroupReader(client, [p])) : [new GroupReader(client, parts)]
    this.scanEveryMs = Math.max(MIN_PERIOD_MS, Math.floor(s.options.claimAfterMs / 2))
  }

  async fetch(max: number, signal: AbortSignal): Promise<SharedDelivery[]> {
    const s = this.s
    if (s.stopped || signal.aborted) return []
    this.paused = false
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
      // 2. Entries idle too long in the group (dead or stalled members).
      if (Date.now() >= this.nextScan) {
        this.nextScan = Date.now() + this.scanEveryMs
        const got = await this.claim(max)
        if (got.length) return got
      }
      // 3. New entries.
      return await this.readNew(max, signal)
    } catch (e) {
      if (s.stopped) return []
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
    const [last, flat, trimmed] = await s.scripts.call('shared-recover', [p.key], [s.group, s.name, p.recoverFrom as string, Math.min(max, READ_MAX)])
    if (s.stopped) return []
    p.recoverFrom = last.length === 0 ? undefined : last.toString('latin1')
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
        reply = await s.scripts.call('shared-claim', [p.key], [s.group, s.name, s.options.claimAfterMs, p.claimCursor, Math.min(max - out.length, READ_MAX), mode])
      } catch (e) {
        // A server that turns out not to know XREADGROUP … CLAIM: XAUTOCLAIM from now on.
        if (mode === 'readgroup' && e instanceof Error && /syntax|unknown|wrong number|CLAIM/i.test(e.message) && !isNoGroup(e)) {
          this.hooks.claimModeFailed()
          k--
          continue
        }
        throw e
      }
      if (s.stopped) return []
      p.claimCursor = reply[0].toString('latin1')
      s.reportTrimmed(p, reply[2])
      out.push(...takeScripted(p, reply[1], Date.now(), s.ids))
    }
    if (out.length >= max) this.nextScan = 0 // there may be more: scan on at the next fetch
    return out
  }

  private async readNew(max: number, signal: AbortSignal): Promise<SharedDelivery[]> {
    const s = this.s
    const per = Math.max(1, Math.min(READ_MAX, Math.floor(max / s.parts.length)))
    if (this.backlog && !this.readers.some((r) => r.pending)) {
      const got = await this.readPacked(per)
      if (got.length > 0 || s.stopped) return got
    }
    const block = Math.max(1, Math.min(BLOCK_MS, this.nextScan - Date.now()))
    for (const r of this.readers) if (!r.pending) r.start(s.group, s.name, per, block, () => this.readEnded(r))
    if (!this.readers.some((r) => r.done)) {
      await new Promise<void>((resolve) => {
        const done = () => {
          this.readDone = undefined
          signal.removeEventListener('abort', done)
          resolve()
        }
        this.readDone = done
        signal.addEventListener('abort', done, { once: true })
      })
    }
    if (s.stopped || signal.aborted) return []
    const out: SharedDelivery[] = []
    let failure: unknown
    this.backlog = false
    for (const r of this.readers) {
      if (!r.done) continue
      try {
        this.takeRead(r, r.collect(), out)
      } catch (e) {
        failure ??= e
      }
    }
    if (failure !== undefined && out.length === 0) throw failure
    return out
  }

  /**
   * New entries of every partition through the `shared-read` script (one packed bulk string per
   * partition, far cheaper to decode than XREADGROUP's nested reply), while there is a backlog.
   */
  private async readPacked(per: number): Promise<SharedDelivery[]> {
    const s = this.s
    const blobs = await Promise.all(s.parts.map((p) => s.scripts.call('shared-read', [p.key], [s.group, s.name, per])))
    const now = Date.now()
    const out: SharedDelivery[] = []
    const msgs: Message[] = []
    let full = false
    blobs.forEach((blob, i) => {
      if (blob.length === 0) return
      const p = s.parts[i] as MemberPartition
      msgs.length = 0
      if (decodeFlaggedPacked(blob, p.codec, p.topic, p.partition, msgs) >= per) full = true
      for (const m of msgs) {
        if (p.held.has(m.offset)) continue
        p.held.set(m.offset, { count: 1, refreshed: now })
        out.push({ message: m, deliveryCount: 1 })
      }
    })
    this.backlog = full
    return out
  }

  private readEnded(r: GroupReader): void {
    if (this.paused) void this.giveBackRead(r)
    this.readDone?.()
  }

  pause(): void {
    this.paused = true
    for (const r of this.readers) if (r.done) void this.giveBackRead(r)
  }

  /** A read that ended while paused: its entries go back, uncounted (they were never handed out). */
  private async giveBackRead(r: GroupReader): Promise<void> {
    const refs: EntryRef[] = []
    try {
      for (const [key, items] of r.collect() ?? []) {
        const p = r.parts.length === 1 ? r.parts[0] : this.s.partByKey(key)
        for (const [id] of p ? items : []) if (!p?.held.has(offsetOf(id))) refs.push({ topic: p?.topic as string, partition: p?.partition as number, offset: offsetOf(id) })
      }
      await this.hooks.giveBack(refs)
    } catch (e) {
      if (!this.s.stopped) this.s.events.error(redisError(`Shared group "${this.s.group}": member "${this.s.name}" could not give back ${refs.length} entries read while idle`, e))
    }
  }

  private takeRead(r: GroupReader, reply: XReadGroupReply, out: SharedDelivery[]): void {
    if (!reply) return
    const now = Date.now()
    const f: EntryFields = { record: undefined, producer: undefined }
    for (const [key, items] of reply) {
      const p = r.parts.length === 1 ? (r.parts[0] as MemberPartition) : this.s.partByKey(key)
      if (!p) continue
      if (items.length >= r.count) this.backlog = true
      for (const [id, fields] of items) {
        const offset = offsetOf(id)
        if (!fields || p.held.has(offset)) continue
        const { record, producer } = entryFields(fields, f)
        if (!record) {
          if (isOffsetId(id)) p.dropForeign(offset, now)
          continue
        }
        p.held.set(offset, { count: 1, refreshed: now })
        out.push(delivery(p, offset, record, producer ? this.s.ids.of(producer) : '', 1))
      }
    }
  }

  /** Keep the process alive while reads block (or not). */
  pin(on: boolean): void {
    for (const r of this.readers) r.pin(on)
  }

  /** End the reads: blocked ones at once. */
  stop(): void {
    for (const r of this.readers) r.stop()
    this.readDone?.()
  }
}
