import {
  closeSync,
  existsSync,
  fdatasync,
  fstatSync,
  ftruncateSync,
  fsyncSync,
  openSync,
  readSync,
  readdirSync,
  writeSync,
} from 'node:fs'
import { promisify } from 'node:util'
import { TopicNotFoundError, backendError } from '../../core/errors.js'
import type { FsyncPolicy } from '../../core/types.js'
import type { RecordInput } from '../record.js'
import { encodeBatch, encodeSeal } from './batch-format.js'
import { indexPath, lockFile, segmentBase, segmentPath } from './layout.js'
import { PartitionLock } from './partition-lock.js'
import { INDEX_ENTRY_BYTES, INDEX_INTERVAL_BYTES, encodeIndexEntry } from './segment-index.js'
import { scanSegmentSync } from './segment-scan.js'

const fdatasyncAsync = promisify(fdatasync)

/** Largest encode buffer kept for reuse. */
const SCRATCH_MAX = 8 * 1024 * 1024

/** Keep the lock this long after a write for the next batch. */
const HOLD_IDLE_MS = 2
/** Never keep it longer than this in a row. */
const HOLD_MAX_MS = 20
/** After giving it up at HOLD_MAX_MS, wait this long before taking it again. */
const COOLDOWN_MS = 3

/** The appender's view of the active segment, brought up to date under the lock. */
interface ActiveSegment {
  base: number
  path: string
  fd: number
  idxFd: number
  /** End of the last valid frame. */
  size: number
  nextOffset: number
  /** Start of the last frame, to decide where index entries go. */
  lastFrameStart: number
}

export interface AppenderOptions {
  segmentBytes: number
  fsync: FsyncPolicy
  lockTimeoutMs?: number
}

/**
 * Appends batches to one partition, from any number of processes at once. Under the partition
 * lock it brings its view of the active segment up to date by scanning only the bytes appended
 * since it last looked (following seal frames to the next segment), truncates a torn tail left by
 * a crashed writer, rolls the segment when full, writes the frame with the next dense offsets and
 * maintains the sparse index.
 */
export class PartitionAppender {
  private seg: ActiveSegment | undefined
  private readonly lock: PartitionLock
  private tail: Promise<unknown> = Promise.resolve()
  /** Appends queued on the slow path. */
  private pending = 0
  /** We hold the lock between batches (see `afterWrite`). */
  private held = false
  private heldSince = 0
  private holdTimer: NodeJS.Timeout | undefined
  private cooldownUntil = 0
  /** Reused encode buffer. */
  private scratch: Buffer | undefined
  dirty = false
  /** Set when this appender rolled a segment; the backend applies retention then. */
  rolled = false

  constructor(
    readonly dir: string,
    readonly topic: string,
    private readonly options: AppenderOptions,
  ) {
    this.lock = new PartitionLock(lockFile(dir), { acquireTimeoutMs: options.lockTimeoutMs ?? 30_000 })
  }

  /** Append records as one frame; resolves with the base offset once written (and synced per policy). */
  append(records: readonly RecordInput[], producerId: string): Promise<number> {
    // Fast path: nothing queued in this process and the lock is ours or free: write now, no promise chain.
    if (this.pending === 0 && (this.options.fsync === 'never' || typeof this.options.fsync === 'number')) {
      let got = false
      try {
        got = this.keepHeld() || (Date.now() >= this.cooldownUntil && this.tryTake())
      } catch {
        got = false // the slow path reports it properly
      }
      if (got) {
        try {
          const base = this.writeLocked(records, producerId)
          if (typeof this.options.fsync === 'number') this.dirty = true
          return Promise.resolve(base)
        } catch (e) {
          return Promise.reject(e)
        }
      }
    }
    this.pending++
    const run = this.tail.then(() => this.appendLocked(records, producerId)).finally(() => this.pending--)
    this.tail = run.catch(() => undefined)
    return run
  }

  private async appendLocked(records: readonly RecordInput[], producerId: string): Promise<number> {
    try {
      if (!this.keepHeld()) {
        const wait = this.cooldownUntil - Date.now()
        if (wait > 0) await new Promise((r) => setTimeout(r, wait))
        await this.lock.acquire()
        this.heldSince = Date.now()
      }
    } catch (e) {
      if (!existsSync(this.dir)) {
        this.reset()
        throw new TopicNotFoundError(`Topic "${this.topic}" does not exist (no ${this.dir})`)
      }
      throw e
    }
    const base = this.writeLocked(records, producerId)
    const seg = this.seg as ActiveSegment
    const policy = this.options.fsync
    if (policy === 'batch' || policy === 'always') await fdatasyncAsync(seg.fd).catch((e) => Promise.reject(backendError(`fdatasync of ${seg.path} failed`, e)))
    else if (typeof policy === 'number') this.dirty = true
    return base
  }

  /** Write one frame with the lock held; then keeps the lock briefly (`afterWrite`) or releases it on failure. */
  private writeLocked(records: readonly RecordInput[], producerId: string): number {
    let seg: ActiveSegment
    let base: number
    try {
      seg = this.refresh()
      base = seg.nextOffset
      const frame = encodeBatch(records, base, producerId, 0, this.scratch)
      // Keep a buffer as large as this batch's bound for the next one (written synchronously below,
      // so reuse is safe); a frame built outside the scratch buffer was allocated at its bound.
      if (frame.buffer !== this.scratch?.buffer && frame.buffer.byteLength <= SCRATCH_MAX) this.scratch = Buffer.allocUnsafe(Math.max(frame.buffer.byteLength, 256 * 1024))
      if (seg.size > 0 && seg.size + frame.length > this.options.segmentBytes) seg = this.roll(seg, producerId)
      writeSync(seg.fd, frame, 0, frame.length, seg.size)
      if (seg.size === 0 || Math.floor(seg.lastFrameStart / INDEX_INTERVAL_BYTES) < Math.floor(seg.size / INDEX_INTERVAL_BYTES)) {
        writeSync(seg.idxFd, encodeIndexEntry(base, seg.size))
      }
      seg.lastFrameStart = seg.size
      seg.size += frame.length
      seg.nextOffset = base + records.length
    } catch (e) {
      this.reset()
      this.lock.release()
      throw e
    }
    this.afterWrite()
    return base
  }

  /*
   * Holding the lock between batches. Taking the lock costs two directory operations (create and
   * unlink), 50-300 µs on ext4, more than encoding a batch of a thousand records. So an appender
   * keeps the lock for `HOLD_IDLE_MS` after a write, for the next batch of a busy producer. After
   * `HOLD_MAX_MS` in a row it checks whether another process waits (a fresh `<lock>.want` marker):
   * if so it releases and waits `COOLDOWN_MS` before taking it again, so the waiter (polling every
   * few ms) gets its turn; if not, it keeps going without a pause. A crashed holder's lock is
   * broken at once (its pid is dead), as before.
   */
  private tryTake(): boolean {
    if (!this.lock.tryAcquire()) return false
    this.heldSince = Date.now()
    return true
  }

  /** True when we hold the lock and may keep using it. */
  private keepHeld(): boolean {
    if (!this.held) return false
    clearTimeout(this.holdTimer)
    this.held = false
    // After a long gap (this process was stopped?) the lock may have been broken as hung: check first.
    if (Date.now() - this.heldSince > HOLD_MAX_MS && !this.lock.stillHeld()) {
      this.lock.release()
      return false
    }
    return true
  }

  /** Keep the lock for the next batch, unless another process waits and we have had it long enough. */
  private afterWrite(): void {
    const now = Date.now()
    if (now - this.heldSince > HOLD_MAX_MS) {
      // Every HOLD_MAX_MS: yield to a waiter, or check we still own the lock and mark it alive (a
      // lock untouched for its stale limit may be broken by others).
      if (this.lock.othersWaiting() || !this.lock.stillHeld()) {
        this.lock.release()
        this.cooldownUntil = now + COOLDOWN_MS
        return
      }
      this.lock.touch()
      this.heldSince = now // nobody waits: keep going without a pause
    }
    this.held = true
    this.holdTimer = setTimeout(() => this.releaseHeld(), HOLD_IDLE_MS)
    this.holdTimer.unref()
  }

  private releaseHeld(): void {
    if (!this.held) return
    this.held = false
    clearTimeout(this.holdTimer)
    this.lock.release()
  }

  /** Background fsync for the interval policy. */
  async syncIfDirty(): Promise<void> {
    if (!this.dirty || !this.seg) return
    this.dirty = false
    const fd = this.seg.fd
    await this.tail.then(() => fdatasyncAsync(fd)).catch(() => undefined)
  }

  /** Bring the view up to date; call with the lock held. */
  private refresh(): ActiveSegment {
    let seg = this.seg ?? this.openLatest()
    for (;;) {
      let size: number
      try {
        size = fstatSync(seg.fd).size
      } catch (e) {
        throw backendError(`Cannot stat segment ${seg.path}`, e)
      }
      if (size === seg.size) return seg
      if (size < seg.size) {
        // Someone truncated below what we had validated: only possible if the segment was replaced. Start over.
        this.reset()
        seg = this.openLatest()
        continue
      }
      const scan = scanSegmentSync(seg.fd, seg.path, seg.size, size, seg.nextOffset)
      seg.size = scan.end
      seg.nextOffset = scan.nextOffset
      seg.lastFrameStart = scan.lastFrameStart
      if (scan.sealedTo !== undefined) {
        const next = scan.sealedTo
        this.close()
        seg = this.openSegment(next, next)
        continue
      }
      if (scan.tornBytes > 0) {
        // A writer died mid-frame (we hold the lock, so nobody is writing now): drop the torn bytes.
        ftruncateSync(seg.fd, seg.size)
      }
      this.seg = seg
      return seg
    }
  }

  private openLatest(): ActiveSegment {
    let names: string[]
    try {
      names = readdirSync(this.dir)
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new TopicNotFoundError(`Topic "${this.topic}" does not exist (no ${this.dir})`)
      throw backendError(`Cannot list ${this.dir}`, e)
    }
    let base = -1
    for (const n of names) {
      const b = segmentBase(n)
      if (b !== undefined && b > base) base = b
    }
    if (base < 0) base = 0
    // The scan from 0 learns the next offset: offsets are stored, so base is where it starts.
    const seg = this.openSegment(base, base)
    this.seg = seg
    return seg
  }

  private openSegment(base: number, nextOffset: number): ActiveSegment {
    const path = segmentPath(this.dir, base)
    let fd: number
    let idxFd: number
    try {
      fd = openSync(path, 'a+')
      idxFd = openSync(indexPath(this.dir, base), 'a+')
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new TopicNotFoundError(`Topic "${this.topic}" does not exist (no ${this.dir})`)
      throw backendError(`Cannot open segment ${path}`, e)
    }
    // A torn index entry would misalign every later one.
    let idxSize = fstatSync(idxFd).size
    if (idxSize % INDEX_ENTRY_BYTES !== 0) {
      idxSize -= idxSize % INDEX_ENTRY_BYTES
      ftruncateSync(idxFd, idxSize)
    }
    const seg: ActiveSegment = { base, path, fd, idxFd, size: 0, nextOffset, lastFrameStart: 0 }
    // Start the first scan at the last indexed frame rather than at byte 0 of a large segment.
    if (idxSize > 0) {
      const e = Buffer.allocUnsafe(INDEX_ENTRY_BYTES)
      readSync(idxFd, e, 0, INDEX_ENTRY_BYTES, idxSize - INDEX_ENTRY_BYTES)
      const position = e.readDoubleLE(8)
      if (position <= fstatSync(fd).size) {
        seg.size = position
        seg.lastFrameStart = position
        seg.nextOffset = e.readDoubleLE(0)
      }
    }
    this.seg = seg
    return seg
  }

  private roll(seg: ActiveSegment, producerId: string): ActiveSegment {
    // Seal first, then create: a crash in between leaves a sealed segment whose successor the next
    // writer creates; the reverse order could leave an empty successor that hides later offsets.
    const seal = encodeSeal(seg.nextOffset, producerId)
    writeSync(seg.fd, seal, 0, seal.length, seg.size)
    if (this.options.fsync === 'always') fsyncSync(seg.fd)
    const next = seg.nextOffset
    this.rolled = true
    this.close()
    const fresh = this.openSegment(next, next)
    if (this.options.fsync === 'always') {
      const dfd = openSync(this.dir, 'r')
      try {
        fsyncSync(dfd)
      } finally {
        closeSync(dfd)
      }
    }
    return fresh
  }

  private reset(): void {
    this.close()
  }

  /** Close file handles (and release a held lock); the next append reopens. */
  close(): void {
    this.releaseHeld()
    const s = this.seg
    this.seg = undefined
    if (!s) return
    try {
      closeSync(s.fd)
    } catch {
      /* already closed */
    }
    try {
      closeSync(s.idxFd)
    } catch {
      /* already closed */
    }
  }
}
