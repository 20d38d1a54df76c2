import { fstatSync, readSync } from 'node:fs'
import type { LogRollbackError, TopicCorruptError } from '../../core/errors.js'
import type { KeyCodec } from '../../core/keys.js'
import type { Message } from '../../core/types.js'
import type { PartitionReader } from '../backend.js'
import type { MessageFactory, RawBudget, RawRecord } from '../record.js'
import { FLAG_SEAL, frameCrcOk, readFrameHeader } from './batch-format.js'
import { openSegmentFd, type FdHolder, type FdPool } from './fd-pool.js'
import { FrameResume } from './frame-resume.js'
import { indexPath, segmentPath } from './layout.js'
import { PartitionChanges, fdIdentity, sizeIfSame } from './partition-changes.js'
import { indexLookup } from './segment-index.js'
import { damageError } from './segment-scan.js'
import { closeQuietly } from './safe-fs.js'
import { retainedPosition, segmentEndFault } from './segment-list.js'

/**
 * The most a read takes from the file at once: 256 KiB, about half a core's L2 cache, so the
 * frames of a window are still in cache when their CRC is checked and their records decoded (1 MiB
 * windows read a backlog 10% slower: `npx tsx bench/ab-history.mts <tree> <dir>`).
 */
const CHUNK = 1 << 18
/** No buffer: a reader without an open segment (never read, or evicted) holds no memory for it. */
const EMPTY = Buffer.alloc(0)
const MIN_BUFFER = 4096

/**
 * Reads one partition forward from an offset: seeks through the segment list and sparse index
 * (O(log n)), then reads whole frames in 256 KiB chunks, follows seal frames into the next segment,
 * and stops quietly at an incomplete frame (a write in progress or a torn tail). With a pool, its
 * segment fd may be closed between reads (`closeFds`); the next read reopens where it was.
 */
export class FilePartitionReader implements PartitionReader, FdHolder {
  /** Open segment file descriptor. */
  private fh: number | undefined
  /** Segment bytes [winPos, winPos + winLen) are in `buf`. */
  private winPos = 0
  private winLen = 0
  private segBase = -1
  private pos = 0
  /** End offset of the last frame passed in this segment (-1: unknown, after a seek into it). */
  private prevEnd = -1
  /** Byte position where the end of this segment's data was last found clean (see `endOfData`). */
  private checkedEnd = -1
  /** Identity of the segment when `closeFds` closed it. */
  private segId = ''
  private verifying = false
  /** Notices the topic created again and trims by others. */
  private readonly changes: PartitionChanges
  private buf = EMPTY
  private readonly resume = new FrameResume() // the frame in `buf` the last read stopped inside
  /** The last window filled `buf`: the next one is read into a larger buffer. */
  private grow = false
  private closed = false

  constructor(
    private readonly dir: string,
    readonly topic: string,
    readonly partition: number,
    private keys: KeyCodec,
    public next: number,
    /** Caps the fds of all the store's readers and appenders. */
    private readonly pool?: FdPool,
    /** The key codec of the topic as it is now (called when the topic was created again). */
    private readonly rekey?: () => KeyCodec,
    /** Called once, by the first `close()` (the store that opened it forgets it). */
    private readonly onClose?: () => void,
  ) {
    this.changes = new PartitionChanges(dir)
  }

  seek(offset: number): void {
    this.next = offset
    this.release()
  }

  /** Synchronous inside (page-cache reads): `seek` and `close` never interleave with a read half-way. */
  async read(max: number, make?: MessageFactory): Promise<Message[]> {
    return this.readSync(max, false, undefined, make) as Message[]
  }
  /**
   * `readRaw` now, synchronously (the reads inside are page-cache reads): for a caller holding the
   * partition lock, which must not wait between looking at the log and writing to it.
   */
  readRawNow(max: number): RawRecord[] {
    return this.readSync(max, true) as RawRecord[]
  }
  /** Like `read`, without decoding (`readSync(…, raw)`): the records point into this reader's buffer until its next call. */
  async readRaw(max: number, budget?: RawBudget): Promise<RawRecord[]> {
    return this.readSync(max, true, budget) as RawRecord[]
  }

  private readSync(max: number, raw: boolean, budget?: RawBudget, make?: MessageFactory): Array<Message | RawRecord> {
    const out: Array<Message | RawRecord> = []
    if (this.closed) return out
    if (this.fh !== undefined) {
      this.pool?.touch(this)
      // A trim by anyone moved the start past `next`: continue at the start (`locate` moves it there).
      const start = this.changes.trimmedTo()
      if (start !== undefined && start > this.next) this.seek(this.next)
    }
    // Up to 64 windows or segments per read once it has records; one with none yet goes on until it
    // finds some or the end: `[]` means "nothing now", also past a compacted topic's emptied segments.
    for (let hops = 0; out.length < max && (hops < 64 || out.length === 0); hops++) {
      if (this.fh === undefined && !this.reopen()) return out
      const fd = this.fh as number
      // Parse from the bytes already read when `pos` is inside them (re-reading a window per read of a few hundred messages would multiply the I/O).
      let fresh = false
      if (!(this.pos >= this.winPos && this.pos < this.winPos + this.winLen)) {
        if (raw && out.length > 0) return out // raw records point into `buf`: no refill under them
        // Synchronous: a page-cache read of at most 256 KiB costs less than a thread-pool round trip, and leaves no idle gap.
        if (this.grow && this.buf.length < CHUNK) this.buf = Buffer.allocUnsafe(Math.min(CHUNK, this.buf.length * 8))
        this.winLen = readSync(fd, this.buf, 0, this.buf.length, this.pos)
        this.winPos = this.pos
        this.resume.clear()
        fresh = true
        this.grow = this.winLen === this.buf.length && this.buf.length < CHUNK // a backlog: read more at a time
        if (this.winLen === 0) {
          if (out.length === 0 && this.endOfData(out, this.pos)) continue
          return out
        }
      }
      const end = this.winLen
      let rel = this.pos - this.winPos
      let moved = false
      let switched = false
      let atEnd = false
      while (out.length < max) {
        const h = readFrameHeader(this.buf, rel, end)
        if (typeof h !== 'object') {
          if (h === 'bad') return this.damaged(out, this.winPos + rel, 'not a valid frame header')
          if (h === 'short' && fresh && rel === 0 && end === this.buf.length) {
            // A frame larger than the buffer: grow and read again.
            this.buf = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.buf.readUInt32LE(4)))
            this.winLen = 0
            moved = true
          } else atEnd = true
          break
        }
        const frameEnd = h.baseOffset + h.count
        // A frame starting below the end of the one before it was misplaced by a writer whose lock
        // was broken (its send failed): skipped, as writers skip it. A gap (after a repair) is fine.
        const inOrder = h.baseOffset >= this.prevEnd
        const wanted = inOrder && frameEnd > this.next
        // A whole frame failing its CRC is damage even at the very end: a write in progress or a torn
        // write is never whole (its header, which has its own CRC, says how long it is).
        if (this.resume.mustCheck(rel, h, this.next, wanted) && !frameCrcOk(this.buf, rel, h.length)) {
          return this.damaged(out, this.winPos + rel, 'a frame fails its CRC check')
        }
        if (h.flags & FLAG_SEAL) {
          const [base, id] = [this.segBase, fdIdentity(fd)]
          if (this.openSegment(h.baseOffset, 0)) this.prevEnd = h.baseOffset
          // No successor, and the file read is no longer at its path: a compaction merge moved the
          // records after it into the file there now (its seal names a segment it deleted), so
          // find `next` afresh rather than take the end for now.
          else if (sizeIfSame(segmentPath(this.dir, base), id) < 0) this.locate()
          moved = switched = true
          break
        }
        if (wanted) {
          this.next = this.resume.decode(
            this.buf,
            rel,
            h,
            this.next,
            max - out.length,
            out,
            raw ? undefined : this.keys,
            this,
            budget,
            make,
          )
          if (budget?.full === true) max = out.length // the byte budget ends this read where `resume` stopped
          if (this.next < frameEnd) {
            if (out.length >= max) break // limit reached inside this frame (`resume` knows where)
            this.next = frameEnd // a frame without records keeps its offsets reserved (repair writes such a marker)
          }
        }
        if (inOrder) this.prevEnd = frameEnd
        rel += h.length
        moved = true
      }
      if (this.fh === undefined) return out
      if (!switched) this.pos = this.winPos + rel
      if (atEnd) {
        // The window ends in an incomplete frame. Read again from here next time (more may have been
        // written); but if this window was just read and was short, that is the end of the data now.
        this.winLen = 0
        if (fresh && end < this.buf.length) {
          if (out.length === 0 && this.endOfData(out, this.winPos + end)) continue
          return out
        }
        if (!moved && fresh) return out
        continue
      }
      if (!moved) return out
    }
    return out
  }

  /**
   * A history reading a partition to its end offset calls this: that offset stops before damage
   * (writers refuse to append after it), so what follows `next` must be a clean end or a write in
   * progress, else this throws the `TopicCorruptError` rather than let the history end short.
   */
  /** A directory's log never moves back (no replicas, no restore under a running reader). */
  takeRollback(): LogRollbackError | undefined {
    return undefined
  }

  async verifyEnd(): Promise<void> {
    const at = this.next
    // The end offset lies in the last segment, so its seal need not be checked (`endOfData` skipped).
    this.verifying = true
    try {
      if (this.readSync(1, true).length > 0) this.seek(at) // appended meanwhile: not this reader's business
    } finally {
      this.verifying = false
    }
  }

  /**
   * Damage at byte `position` of the open segment. Records decoded before it are delivered first
   * (the reader stays in front of the damage, so its next read throws at once); then it throws.
   */
  private damaged<T>(out: T[], position: number, reason: string): T[] {
    if (out.length > 0) {
      this.pos = position
      return out
    }
    throw this.fault(position, reason)
  }

  /**
   * The segment's bytes end at `seen` with no whole frame after `pos`: "no more data yet" only in
   * the last segment, and only if it did not shrink (see `segmentEndFault`). Checked once per end
   * position, so an idle tail costs nothing more. True when bytes arrived meanwhile (read again).
   * Only a read with nothing to return checks: one with records returns them at once (a tail's
   * latency), and its next read, finding no more, checks.
   */
  private endOfData(out: readonly unknown[], seen: number): boolean {
    if (this.verifying) return false
    if (fstatSync(this.fh as number).nlink === 0) {
      // Unlinked under us with no seal: the topic was deleted. Look again (it may have been created anew).
      this.release()
      return out.length === 0
    }
    if (this.pos === this.checkedEnd) return false
    const fault = segmentEndFault(this.dir, this.topic, this.segBase, this.fh as number, this.pos, seen)
    if (fault === 'grew') return true
    if (fault === undefined) this.checkedEnd = this.pos
    else if (out.length === 0) throw this.fault(this.pos, fault)
    return false
  }

  private fault(position: number, reason: string): TopicCorruptError {
    return damageError(segmentPath(this.dir, this.segBase), {
      position,
      offset: this.prevEnd >= 0 ? this.prevEnd : this.next,
      reason,
    })
  }

  /** Find the segment and byte position for `next`; false when the segment does not exist yet. */
  private locate(): boolean {
    const dir = this.changes.directory()
    if (dir === 'gone') return false // the topic was deleted: nothing to read until it is created again
    if (dir === 'new') {
      // Created again since this reader last looked: a new log, read from its beginning.
      this.next = 0
      if (this.rekey) this.keys = this.rekey()
    }
    const at = retainedPosition(this.dir, this.topic, this.next)
    if (at === undefined) return false
    this.next = at.offset
    return this.openSegment(at.base, -1)
  }

  /** Continue at (segBase, pos) after `closeFds`, else find `next`. */
  private reopen(): boolean {
    if (this.segBase < 0) return this.locate()
    // -1: another file now (rewritten by `twainmq repair`, the topic created again) or deleted by retention or trim: find `next` afresh.
    const size = sizeIfSame(segmentPath(this.dir, this.segBase), this.segId)
    if (size >= 0 && size < this.pos)
      throw this.fault(size, `the segment shrank to ${size} bytes, below byte ${this.pos} already read`)
    // An idle partition costs a stat, not an fd (a tail over 10,000 partitions polls them all).
    if (size >= 0 && size === this.pos) return false
    if (size >= 0 && this.openSegment(this.segBase, this.pos)) return true
    this.release()
    return this.locate()
  }

  /** Open segment `base` at byte `at` (-1: look up `next` in the sparse index). */
  private openSegment(base: number, at: number): boolean {
    // Resuming where it was (after `closeFds`) keeps what is known about the frames before `pos`.
    const resume = base === this.segBase && at >= 0
    this.release()
    const fd = openSegmentFd(segmentPath(this.dir, base), this, this.pool)
    if (fd === undefined) return false // sealed, successor not created yet
    if (this.closed) {
      closeQuietly(fd)
      this.pool?.closed(this)
      return false
    }
    this.fh = fd
    if (!resume) this.prevEnd = this.checkedEnd = -1
    this.segBase = base
    const size = fstatSync(fd).size
    this.pos = at >= 0 ? at : indexLookup(indexPath(this.dir, base), this.next, fd, size)
    // Sized to the bytes there (4 KiB–256 KiB), growing when a read fills it: 1 MiB per reopen kept a 10,000-partition tail busy in GC.
    if (this.buf.length === 0) this.buf = Buffer.allocUnsafe(Math.min(CHUNK, Math.max(MIN_BUFFER, size - this.pos)))
    return true
  }

  private release(): void {
    const fd = this.fh
    this.fh = undefined
    this.segBase = -1
    this.winLen = 0
    this.resume.reset() // its raw records point into the buffer: not kept past a segment
    if (fd !== undefined) {
      closeQuietly(fd)
      this.pool?.closed(this)
    }
  }

  /** The pool needs the fd: close it, keep the segment and byte position (reopening is one `open`), drop the buffer. */
  closeFds(): void {
    const base = this.segBase
    this.segId = this.fh === undefined ? '' : fdIdentity(this.fh)
    this.release()
    this.segBase = base
    this.buf = EMPTY
  }

  async close(): Promise<void> {
    const first = !this.closed
    this.closed = true
    this.release()
    this.buf = EMPTY
    this.pool?.forget(this)
    if (first) this.onClose?.()
  }
}
