import { closeSync, fstatSync, openSync, readFileSync, readSync, readdirSync } from 'node:fs'
import { readdir } from 'node:fs/promises'
import { TopicCorruptError, TopicNotFoundError, backendError } from '../../core/errors.js'
import type { KeyCodec } from '../../core/keys.js'
import type { Message } from '../../core/types.js'
import type { PartitionReader } from '../backend.js'
import { FLAG_SEAL, decodeBatch, frameCrcOk, readFrameHeader } from './batch-format.js'
import { indexPath, segmentBase, segmentPath, startFile } from './layout.js'
import { indexLookup } from './segment-index.js'

const CHUNK = 1 << 20

/** Sorted base offsets of a partition's segments. */
export async function listSegments(dir: string, topic: string): Promise<number[]> {
  let names: string[]
  try {
    names = await readdir(dir)
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new TopicNotFoundError(`Topic "${topic}" does not exist (no ${dir})`)
    throw backendError(`Cannot list ${dir}`, e)
  }
  return basesOf(names)
}

/** Sorted base offsets of a partition's segments, synchronously. */
export function listSegmentsSync(dir: string, topic: string): number[] {
  let names: string[]
  try {
    names = readdirSync(dir)
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new TopicNotFoundError(`Topic "${topic}" does not exist (no ${dir})`)
    throw backendError(`Cannot list ${dir}`, e)
  }
  return basesOf(names)
}

function basesOf(names: string[]): number[] {
  const bases: number[] = []
  for (const n of names) {
    const b = segmentBase(n)
    if (b !== undefined) bases.push(b)
  }
  return bases.sort((a, b) => a - b)
}

/** Logical start offset written by `trim` (0 when never trimmed). */
export async function readStartOffset(dir: string): Promise<number> {
  return readStartOffsetSync(dir)
}

export function readStartOffsetSync(dir: string): number {
  try {
    const n = Number(readFileSync(startFile(dir), 'utf8').trim())
    return Number.isSafeInteger(n) && n >= 0 ? n : 0
  } catch {
    return 0
  }
}

/** Index of the last base ≤ offset (0 when all are greater). */
export function segmentFor(bases: readonly number[], offset: number): number {
  let lo = 0
  let hi = bases.length - 1
  let best = 0
  while (lo <= hi) {
    const mid = (lo + hi) >> 1
    if ((bases[mid] as number) <= offset) {
      best = mid
      lo = mid + 1
    } else hi = mid - 1
  }
  return best
}

/**
 * Reads one partition forward from an offset: seeks through the segment list and sparse index
 * (O(log n)), then reads whole frames in 1 MiB chunks, follows seal frames into the next segment,
 * and stops quietly at an incomplete frame (a write in progress or a torn tail).
 */
export class FilePartitionReader implements PartitionReader {
  /** Open segment file descriptor. */
  private fh: number | undefined
  /** Segment bytes [winPos, winPos + winLen) are in `buf`. */
  private winPos = 0
  private winLen = 0
  private segBase = -1
  private pos = 0
  private buf = Buffer.allocUnsafe(CHUNK)
  private closed = false

  constructor(
    private readonly dir: string,
    readonly topic: string,
    readonly partition: number,
    private readonly keys: KeyCodec,
    public next: number,
  ) {}

  seek(offset: number): void {
    this.next = offset
    this.release()
  }

  /**
   * Entirely synchronous inside (page-cache reads), so `seek` and `close` can never interleave with
   * a read half-way through.
   */
  async read(max: number): Promise<Message[]> {
    return this.readSync(max)
  }

  private readSync(max: number): Message[] {
    const out: Message[] = []
    if (this.closed) return out
    if (this.fh === undefined && !this.locate()) return out
    for (let hops = 0; out.length < max && hops < 64; hops++) {
      const fd = this.fh as number
      // Parse from the bytes already read when `pos` is inside them (a consumer reads a few hundred
      // messages at a time: re-reading 1 MiB for each would multiply the I/O).
      let fresh = false
      if (!(this.pos >= this.winPos && this.pos < this.winPos + this.winLen)) {
        // Synchronous: a page-cache read of at most 1 MiB costs less than a thread-pool round trip,
        // and it leaves no idle gap between chunks.
        this.winLen = readSync(fd, this.buf, 0, this.buf.length, this.pos)
        this.winPos = this.pos
        fresh = true
        if (this.winLen === 0) return out
      }
      const end = this.winLen
      let rel = this.pos - this.winPos
      let moved = false
      let switched = false
      let atEnd = false
      while (out.length < max) {
        const h = readFrameHeader(this.buf, rel, end)
        if (h === undefined || h === 'short') {
          if (h === 'short' && fresh && rel === 0 && end === this.buf.length) {
            // A frame larger than the buffer: grow and read again.
            this.buf = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.buf.readUInt32LE(4)))
            this.winLen = 0
            moved = true
          } else atEnd = true
          break
        }
        if (!frameCrcOk(this.buf, rel, h.length)) {
          const size = fstatSync(fd).size
          if (this.winPos + rel + h.length < size) {
            throw new TopicCorruptError(
              `Segment ${segmentPath(this.dir, this.segBase)} is corrupt at byte ${this.winPos + rel} (offset ${h.baseOffset}): CRC mismatch`,
            )
          }
          atEnd = true // a torn tail; the next writer truncates it
          break
        }
        if (h.flags & FLAG_SEAL) {
          this.openSegment(h.baseOffset, 0)
          moved = switched = true
          break
        }
        if (h.baseOffset + h.count > this.next) {
          const n = decodeBatch(this.buf, rel, h, this.topic, this.partition, this.keys, this.next, max - out.length, out)
          if (n > 0) this.next = (out[out.length - 1] as Message).offset + 1
          if (this.next < h.baseOffset + h.count) break // limit reached inside this frame
        }
        rel += h.length
        moved = true
      }
      if (this.fh === undefined) return out
      if (!switched) this.pos = this.winPos + rel
      if (atEnd) {
        // The window ends in an incomplete frame. Read again from here next time (more may have been
        // written); but if this window was just read and was short, that is the end of the data now.
        this.winLen = 0
        if (fresh && end < this.buf.length) return out
        if (!moved && fresh) return out
        continue
      }
      if (!moved) return out
    }
    return out
  }

  /** Find the segment and byte position for `next`; false when the segment does not exist yet. */
  private locate(): boolean {
    const start = readStartOffsetSync(this.dir)
    const bases = listSegmentsSync(this.dir, this.topic)
    if (bases.length === 0) return false
    if (this.next < start) this.next = start
    if (this.next < (bases[0] as number)) this.next = bases[0] as number
    const base = bases[segmentFor(bases, this.next)] as number
    return this.openSegment(base, -1)
  }

  /** Open segment `base` at byte `at` (-1: look up `next` in the sparse index). */
  private openSegment(base: number, at: number): boolean {
    this.release()
    let fd: number
    try {
      fd = openSync(segmentPath(this.dir, base), 'r')
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return false // sealed, successor not created yet
      throw backendError(`Cannot open segment ${segmentPath(this.dir, base)}`, e)
    }
    if (this.closed) {
      closeSync(fd)
      return false
    }
    this.fh = fd
    this.segBase = base
    this.pos = at >= 0 ? at : indexLookup(indexPath(this.dir, base), this.next, fstatSync(fd).size)
    return true
  }

  private release(): void {
    const fd = this.fh
    this.fh = undefined
    this.segBase = -1
    this.winLen = 0
    if (fd !== undefined) {
      try {
        closeSync(fd)
      } catch {
        /* already closed */
      }
    }
  }

  async close(): Promise<void> {
    this.closed = true
    this.release()
  }
}
