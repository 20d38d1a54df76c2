import { fdatasync } from 'node:fs'
import { basename, dirname } from 'node:path'
import { promisify } from 'node:util'
import { AppendConflictError, TopicNotFoundError, backendError } from '../../core/errors.js'
import type { FsyncPolicy } from '../../core/types.js'
import type { RecordInput } from '../record.js'
import type { AddedHeaders } from '../record-codec.js'
import { closeSegment, refresh, roll, writeFrame, type ActiveSegment } from './active-segment.js'
import { encodeBatch } from './batch-format.js'
import { HeldLock } from './held-lock.js'
import type { NativeTextFrame } from './text-frame.js'
import { lockFile } from './layout.js'
import { isRealDir } from './safe-fs.js'

const fdatasyncAsync = promisify(fdatasync)

/** Largest encode buffer kept for reuse. */
const SCRATCH_MAX = 8 * 1024 * 1024

export interface AppenderOptions {
  segmentBytes: number
  fsync: FsyncPolicy
  lockTimeoutMs?: number
}

/**
 * Appends batches to one partition, from any number of processes at once. Under the partition
 * lock it brings its view of the active segment up to date (active-segment.ts), rolls the segment
 * when full, and writes the frame with the next dense offsets. Every failure (disk full, a damaged
 * segment, a lost lock) rejects the append, leaves no partial frame behind and resets the view, so
 * the next append starts afresh: the partition is writable again as soon as the cause is gone.
 */
export class PartitionAppender {
  private seg: ActiveSegment | undefined
  private readonly lock: HeldLock
  private tail: Promise<unknown> = Promise.resolve()
  /** Appends queued on the slow path. */
  private pending = 0
  /** Reused encode buffer. */
  private scratch: Buffer | undefined
  /** The partition directory was checked to be a real directory (not a planted symlink). */
  private checked = false
  /** Async operations using the segment's fd right now (an fdatasync): it must not be closed under them. */
  busy = 0
  dirty = false
  /** Set when this appender rolled a segment; the backend applies retention then. */
  rolled = false
  /** Whether it holds the segment and index fds now (the store's fd pool counts them). */
  get hasOpenFiles(): boolean {
    return this.seg !== undefined
  }

  constructor(
    readonly dir: string,
    readonly topic: string,
    private readonly options: AppenderOptions,
  ) {
    this.lock = new HeldLock(lockFile(dir), { acquireTimeoutMs: options.lockTimeoutMs ?? 30_000 })
  }

  /**
   * Append records as one frame; resolves with the base offset once written (and synced per policy).
   * With `expectedEnd`, only if the partition's end is that under the lock (else `AppendConflictError`).
   */
  append(records: readonly RecordInput[], producerId: string, expectedEnd?: number): Promise<number> {
    return this.appendWith(records.length, (base) => this.encode(records, base, producerId), producerId, expectedEnd)
  }

  /**
   * Append a frame decided on under the lock: `count` looks at the partition's end offset and says
   * how many records the frame will hold (the idempotent appends read what others appended up to
   * that end and drop the duplicates), `encode` makes it at its base offset. Resolves with the base
   * offset, or undefined when `count` gave 0 (nothing is written). `written` is called with the
   * base offset once the frame is written, still under the lock and before this process's next
   * append to the partition (a cache of the log's contents records it there).
   */
  appendChosen(
    count: (end: number) => number,
    encode: (base: number) => Buffer,
    producerId: string,
    written?: (base: number) => void,
  ): Promise<number | undefined> {
    this.pending++
    const run = this.tail.then(async () => {
      await this.takeLock()
      const base = this.writeLockedWith(count, encode, producerId)
      if (base !== undefined) written?.(base)
      if (base !== undefined) await this.synced()
      return base
    })
    this.tail = run.catch(() => undefined).finally(() => this.pending--)
    return run
  }

  /** Append a frame built by the producer (see `NativeTextFrame`) as `append` does. */
  appendFrame(frame: NativeTextFrame): Promise<number> {
    return this.appendWith(frame.count, (base) => frame.frame(base), frame.producerId, undefined)
  }

  /** Append a frame now, synchronously, if nothing needs waiting for (see `writeNow`); else undefined. */
  appendFrameNow(frame: NativeTextFrame): number | undefined {
    return this.writeNow(frame.count, (base) => frame.frame(base), frame.producerId, undefined)
  }

  /**
   * Write now when nothing of this process is queued here, the fsync policy awaits no sync and the
   * lock is ours or free: the offset, or undefined when the append must queue. Throws a failed write.
   */
  private writeNow(
    count: number,
    encode: (base: number) => Buffer,
    producerId: string,
    expectedEnd: number | undefined,
  ): number | undefined {
    if (this.pending !== 0 || !(this.options.fsync === 'never' || typeof this.options.fsync === 'number'))
      return undefined
    let got = false
    try {
      got = this.lock.tryNow()
    } catch {
      got = false // the queued path reports it properly
    }
    if (!got) return undefined
    const base = this.writeLocked(count, encode, producerId, expectedEnd)
    if (typeof this.options.fsync === 'number') this.dirty = true
    return base
  }

  /** Append the frame `encode` makes for `count` records at a base offset (called under the lock, written at once). */
  private appendWith(
    count: number,
    encode: (base: number) => Buffer,
    producerId: string,
    expectedEnd: number | undefined,
  ): Promise<number> {
    // Fast path: nothing queued in this process and the lock is ours or free: write now, no promise chain.
    try {
      const base = this.writeNow(count, encode, producerId, expectedEnd)
      if (base !== undefined) return Promise.resolve(base)
    } catch (e) {
      return Promise.reject(e)
    }
    this.pending++
    const run = this.tail
      .then(() => this.appendLocked(count, encode, producerId, expectedEnd))
      .finally(() => this.pending--)
    this.tail = run.catch(() => undefined)
    return run
  }

  private async appendLocked(
    count: number,
    encode: (base: number) => Buffer,
    producerId: string,
    expectedEnd: number | undefined,
  ): Promise<number> {
    await this.takeLock()
    const base = this.writeLocked(count, encode, producerId, expectedEnd)
    await this.synced()
    return base
  }

  /** Hold the lock (the caller then writes synchronously, while it is still ours). */
  private async takeLock(): Promise<void> {
    try {
      this.checkDir()
      await this.lock.take()
      // The fd pool may have closed this appender (releasing the lock) between the acquire and this
      // continuation: write only while the lock is ours (the write runs synchronously from here).
      while (!this.lock.owns()) await this.lock.take()
    } catch (e) {
      this.close()
      throw e
    }
  }

  /** After a write under the lock: sync it as the fsync policy says. */
  private async synced(): Promise<void> {
    const policy = this.options.fsync
    if (policy === 'batch' || policy === 'always') {
      const seg = this.seg as ActiveSegment
      this.busy++
      try {
        await fdatasyncAsync(seg.fd)
      } catch (e) {
        // The frame is in the page cache but may never reach the disk: the send fails (a retry may duplicate it).
        throw backendError(`fdatasync of ${seg.path} failed`, e)
      } finally {
        this.busy--
      }
    } else if (typeof policy === 'number') this.dirty = true
  }

  /** The topic or partition directory replaced by a symlink is refused (checked once per appender). */
  private checkDir(): void {
    if (this.checked) return
    if (!isRealDir(dirname(this.dir), 'topic directory') || !isRealDir(this.dir, 'partition directory'))
      throw new TopicNotFoundError(`Topic "${this.topic}" does not exist (no ${this.dir})`)
    this.checked = true
  }

  /**
   * Encode records (with `added`, that header too: `encodeBatch`) into the reused scratch buffer.
   * Only for a frame written synchronously right after, under the lock (an `appendChosen`
   * encoder): the next encoding reuses the bytes.
   */
  encode(records: readonly RecordInput[], base: number, producerId: string, added?: AddedHeaders): Buffer {
    const frame = encodeBatch(records, base, producerId, 0, this.scratch, added)
    // Keep a buffer as large as this batch's bound for the next one; a frame built outside the
    // scratch buffer was allocated at its bound.
    if (frame.buffer !== this.scratch?.buffer && frame.buffer.byteLength <= SCRATCH_MAX)
      this.scratch = Buffer.allocUnsafe(Math.max(frame.buffer.byteLength, 256 * 1024))
    return frame
  }

  /** Write one frame with the lock held; then keeps the lock briefly or releases it on failure. */
  private writeLocked(
    count: number,
    encode: (base: number) => Buffer,
    producerId: string,
    expectedEnd: number | undefined,
  ): number {
    const check = (end: number): number => {
      if (expectedEnd !== undefined && end !== expectedEnd) {
        this.lock.written() // nothing written, nothing wrong: the lock is kept or yielded as after a write
        throw new AppendConflictError(
          `Append to "${this.topic}" partition ${basename(this.dir)} expected its end at ${expectedEnd}, found ${end}: another writer appended first`,
          { end },
        )
      }
      return count
    }
    return this.writeLockedWith(check, encode, producerId) as number
  }

  /**
   * Write one frame with the lock held: `count` looks at the partition's end and says how many
   * records the frame will hold (0: write nothing, undefined is returned); then the lock is kept
   * briefly, or released on failure.
   */
  private writeLockedWith(
    count: (end: number) => number,
    encode: (base: number) => Buffer,
    producerId: string,
  ): number | undefined {
    let base: number
    try {
      this.checkDir()
      let seg = (this.seg = refresh(this.seg, this.dir, this.topic))
      base = seg.nextOffset
      const n = count(base)
      if (n === 0) {
        this.lock.written()
        return undefined
      }
      const frame = encode(base)
      if (seg.size > 0 && seg.size + frame.length > this.options.segmentBytes) {
        this.seg = undefined // on failure, start from the files next time
        seg = this.seg = roll(seg, this.dir, this.topic, producerId, this.options.fsync === 'always')
        this.rolled = true
      }
      writeFrame(seg, frame, n)
    } catch (e) {
      if (!(e instanceof AppendConflictError)) this.close()
      throw e
    }
    this.lock.written()
    return base
  }

  /**
   * Seal the active segment when it holds frames and open its successor, as a full one is (a
   * compaction pass reaches only sealed segments: `TopicStore.compact` seals the records sent so
   * far). Resolves with whether it sealed one.
   */
  rollNow(producerId: string): Promise<boolean> {
    this.pending++
    const run = this.tail
      .then(async () => {
        await this.takeLock()
        try {
          this.checkDir()
          const seg = (this.seg = refresh(this.seg, this.dir, this.topic))
          if (seg.size === 0) {
            this.lock.written()
            return false
          }
          this.seg = undefined // on failure, start from the files next time
          this.seg = roll(seg, this.dir, this.topic, producerId, this.options.fsync === 'always')
        } catch (e) {
          this.close()
          throw e
        }
        this.lock.written()
        return true
      })
      .finally(() => this.pending--)
    this.tail = run.catch(() => undefined)
    return run
  }

  /** Background fsync for the interval policy. */
  async syncIfDirty(): Promise<void> {
    if (!this.dirty || !this.seg) return
    this.dirty = false
    const fd = this.seg.fd
    this.busy++
    await this.tail.then(() => fdatasyncAsync(fd)).catch(() => undefined)
    this.busy--
  }

  /** Close file handles (and release a held lock); the next append reopens. */
  close(): void {
    try {
      this.lock.dispose()
    } catch {
      /* a lock we cannot remove is broken by others once we are gone */
    }
    const s = this.seg
    this.seg = undefined
    this.checked = false
    if (s) closeSegment(s)
  }
}
