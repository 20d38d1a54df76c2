import { fstatSync, readFileSync, readdirSync } from 'node:fs'
import { readdir } from 'node:fs/promises'
import { TopicCorruptError, TopicNotFoundError, backendError } from '../../core/errors.js'
import { segmentBase, startFile } from './layout.js'

/*
 * What a partition directory lists: its segments (by base offset) and its trim mark. Shared by the
 * reader, the writers' span helpers and `twainmq check`/`repair`.
 */

/** Sorted base offsets of a partition's segments. */
export async function listSegments(dir: string, topic: string): Promise<number[]> {
  let names: string[]
  try {
    names = await readdir(dir)
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT')
      throw new TopicNotFoundError(`Topic "${topic}" does not exist (no ${dir})`)
    throw backendError(`Cannot list ${dir}`, e)
  }
  return basesOf(names)
}

/** Sorted base offsets of a partition's segments, synchronously. */
export function listSegmentsSync(dir: string, topic: string): number[] {
  return basesOf(listPartitionSync(dir, topic))
}

/** The names in a partition directory (`TopicNotFoundError` when it is gone). */
export function listPartitionSync(dir: string, topic: string): string[] {
  try {
    return readdirSync(dir)
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT')
      throw new TopicNotFoundError(`Topic "${topic}" does not exist (no ${dir})`)
    throw backendError(`Cannot list ${dir}`, e)
  }
}

/** Sorted base offsets of the segments among `names`. */
export function basesOf(names: string[]): number[] {
  const bases: number[] = []
  for (const n of names) {
    const b = segmentBase(n)
    if (b !== undefined) bases.push(b)
  }
  return bases.sort((a, b) => a - b)
}

/** The trim mark: 0 when absent; damage is reported, never read as "nothing trimmed". */
export function readStartOffsetSync(dir: string): number {
  let text: string
  try {
    text = readFileSync(startFile(dir), 'utf8')
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return 0
    throw backendError(`Cannot read ${startFile(dir)}`, e)
  }
  const n = Number(text.trim())
  if (text.trim() === '' || !Number.isSafeInteger(n) || n < 0) {
    throw new TopicCorruptError(
      `Start mark ${startFile(dir)} is damaged: ${JSON.stringify(text.slice(0, 40))} is not an offset`,
      { file: startFile(dir) },
    )
  }
  return n
}

/**
 * Where a reader wanting `offset` starts: that offset, or the partition's start when it was trimmed
 * away, in the segment holding it. Undefined when the partition has no segment yet.
 */
export function retainedPosition(
  dir: string,
  topic: string,
  offset: number,
): { offset: number; base: number } | undefined {
  const start = readStartOffsetSync(dir)
  const bases = listSegmentsSync(dir, topic)
  if (bases.length === 0) return undefined
  const at = Math.max(offset, start, bases[0] as number)
  return { offset: at, base: bases[segmentFor(bases, at)] as number }
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
 * What it means that segment `base` of `dir` (open as `fd`) was seen to end at byte `seen` with no
 * whole frame after byte `pos`: undefined when that is a clean end (the partition's last segment:
 * a write in progress, or a torn write the next writer cuts), 'grew' when bytes arrived since (read
 * again), else why it is damage: a segment followed by another must end with its seal, and no
 * segment may shrink below what was read.
 */
export function segmentEndFault(
  dir: string,
  topic: string,
  base: number,
  fd: number,
  pos: number,
  seen: number,
): string | 'grew' | undefined {
  const size = fstatSync(fd).size
  if (size > seen) return 'grew'
  if (size < pos) return `the segment shrank to ${size} bytes, below byte ${pos} already read`
  let bases: number[]
  try {
    bases = listSegmentsSync(dir, topic)
  } catch {
    return undefined // the partition is gone (topic deleted): other calls report that
  }
  const following = bases.find((b) => b > base)
  if (following === undefined) return undefined
  // Writers seal a segment before they create its successor: the seal may have landed since.
  if (fstatSync(fd).size > seen) return 'grew'
  return `the segment ends ${seen > pos ? 'in an incomplete frame' : 'without its seal frame'} although segment ${following} follows it (truncated?)`
}
