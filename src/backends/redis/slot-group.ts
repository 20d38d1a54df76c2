import { entryFields, offsetOf, type EntryFields } from './entry-codec.js'
import type { Client } from './connection.js'
import type { RawEntry, RecentEntries } from './reader.js'
import type { Lane, TailLanes } from './tail-lanes.js'

/** Longest a blocking read waits before it checks the partitions' ends again. */
const BLOCK_MS = 5000
/** Entries one blocking read returns at most per partition (the readers fetch any rest themselves). */
const BLOCK_COUNT = 1000

export interface Subscriber {
  onData: () => void
  persistent: boolean
}

type XReadReply = Array<[Buffer, Array<[Buffer, Buffer[]]>]> | null

/** One watched partition: its subscribers, the last offset seen and what was received last. */
export interface Watched {
  readonly id: string
  readonly streamKey: string
  readonly endKey: string
  readonly subs: Set<Subscriber>
  recent: RecentEntries | undefined
  /** Last offset seen (−1: none); undefined until the first look at the partition's end. */
  cursor: number | undefined
}

function fire(w: Watched): void {
  for (const s of [...w.subs]) {
    try {
      s.onData()
    } catch {
      /* a subscriber's failure is its own */
    }
  }
}

const endOf = (end: string | null): number => (end === null ? 0 : Number(end)) - 1

/**
 * The watched partitions of one slot (on one Redis: all of them), served by one `XREAD BLOCK` over
 * all their streams from the last offset seen of each, so nothing appended in between is missed.
 * It keeps the entries each partition received last for its readers (no second round trip), calls
 * the subscribers, and blocks again. A partition added while the read waits unblocks it (`CLIENT
 * UNBLOCK`), so the next read includes it. After a dropped connection or a restart the read is
 * re-issued from the same offsets.
 */
export class SlotGroup {
  readonly members = new Map<string, Watched>()
  private lane: Lane | undefined
  private stopped = false
  private dirty = false

  constructor(
    private readonly base: Client,
    private readonly lanes: TailLanes,
    private readonly slot: number,
    private readonly persistent: () => boolean,
  ) {
    void this.loop()
  }

  add(w: Watched): void {
    this.members.set(w.streamKey, w)
    if (this.dirty || !this.lane) return
    this.dirty = true
    void this.kick(this.lane)
  }

  /**
   * Unblock the read on `lane` so it is re-issued with the new member. The unblock may reach the
   * server before the read does (another connection): then it is tried again while still needed.
   */
  private async kick(lane: Lane): Promise<void> {
    for (let attempt = 1; attempt <= 20; attempt++) {
      await new Promise<void>((resolve) => setTimeout(resolve, attempt === 1 ? 0 : 5 * attempt).unref())
      if (!this.dirty || this.lane !== lane || this.stopped) return
      if (await this.lanes.unblock(lane).catch(() => false)) return
    }
  }

  /** A read waiting on a node that no longer serves the slot (failover, migration) is ended and re-issued. */
  checkNode(): void {
    const lane = this.lane
    if (lane?.busy && this.lanes.nodeOf(this.slot) !== lane.node) this.lanes.drop(lane)
  }

  private async loop(): Promise<void> {
    let failures = 0
    while (!this.stopped) {
      let lane: Lane | undefined
      try {
        const fresh = [...this.members.values()].filter((w) => w.cursor === undefined)
        if (fresh.length > 0) {
          // Everything below the end now is visible to readers that read after the wake-up below;
          // everything from the end on comes through the blocking read.
          const ends = await Promise.all(fresh.map((w) => this.base.get(w.endKey)))
          if (this.stopped) return
          fresh.forEach((w, i) => {
            w.cursor = endOf(ends[i] as string | null)
            fire(w)
          })
        }
        const node = this.lanes.nodeOf(this.slot)
        if (node === undefined) throw new Error(`no node serves slot ${this.slot}`)
        lane = this.lane = this.lanes.acquire(node)
        await this.lanes.identify(lane)
        if (this.stopped) return
        this.dirty = false
        const members = [...this.members.values()].filter((w) => w.cursor !== undefined)
        const ids = members.map((w) => ((w.cursor as number) < 0 ? '0-0' : `${w.cursor as number}-1`))
        const res = (await this.lanes.run(lane, lane.conn.xreadBuffer('COUNT', BLOCK_COUNT, 'BLOCK', BLOCK_MS, 'STREAMS', ...members.map((w) => w.streamKey), ...ids))) as XReadReply
        this.lane = undefined
        this.lanes.release(lane, !this.stopped)
        if (this.stopped) return
        failures = 0
        if (!res || res.length === 0) {
          if (!this.dirty) await this.resync(members)
          continue
        }
        const f: EntryFields = { record: undefined, producer: undefined }
        for (const [key, items] of res) {
          const w = this.members.get(key.toString('utf8'))
          if (!w || items.length === 0) continue
          const entries: RawEntry[] = []
          for (const [id, fields] of items) {
            const { record, producer } = entryFields(fields, f)
            if (record) entries.push({ offset: offsetOf(id), record, producerId: producer ? producer.toString('utf8') : '' })
          }
          w.cursor = offsetOf((items[items.length - 1] as [Buffer, Buffer[]])[0])
          if (entries.length > 0) w.recent = { first: (entries[0] as RawEntry).offset, entries }
          fire(w)
        }
        // Let the readers take the entries (microtasks) before the next blocking read is written.
        await new Promise<void>((resolve) => setImmediate(resolve))
      } catch {
        if (lane && this.lane === lane) this.lane = undefined
        if (lane) this.lanes.release(lane, false)
        if (this.stopped) return
        failures++
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, Math.min(25 * 2 ** failures, 2000))
          if (!this.persistent()) t.unref()
        })
      }
    }
  }

  /** After a quiet block: a partition whose end moved back (deleted and re-created) starts over. */
  private async resync(members: Watched[]): Promise<void> {
    const ends = await Promise.all(members.map((w) => this.base.get(w.endKey)))
    members.forEach((w, i) => {
      const last = endOf(ends[i] as string | null)
      if (w.cursor !== undefined && last < w.cursor) {
        w.cursor = last
        w.recent = undefined
        fire(w)
      }
    })
  }

  /** Stop reading; a read under way ends at once (its lane is closed). */
  stop(): void {
    this.stopped = true
    const lane = this.lane
    this.lane = undefined
    if (lane) this.lanes.drop(lane)
  }
}
