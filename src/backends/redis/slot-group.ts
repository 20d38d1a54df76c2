import { entryFields, offsetOf, type EntryFields } from './entry-codec.js'
import type { Client } from './connection.js'
import { judge, look, type Judged } from './partition-look.js'
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

/** One watched partition: its subscribers, the last offset seen, what was received last and its rollbacks. */
export interface Watched extends Judged {
  readonly id: string
  readonly streamKey: string
  readonly endKey: string
  readonly producersKey: string
  readonly subs: Set<Subscriber>
  recent: RecentEntries | undefined
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

/**
 * The watched partitions of one slot (on one Redis: all of them), served by one `XREAD BLOCK` over
 * all their streams from the last offset seen of each, so nothing appended in between is missed.
 * It keeps the entries each partition received last for its readers (no second round trip), calls
 * the subscribers, and blocks again. A partition added while the read waits unblocks it (`CLIENT
 * UNBLOCK`), so the next read includes it. After a dropped connection or a restart the read is
 * re-issued from the same offsets. After each reply, before its entries are taken, one pipelined
 * look at the members' ends and incarnations (written behind the read on its connection, so it
 * costs no round trip of its own: they share the slot) finds
 * rollbacks (partition-look.ts, decision 112): such a partition reads on from the rollback point.
 */
export class SlotGroup {
  readonly members = new Map<string, Watched>()
  private lane: Lane | undefined
  private stopped = false
  private dirty = false
  private started = false
  /** A read failed or its connection closed since the last look (a rollback comes with one). */
  private broken = false

  constructor(
    private readonly base: Client,
    private readonly lanes: TailLanes,
    private readonly slot: number,
    private readonly persistent: () => boolean,
  ) {}

  add(w: Watched): void {
    this.members.set(w.streamKey, w)
    // The loop starts with its first member, so its first step is that member's look (not a read of no streams).
    if (!this.started) {
      this.started = true
      void this.loop()
      return
    }
    if (this.dirty || !this.lane) return
    this.dirty = true
    void this.kick(this.lane)
  }

  /**
   * Unblock the read on `lane` so it is re-issued with the new member. The unblock may reach the
   * server before the read does (another connection): then it is tried again, every 100 ms at
   * most, for as long as that read is the one under way (it ends by itself after its BLOCK time).
   * A fixed number of tries gave up after about a second, and a loaded machine can take longer to
   * get the read to the server: the new member then waited for the whole BLOCK time.
   */
  private async kick(lane: Lane): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      await new Promise<void>((resolve) => setTimeout(resolve, attempt === 1 ? 0 : Math.min(5 * attempt, 100)).unref())
      if (!this.dirty || this.lane !== lane || this.stopped) return
      if (await this.lanes.unblock(lane).catch(() => false)) return
    }
  }

  /** A read waiting on a node that no longer serves the slot (failover, migration) is ended and re-issued. */
  checkNode(): void {
    const lane = this.lane
    if (lane?.busy && this.lanes.nodeOf(this.slot) !== lane.node) this.lanes.drop(lane)
  }

  private hasFresh(): boolean {
    for (const w of this.members.values()) if (w.cursor === undefined) return true
    return false
  }

  /**
   * Look at the ends of the members not looked at yet (added since the last read was written), until
   * none is left: everything below each end is visible to readers that read after the wake-up;
   * everything from the end on comes through the next blocking read, which covers every member.
   */
  private async lookFresh(): Promise<void> {
    for (;;) {
      const fresh = [...this.members.values()].filter((w) => w.cursor === undefined)
      if (fresh.length === 0 || this.stopped) return
      const looks = await look(this.base, fresh)
      if (this.stopped) return
      fresh.forEach((w, i) => {
        if (this.members.get(w.streamKey) !== w) return
        const now = looks[i] as { end: number; inc: string }
        // A member watched again keeps its notices' count; its first look sets what it has seen.
        w.seen = now
        w.cursor = now.end - 1
        fire(w)
      })
    }
  }

  private async loop(): Promise<void> {
    let failures = 0
    while (!this.stopped) {
      let lane: Lane | undefined
      try {
        await this.lookFresh()
        if (this.stopped) return
        const node = this.lanes.nodeOf(this.slot)
        if (node === undefined) throw new Error(`no node serves slot ${this.slot}`)
        lane = this.lane = this.lanes.acquire(node)
        await this.lanes.identify(lane)
        if (this.stopped) return
        if (this.hasFresh()) {
          // A member added while the lane was asked for: look at its end first, so the read covers it.
          this.lane = undefined
          this.lanes.release(lane, true)
          continue
        }
        this.dirty = false
        const members = [...this.members.values()].filter((w) => w.cursor !== undefined)
        const ids = members.map((w) => ((w.cursor as number) < 0 ? '0-0' : `${w.cursor as number}-1`))
        const closes = lane.closes
        const cancel = this.lanes.guard(lane, BLOCK_MS + 1000)
        const read = this.lanes.run(
          lane,
          lane.conn.xreadBuffer(
            'COUNT',
            BLOCK_COUNT,
            'BLOCK',
            BLOCK_MS,
            'STREAMS',
            ...members.map((w) => w.streamKey),
            ...ids,
          ),
        )
        // Before the entries are taken (they may lie past a rollback), a look at the ends and
        // incarnations: written behind the read on its connection, the server runs it as soon as
        // the read returns, and its replies come with the read's (no round trip of its own).
        const looked = this.lanes.run(lane, look(lane.conn, members))
        looked.catch(() => undefined) // a failed read is handled below, its look is not awaited
        const res = (await read.finally(cancel)) as XReadReply
        const looks = await looked
        if (lane.closes !== closes) this.broken = true
        this.lane = undefined
        this.lanes.release(lane, !this.stopped)
        if (this.stopped) return
        failures = 0
        const broken = this.broken
        this.broken = false
        const rolled = new Set<Watched>()
        members.forEach((w, i) => {
          if (this.members.get(w.streamKey) !== w || !judge(w, looks[i] as { end: number; inc: string }, broken)) return
          rolled.add(w)
          w.recent = undefined
          fire(w)
        })
        if (!res || res.length === 0) continue
        const f: EntryFields = { record: undefined, producer: undefined }
        for (const [key, items] of res) {
          const w = this.members.get(key.toString('utf8'))
          if (!w || items.length === 0 || rolled.has(w)) continue
          const entries: RawEntry[] = []
          for (const [id, fields] of items) {
            const { record, producer } = entryFields(fields, f)
            if (record)
              entries.push({ offset: offsetOf(id), record, producerId: producer ? producer.toString('utf8') : '' })
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
        this.broken = true
        failures++
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, Math.min(25 * 2 ** failures, 2000))
          if (!this.persistent()) t.unref()
        })
      }
    }
  }

  /** Stop reading; a read under way ends at once (its lane is closed). */
  stop(): void {
    this.stopped = true
    const lane = this.lane
    this.lane = undefined
    if (lane) this.lanes.drop(lane)
  }
}
