import { entryFields, offsetOf, type EntryFields } from './entry-codec.js'
import { createDedicated, type Client } from './connection.js'
import { KeepAlive } from './keep-alive.js'
import type { RedisKeys } from './keys.js'
import type { RawEntry, RecentEntries } from './reader.js'
import { INCARNATIONS_FIELD, newIncarnationFrom, type RollbackNotice } from './incarnations.js'

/** Longest a blocking read waits before it checks the partition's end again. */
const BLOCK_MS = 5000
/** Entries one blocking read returns at most (the readers fetch any rest themselves). */
const BLOCK_COUNT = 1000

interface Subscriber {
  onData: () => void
  persistent: boolean
}

type XReadReply = Array<[Buffer, Array<[Buffer, Buffer[]]>]> | null

/**
 * Watches one partition for every local subscriber: `XREAD BLOCK` on a dedicated connection from
 * the last offset it has seen, so nothing appended in between is missed. It keeps the entries it
 * received last for the partition's readers (no second round trip), calls the subscribers, and
 * blocks again. After a dropped connection or a Redis restart ioredis reconnects and the read goes
 * on from the same offset. `stop()` disconnects, which ends a blocked read at once.
 * After each blocking read it asks for the partition's end and incarnations to find rollbacks
 * (incarnations.ts): it then publishes a notice for its readers and reads on from there.
 */
class PartitionWatcher {
  readonly subs = new Set<Subscriber>()
  recent: RecentEntries | undefined
  private readonly conn: Client
  private readonly keepAlive: KeepAlive
  private stopped = false
  /** Last offset seen (−1: none); undefined until the first look at the partition's end. */
  private cursor: number | undefined
  /** The latest rollback found (readers take each once). */
  rollback: RollbackNotice | undefined
  /** The end and incarnations at the last look, and whether the connection broke since. */
  private seen: { end: number; inc: string | undefined } = { end: 0, inc: undefined }
  private broken = false

  constructor(
    base: Client,
    private readonly streamKey: string,
    private readonly endKey: string,
    private readonly producersKey: string,
  ) {
    this.conn = createDedicated(base, 'twainmq:tail')
    this.conn.on('error', () => undefined) // failures surface as rejected reads; ioredis reconnects
    // A rollback comes with a lost connection (a restart, a failover): look again before taking entries.
    for (const ev of ['close', 'node error', '-node']) this.conn.on(ev, () => (this.broken = true))
    this.keepAlive = new KeepAlive(this.conn)
    void this.loop()
  }

  /** Keep the process alive only while a persistent subscriber waits. */
  updatePin(): void {
    let pin = false
    for (const s of this.subs) pin ||= s.persistent
    this.keepAlive.pin(pin)
  }

  private fire(): void {
    for (const s of [...this.subs]) {
      try {
        s.onData()
      } catch {
        /* a subscriber's failure is its own */
      }
    }
  }

  private async loop(): Promise<void> {
    let failures = 0
    while (!this.stopped) {
      try {
        if (this.cursor === undefined) {
          // Everything below the end now is visible to readers that read after the wake-up below;
          // everything from the end on comes through the blocking read.
          this.broken = false
          this.seen = await this.look()
          if (this.stopped) return
          this.cursor = this.seen.end - 1
          this.fire()
        }
        const from = this.cursor < 0 ? '0-0' : `${this.cursor}-1`
        const res = (await this.conn.xreadBuffer('COUNT', BLOCK_COUNT, 'BLOCK', BLOCK_MS, 'STREAMS', this.streamKey, from)) as XReadReply
        if (this.stopped) return
        failures = 0
        // Before the entries are taken: they may lie past a rollback (one more round trip per reply).
        const broken = this.broken
        this.broken = false
        if (this.judge(await this.look(), broken)) continue
        const items = res?.[0]?.[1]
        if (!items || items.length === 0) continue
        const entries: RawEntry[] = []
        const f: EntryFields = { record: undefined, producer: undefined }
        for (const [id, fields] of items) {
          const { record, producer } = entryFields(fields, f)
          if (record) entries.push({ offset: offsetOf(id), record, producerId: producer ? producer.toString('utf8') : '' })
        }
        this.cursor = offsetOf((items[items.length - 1] as [Buffer, Buffer[]])[0])
        if (entries.length > 0) this.recent = { first: (entries[0] as RawEntry).offset, entries }
        this.fire()
        // Let the readers take the entries (microtasks) before the next blocking read is written.
        await new Promise<void>((resolve) => setImmediate(resolve))
      } catch {
        if (this.stopped) return
        failures++
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, Math.min(25 * 2 ** failures, 2000))
          if (![...this.subs].some((s) => s.persistent)) t.unref()
        })
      }
    }
  }

  private async look(): Promise<{ end: number; inc: string | undefined }> {
    const [end, inc] = await Promise.all([this.conn.get(this.endKey), this.conn.hget(this.producersKey, INCARNATIONS_FIELD)])
    return { end: end === null ? 0 : Number(end), inc: inc ?? '' }
  }

  /**
   * Compare a look with the one before. The log was rolled back from F when its end is below what
   * was seen, or when an incarnation not seen before starts below the end seen before (after a
   * broken connection: below what was received). Returns whether it was.
   */
  private judge(now: { end: number; inc: string | undefined }, broken: boolean): boolean {
    const prev = this.seen
    this.seen = now
    // What this watcher has seen; readers that read further themselves judge by their own offsets.
    const high = Math.max(prev.end, (this.cursor ?? -1) + 1)
    let from = now.end < high ? now.end : Infinity
    // Without a broken connection a new incarnation (a slot moved to another master) starts at or
    // above the end seen before; only a rollback puts it below what was received since.
    const fresh = prev.inc === undefined ? undefined : newIncarnationFrom(prev.inc, now.inc ?? '')
    if (fresh !== undefined && fresh < (broken ? high : prev.end)) from = Math.min(from, fresh)
    if (from === Infinity) return false
    this.rollback = { seq: (this.rollback?.seq ?? 0) + 1, from }
    if (this.cursor !== undefined) this.cursor = Math.min(this.cursor, from - 1)
    this.recent = undefined
    this.fire()
    return true
  }

  stop(): void {
    this.stopped = true
    this.recent = undefined
    this.conn.disconnect()
  }
}

/** The partition watchers of one backend instance (one per watched partition, shared by its subscribers). */
export class RedisWatchers {
  private readonly watchers = new Map<string, PartitionWatcher>()
  private closed = false

  constructor(
    private readonly base: Client,
    private readonly keys: RedisKeys,
  ) {}

  watch(topic: string, partition: number, onData: () => void, persistent: boolean): () => void {
    if (this.closed) return () => undefined
    const id = `${topic}\0${partition}`
    let w = this.watchers.get(id)
    if (!w) {
      w = new PartitionWatcher(this.base, this.keys.stream(topic, partition), this.keys.end(topic, partition), this.keys.producers(topic, partition))
      this.watchers.set(id, w)
    }
    const sub: Subscriber = { onData, persistent }
    w.subs.add(sub)
    w.updatePin()
    const watcher = w
    return () => {
      if (!watcher.subs.delete(sub)) return
      watcher.updatePin()
      // Stop after the current task unless someone subscribes again at once (re-subscribing to change `persistent`).
      if (watcher.subs.size === 0) {
        queueMicrotask(() => {
          if (watcher.subs.size === 0 && this.watchers.get(id) === watcher) {
            this.watchers.delete(id)
            watcher.stop()
          }
        })
      }
    }
  }

  /** What the partition's watcher received last (for its readers). */
  recent(topic: string, partition: number): RecentEntries | undefined {
    return this.watchers.get(`${topic}\0${partition}`)?.recent
  }

  /** The latest rollback the partition's watcher found, if it runs. */
  rollback(topic: string, partition: number): RollbackNotice | undefined {
    return this.watchers.get(`${topic}\0${partition}`)?.rollback
  }

  /** Disconnect every watcher at once. */
  close(): void {
    this.closed = true
    for (const w of this.watchers.values()) w.stop()
    this.watchers.clear()
  }
}
