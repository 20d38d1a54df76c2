import { LogRollbackError } from '../../../core/errors.js'
import type { Message } from '../../../core/types.js'
import type { EntryRef, SharedDelivery } from '../../shared.js'
import { redisError, type Client } from '../connection.js'
import { decodeFlaggedPacked, entryFields, isOffsetId, offsetOf, type EntryFields } from '../entry-codec.js'
import { keySlot } from '../key-slot.js'
import { delivery, type MemberPartition } from './shared-entries.js'
import { GroupReader, type XReadGroupReply } from './shared-reader.js'
import type { MemberState } from './shared-state.js'

/** Longest a blocking read waits. */
const BLOCK_MS = 5000
/** Most entries one read asks for per partition. */
export const READ_MAX = 1000

/**
 * The partitions of a member grouped by Cluster slot: the streams of one command must share a
 * slot, and a topic placed at creation (placement.ts) has its partitions on one master in one slot,
 * so a member has one reader per master and topic, whatever the partition count.
 */
function bySlot(parts: readonly MemberPartition[]): MemberPartition[][] {
  const groups = new Map<number, MemberPartition[]>()
  for (const p of parts) {
    const slot = keySlot(p.key)
    const g = groups.get(slot)
    if (g) g.push(p)
    else groups.set(slot, [p])
  }
  return [...groups.values()]
}

/**
 * A shared member's reads of new entries (`XREADGROUP … >`): blocking reads on dedicated
 * connections ({@link GroupReader}), or, while the last read filled its count (a backlog), the
 * packed `shared-read` script without blocking. A read that ends while the member is paused gives
 * its entries back, uncounted.
 */
export class NewEntryReads {
  private readonly readers: GroupReader[]
  /** Wakes a `read` waiting on its blocking reads. */
  private readDone: (() => void) | undefined
  /** The last read of new entries filled its count: read on with the packed script, without blocking. */
  private backlog = false
  /** `pause()`d: what a read under way returns goes back to the group. */
  private paused = false

  constructor(
    private readonly s: MemberState,
    client: Client,
    cluster: boolean,
    private readonly giveBack: (refs: EntryRef[]) => Promise<void>,
  ) {
    const reader = (parts: readonly MemberPartition[]) =>
      new GroupReader(client, parts, () => {
        for (const p of parts) p.doubt()
        this.readDone?.() // a fetch waiting on the reads looks at them now
      })
    this.readers = cluster ? bySlot(s.parts).map(reader) : [reader(s.parts)]
  }

  /** A fetch is asking again: entries of a read that ends now are its own. */
  resume(): void {
    this.paused = false
  }

  /** New entries for `max` deliveries at most; a blocking read blocks until `until()` (ms) at the latest. */
  async read(max: number, signal: AbortSignal, until: () => number): Promise<SharedDelivery[]> {
    const s = this.s
    const per = Math.max(1, Math.min(READ_MAX, Math.floor(max / s.parts.length)))
    if (this.backlog && !this.readers.some((r) => r.pending !== undefined)) {
      const got = await this.readPacked(per)
      if (got.length > 0 || s.stopped) return got
    }
    const block = Math.max(1, Math.min(BLOCK_MS, until() - Date.now()))
    for (const r of this.readers)
      if (!r.pending)
        r.start(
          s.group,
          s.name,
          per,
          block,
          (reply, reader) => this.takeRead(reader, reply),
          () => this.readEnded(r),
        )
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
      if (r.full) this.backlog = true
      try {
        for (const d of r.collect()) out.push(d)
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
    // Every partition's reply is taken, whatever the others': a failed call may have run (its
    // partition is looked at for entries it read), the replies that came are this member's entries.
    const settled = await Promise.allSettled(
      s.parts.map((p) => s.scripts.call('shared-read', [p.key], [s.group, s.name, per])),
    )
    const now = Date.now()
    const out: SharedDelivery[] = []
    const msgs: Message[] = []
    let full = false
    let failure: unknown
    settled.forEach((r, i) => {
      const p = s.parts[i] as MemberPartition
      if (r.status === 'rejected') {
        p.doubt()
        failure ??= r.reason
        return
      }
      const blob = r.value
      if (blob.length === 0) return
      msgs.length = 0
      if (decodeFlaggedPacked(blob, p.codec, p.topic, p.partition, msgs) >= per) full = true
      for (const m of msgs) {
        this.checkNew(p, m.offset)
        if (p.held.has(m.offset)) continue
        p.held.set(m.offset, { count: 1, refreshed: now })
        out.push({ message: m, deliveryCount: 1 })
      }
    })
    this.backlog = full
    if (failure !== undefined && out.length === 0) throw failure
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
      for (const d of r.collect())
        refs.push({ topic: d.message.topic, partition: d.message.partition, offset: d.message.offset })
      await this.giveBack(refs)
    } catch (e) {
      if (!this.s.stopped)
        this.s.events.error(
          redisError(
            `Shared group "${this.s.group}": member "${this.s.name}" could not give back ${refs.length} entries read while idle`,
            e,
          ),
        )
    }
  }

  /** A blocking read's reply, as it arrives: its new entries are held from now on and become deliveries. */
  private takeRead(r: GroupReader, reply: XReadGroupReply): SharedDelivery[] {
    const out: SharedDelivery[] = []
    if (!reply || this.s.stopped) return out
    const now = Date.now()
    const f: EntryFields = { record: undefined, producer: undefined }
    for (const [key, items] of reply) {
      const p = r.parts.length === 1 ? (r.parts[0] as MemberPartition) : this.s.partByKey(key)
      if (!p) continue
      if (items.length >= r.count) r.full = true
      for (const [id, fields] of items) {
        const offset = offsetOf(id)
        this.checkNew(p, offset)
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
    return out
  }

  /** New entries come in increasing offsets: one at or below the newest seen means a rollback. */
  private checkNew(p: MemberPartition, offset: number): void {
    if (offset > p.newest) {
      p.newest = offset
      return
    }
    const rb = new LogRollbackError(
      p.topic,
      p.partition,
      offset,
      p.newest,
      `member "${this.s.name}" of shared group "${this.s.group}"`,
    )
    const gone = p.rollBack(offset)
    p.newest = offset
    this.s.events.rolledBack(rb, gone)
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
