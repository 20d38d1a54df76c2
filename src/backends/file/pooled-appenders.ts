import { partitionKey } from '../../core/partition-key.js'
import { readdir, open as openFile } from 'node:fs/promises'
import type { FsyncPolicy } from '../../core/types.js'
import { PartitionAppender } from './appender.js'
import type { FdHolder, FdPool } from './fd-pool.js'
import { indexPath, segmentBase, segmentPath } from './layout.js'

/** An appender with its segment open holds it, its index and (once it has written an entry) its time index. */
const APPENDER_FDS = 3

/** One partition's appender as the fd pool sees it. */
class Slot implements FdHolder {
  /** Appends of this process running on it now (queued ones included). */
  inflight = 0

  constructor(
    readonly id: string,
    readonly a: PartitionAppender,
    private readonly onEvict: (s: Slot) => void,
  ) {}

  /** An fdatasync in flight uses the fd across an await. */
  inUse(): boolean {
    return this.a.busy > 0
  }

  closeFds(): void {
    this.onEvict(this)
  }
}

/**
 * The appenders of a store, under its fd pool. An appender keeps its segment and index open
 * between appends (reopening costs a directory listing and a scan from the last index entry), so
 * with thousands of partitions written the pool closes the least recently used ones; an evicted
 * appender with nothing in flight is dropped altogether (its 256 KiB encode buffer with it).
 */
export class PooledAppenders {
  private readonly slots = new Map<string, Slot>()
  /** Partition directories written since their last sync whose appender was evicted (interval policy). */
  private readonly unsynced = new Map<string, string>() // dir → topic
  private syncing: Promise<void> | undefined

  constructor(
    private readonly pool: FdPool,
    private readonly options: { segmentBytes: number; fsync: FsyncPolicy },
  ) {}

  /** Run `op` on the partition's appender, its fds counted in the pool meanwhile. */
  async run<T>(dir: string, topic: string, partition: number, op: (a: PartitionAppender) => Promise<T>): Promise<T> {
    const s = this.enter(dir, topic, partition)
    try {
      return await op(s.a)
    } finally {
      this.leave(s)
    }
  }

  /** `run` of a synchronous operation (an append written at once or not at all). */
  runNow<T>(dir: string, topic: string, partition: number, op: (a: PartitionAppender) => T): T {
    const s = this.enter(dir, topic, partition)
    try {
      return op(s.a)
    } finally {
      this.leave(s)
    }
  }

  /** The partition's slot, its fds counted before the append opens anything (so the room is made first). */
  private enter(dir: string, topic: string, partition: number): Slot {
    const id = partitionKey(topic, partition)
    let s = this.slots.get(id)
    if (!s) {
      s = new Slot(id, new PartitionAppender(dir, topic, this.options), (x) => this.evict(x))
      this.slots.set(id, s)
    }
    this.pool.hold(s, APPENDER_FDS)
    s.inflight++
    return s
  }

  private leave(s: Slot): void {
    s.inflight--
    // Exact again: evicted while it waited for the lock it reopened its files; a failed append closed them.
    if (this.slots.get(s.id) === s) this.pool.hold(s, s.a.hasOpenFiles ? APPENDER_FDS : 0)
  }

  private evict(s: Slot): void {
    // A background sync (interval policy) would skip a closed appender: sync its files by path instead.
    if (s.a.dirty) this.unsynced.set(s.a.dir, s.a.topic)
    s.a.close()
    // Only an idle one can go: a second appender of the partition could reorder this process's appends.
    if (s.inflight === 0 && this.slots.get(s.id) === s) this.slots.delete(s.id)
  }

  /** The interval policy's background sync: open appenders by fd, evicted ones by path. */
  syncDirty(): Promise<void> {
    for (const s of this.slots.values()) void s.a.syncIfDirty()
    if (this.unsynced.size === 0 || this.syncing) return this.syncing ?? Promise.resolve()
    this.syncing = (async () => {
      // One partition at a time: these fds are outside the pool, so keep them to two.
      while (this.unsynced.size > 0) {
        const dir = this.unsynced.keys().next().value as string
        this.unsynced.delete(dir)
        await syncNewestSegment(dir).catch(() => undefined)
      }
    })().finally(() => (this.syncing = undefined))
    return this.syncing
  }

  /** Close and drop the appenders of a topic (deleted, or found missing). */
  forgetTopic(topic: string): void {
    for (const [id, s] of this.slots) {
      if (s.a.topic !== topic) continue
      s.a.close()
      this.pool.forget(s)
      this.slots.delete(id)
    }
    for (const [dir, t] of this.unsynced) if (t === topic) this.unsynced.delete(dir)
  }

  /** Sync what the policy promised and close everything. */
  async close(): Promise<void> {
    for (const s of this.slots.values()) await s.a.syncIfDirty()
    await this.syncDirty()
    for (const s of this.slots.values()) {
      s.a.close()
      this.pool.forget(s)
    }
    this.slots.clear()
  }
}

/** fdatasync the newest segment of a partition and its index through fresh read-only fds (syncing the file, whatever fd wrote it). */
async function syncNewestSegment(dir: string): Promise<void> {
  let base = -1
  for (const n of await readdir(dir)) base = Math.max(base, segmentBase(n) ?? -1)
  if (base < 0) return
  for (const path of [segmentPath(dir, base), indexPath(dir, base)]) {
    const fh = await openFile(path, 'r').catch(() => undefined)
    if (!fh) continue
    try {
      await fh.datasync()
    } finally {
      await fh.close()
    }
  }
}
