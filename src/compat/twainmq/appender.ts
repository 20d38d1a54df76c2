import { closeSync, existsSync, fdatasyncSync, fstatSync, openSync, readSync, statSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { BackendError, TopicNotFoundError, backendError } from '../../core/errors.js'
import type { FsyncPolicy } from '../../core/types.js'
import { chunkName, utcDay, type Chunk, type ChunkDirectory } from './chunks.js'
import { HeldLock } from '../../backends/file/held-lock.js'
import type { LineIndexCache } from './line-index.js'

/**
 * The append lock of a partition: `<root>/<topic>@<P>.lock`, beside the topic directory. Not inside
 * it: Python TwainMQ takes every file of the topic directory whose `stem.split("-")[0] == str(P)` for
 * a chunk of partition P, and taking the lock there would change the directory on every append
 * (waking watchers, invalidating listings). `@` is in no topic name, so it cannot clash with one.
 */
export const lockPath = (root: string, topic: string, partition: number) => join(root, `${topic}@${partition}.lock`)

interface Active {
  chunk: Chunk
  path: string
  fd: number
  ino: number
  /** `ChunkDirectory.version` when the file was last known to be this one. */
  version: number
}

/**
 * Appends lines to one partition exactly as Python TwainMQ 0.1.9 does — `O_APPEND` writes of whole
 * `\n`-terminated lines to the partition's chunk of the current UTC day, creating
 * `<P>-<YYYYMMDD>_<offset>.tmf` (offset = the previous chunk's start + its line count, a torn last
 * line included, as Python's `readlines()` counts) when the day changes — and fixes what Python
 * gets wrong:
 * - twainmq writers take a cross-process lock (`HeldLock`: the native appender's `PartitionLock`,
 *   held briefly between appends), so they never race each other at a day roll-over (Python's bug 7)
 *   and always append to the newest chunk;
 * - the offsets returned are the true line indexes: counted under the lock from the line index,
 *   and checked after the write (`fstat`): if an unlocked (Python) writer appended between the count
 *   and the write, the written bytes are found and their line index counted again;
 * - a torn last line (a crashed writer) is ended with `\n` before the next line, so it stays one
 *   (corrupt) line at its own offset instead of swallowing the next message.
 * A call's lines go out in one `write()`, so they stay contiguous even next to Python writers.
 */
export class TwainmqAppender {
  private readonly lock: HeldLock
  private active: Active | undefined
  private tail: Promise<unknown> = Promise.resolve()
  /** Appends queued on the slow path. */
  private pending = 0
  /** Written since the last `syncIfDirty` (interval fsync policy). */
  private dirty = false

  constructor(
    root: string,
    private readonly dir: ChunkDirectory,
    private readonly lines: LineIndexCache,
    readonly partition: number,
    private readonly fsync: FsyncPolicy,
  ) {
    this.lock = new HeldLock(lockPath(root, dir.topic, partition))
  }

  get topic(): string {
    return this.dir.topic
  }

  /** Append `data` (whole `\n`-terminated lines); resolves with the offset of the first. */
  append(data: Buffer): Promise<number> {
    // Fast path: nothing queued here and the lock is ours or free: write now.
    if (this.pending === 0) {
      let got = false
      try {
        got = this.lock.tryNow()
      } catch {
        got = false // the slow path reports it properly
      }
      if (got) {
        try {
          return Promise.resolve(this.writeLocked(data))
        } catch (e) {
          return Promise.reject(e)
        }
      }
    }
    this.pending++
    const run = this.tail.then(() => this.appendLocked(data)).finally(() => this.pending--)
    this.tail = run.catch(() => undefined)
    return run
  }

  private async appendLocked(data: Buffer): Promise<number> {
    try {
      await this.lock.take()
    } catch (e) {
      if (!existsSync(this.dir.dir))
        throw new TopicNotFoundError(`Topic "${this.topic}" does not exist (no ${this.dir.dir})`)
      throw e
    }
    return this.writeLocked(data)
  }

  /** Write with the lock held; then keep the lock briefly, or release it on failure. */
  private writeLocked(data: Buffer): number {
    let base: number
    try {
      base = this.write(data)
    } catch (e) {
      this.close()
      throw e
    }
    this.lock.written()
    return base
  }

  private write(data: Buffer): number {
    const a = this.activeChunk(Date.now())
    const idx = this.lines.get(a.path).refresh(a.fd)
    const torn = idx.partialTail
    const out = torn ? Buffer.concat([Buffer.from('\n'), data]) : data
    const before = idx.size
    let base = a.chunk.start + idx.lines + (torn ? 1 : 0)
    let written: number
    try {
      written = writeSync(a.fd, out)
    } catch (e) {
      throw backendError(`Cannot append to ${a.path}`, e)
    }
    if (written !== out.length)
      throw new BackendError(`Short write to ${a.path}: ${written} of ${out.length} bytes (disk full?)`)
    const size = fstatSync(a.fd).size
    if (size !== before + out.length) base = this.find(a, before, size, data, idx.lines)
    else idx.appended(out, before) // no need to read our own lines back
    if (this.fsync === 'batch' || this.fsync === 'always') fdatasyncSync(a.fd)
    else if (typeof this.fsync === 'number') this.dirty = true
    return base
  }

  /**
   * Another (unlocked) writer appended between our count and our write: find our bytes in what was
   * appended since `before` and count the lines in front of them.
   */
  private find(a: Active, before: number, size: number, data: Buffer, linesBefore: number): number {
    const region = Buffer.allocUnsafe(size - before)
    readSync(a.fd, region, 0, region.length, before)
    let at = region.indexOf(data)
    while (at > 0 && region[at - 1] !== 10) at = region.indexOf(data, at + 1)
    if (at < 0) throw new BackendError(`Cannot find the lines just appended to ${a.path}`)
    let lines = 0
    for (let i = region.indexOf(10); i >= 0 && i < at; i = region.indexOf(10, i + 1)) lines++
    return a.chunk.start + linesBefore + lines
  }

  /** The chunk to append to now, created for a new UTC day. Call with the lock held. */
  private activeChunk(now: number): Active {
    const chunks = this.dir.partition(this.partition)
    const last = chunks[chunks.length - 1]
    const today = utcDay(now)
    let chunk: Chunk
    if (last && last.day >= today)
      chunk = last // (a later day: another host's clock is ahead; keep the order)
    else {
      let start = 0
      if (last) {
        const idx = this.lines.get(this.dir.path(last)).refresh()
        start = last.start + idx.lines + (idx.partialTail ? 1 : 0)
      }
      chunk = { partition: this.partition, day: today, start, name: chunkName(this.partition, today, start) }
      try {
        closeSync(openSync(this.dir.path(chunk), 'wx', 0o644))
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT')
          throw new TopicNotFoundError(`Topic "${this.topic}" does not exist (no ${this.dir.dir})`)
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST')
          throw backendError(`Cannot create ${this.dir.path(chunk)}`, e)
      }
      this.dir.invalidate()
    }
    const path = this.dir.path(chunk)
    const a = this.active
    if (a && a.path === path) {
      // Still the same file? Certainly while the directory is unchanged; else (the topic may have
      // been deleted and created again) compare inodes.
      if (a.version === this.dir.version) return a
      const st = statSync(path, { throwIfNoEntry: false })
      if (st && st.ino === a.ino) {
        a.version = this.dir.version
        return a
      }
    }
    this.closeFile()
    let fd: number
    try {
      fd = openSync(path, 'a+', 0o644) // O_APPEND (+ read, for the line index)
    } catch (e) {
      throw backendError(`Cannot open ${path}`, e)
    }
    this.active = { chunk, path, fd, ino: fstatSync(fd).ino, version: this.dir.version }
    return this.active
  }

  /** `fdatasync` the open chunk if written since the last call (interval fsync policy). */
  syncIfDirty(): void {
    if (!this.dirty || !this.active) return
    this.dirty = false
    try {
      fdatasyncSync(this.active.fd)
    } catch {
      /* closed meanwhile */
    }
  }

  /** Close the open chunk file and release the lock. */
  close(): void {
    this.lock.dispose()
    this.closeFile()
  }

  private closeFile(): void {
    const a = this.active
    this.active = undefined
    if (a) {
      try {
        closeSync(a.fd)
      } catch {
        /* already closed */
      }
    }
  }
}
