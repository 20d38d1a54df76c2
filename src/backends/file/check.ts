import { closeSync, fstatSync, openSync, readSync } from 'node:fs'
import { RECORD_FIXED } from '../record-codec.js'
import { FLAG_SEAL, HEADER_BYTES, MAGIC, frameCrcOk, readFrameHeader, type FrameHeader } from './batch-format.js'
import { checkTopicName } from '../../core/names.js'
import { indexPath, partitionDir, segmentPath, startFile, timeIndexPath } from './layout.js'
import { READ_FLAGS } from './safe-fs.js'
import { INDEX_ENTRY_BYTES, readIndexEntries } from './segment-index.js'
import { listSegmentsSync, readStartOffsetSync } from './segment-list.js'
import { TimeIndexAudit } from './time-index-check.js'
import { readTopicMeta } from './topic-store.js'

/*
 * `twainmq check`: walk every frame of every segment of a partition (headers, CRCs, seals, offsets,
 * index entries, the trim mark) and describe what is damaged, precisely enough for `repair`
 * (repair.ts) to keep every intact frame and move only the damaged bytes aside.
 */

/** Damaged bytes of a segment, a bad index entry, or a damaged trim mark. */
export interface Damage {
  kind: 'frames' | 'index' | 'start'
  file: string
  /** Byte range [from, to) of `file`. */
  from: number
  to: number
  reason: string
  /**
   * Offsets whose records are lost there, [first, end); absent when none are. `end` undefined:
   * unknown, but below `bound` (as many records as the bytes could hold) when that is known.
   */
  offsets?: { first: number; end: number | undefined; bound?: number }
}

/** What the walk over one segment found. */
export interface SegmentCheck {
  base: number
  path: string
  size: number
  /** Byte ranges of whole valid frames (records, misplaced frames, a correct seal): what repair keeps. */
  keep: Array<[number, number]>
  damage: Damage[]
  /** A clean torn write starts here (the last segment only: a write in progress, or cut by the next append). */
  tornFrom?: number
  /** Start of bytes after the seal (misplaced writes that no reader reaches). */
  afterSeal?: number
  /** The segment ends with a seal naming the segment that follows it (or, if last, the one to create). */
  sealedTo?: number
  /** The segment a whole seal frame names, right or wrong (see `checkPartition` on merges' leftovers). */
  sealNames?: number
  /** It is not the last segment, and no correct seal ends it: repair appends one. */
  needsSeal: boolean
  /** The index has entries that do not point at a frame of the offset they name. */
  indexDamaged: boolean
  /** The time index has entries that do not hold (time-index-check.ts). */
  timeIndexDamaged: boolean
  records: number
  /** First record offset seen (undefined: none). */
  first: number | undefined
  /** Offset after the last record, or after the last known lost offset, whichever is later. */
  next: number
  /** Offset after the last intact record (what a writer would continue from). */
  keptEnd: number
  /** Offset after every offset that may have been used, lost records included (repair reserves up to it). */
  reserve: number
  /** Gaps between records frames (removed offsets: a compacted topic's, or a repair's). */
  gaps: number
  notes: string[]
}

/** What checking one partition found. */
export interface PartitionCheck {
  partition: number
  dir: string
  segments: SegmentCheck[]
  damage: Damage[]
  notes: string[]
  records: number
  first: number | undefined
  end: number
}

/** A frame seen by the walk, for callers that need every one (repair rebuilds the index from them). */
export type FrameVisitor = (position: number, h: FrameHeader, misplaced: boolean) => void

const CHUNK = 1 << 20
const MAGIC_BYTES = Buffer.alloc(4)
MAGIC_BYTES.writeUInt32LE(MAGIC, 0)

/** Random access to a segment's bytes through a window of at least 1 MiB. */
class Bytes {
  buf = Buffer.allocUnsafe(CHUNK)
  start = 0
  len = 0
  constructor(
    readonly fd: number,
    readonly size: number,
  ) {}

  /** Index in `buf` of byte `pos`, with [pos, min(pos + need, size)) loaded. */
  at(pos: number, need: number): number {
    const want = Math.min(need, this.size - pos)
    if (pos >= this.start && pos + want <= this.start + this.len) return pos - this.start
    const n = Math.min(Math.max(want, CHUNK), this.size - pos)
    if (this.buf.length < n) this.buf = Buffer.allocUnsafe(n)
    let got = 0
    while (got < n) {
      const r = readSync(this.fd, this.buf, got, n - got, pos + got)
      if (r === 0) break
      got += r
    }
    this.start = pos
    this.len = got
    return 0
  }

  /** The frame at `pos`: a header with whether its body CRC holds, or why there is none. */
  frame(pos: number): { h: FrameHeader; ok: boolean } | 'short' | 'bad' | undefined {
    let rel = this.at(pos, HEADER_BYTES)
    let h = readFrameHeader(this.buf, rel, this.len)
    if (h === 'short' && this.start + this.len < this.size) {
      // A valid header whose frame goes past the window: load the frame (or what the file has of it).
      rel = this.at(pos, this.buf.readUInt32LE(rel + 4))
      h = readFrameHeader(this.buf, rel, this.len)
    }
    return typeof h === 'object' ? { h, ok: frameCrcOk(this.buf, rel, h.length) } : h
  }

  /**
   * After damage at `from - 1`: the next position where a whole valid frame starts that can follow
   * offset `next` (not below it, not past the next segment's base): where the log resumes.
   */
  resync(from: number, next: number, following: number | undefined): { pos: number; base: number } | undefined {
    for (let pos = from; pos + HEADER_BYTES <= this.size;) {
      const rel = this.at(pos, CHUNK)
      const hit = this.buf.indexOf(MAGIC_BYTES, rel)
      if (hit < 0 || hit + 4 > this.len) {
        if (this.start + this.len >= this.size) return undefined
        pos = this.start + this.len - 3 // a magic number may straddle the window's end
        continue
      }
      const at = this.start + hit
      const f = this.frame(at)
      if (
        typeof f === 'object' &&
        f.ok &&
        f.h.baseOffset >= next &&
        (following === undefined || f.h.baseOffset + f.h.count <= following)
      ) {
        return { pos: at, base: f.h.baseOffset }
      }
      pos = at + 1
    }
    return undefined
  }
}

/**
 * Walk segment `base` of `dir` frame by frame. `following` is the base of the segment after it
 * (undefined for the last one). Every byte ends up kept (whole valid frames), damaged (with where
 * the log resumes, found by searching for the next valid frame), torn (the last segment's
 * unfinished write) or after the seal.
 */
export function checkSegment(
  dir: string,
  base: number,
  following: number | undefined,
  visit?: FrameVisitor,
  /** A compacted topic's segment: gaps are its removed records, counted (`gaps`), not noted one by one. */
  compacted = false,
): SegmentCheck {
  const path = segmentPath(dir, base)
  const fd = openSync(path, READ_FLAGS)
  try {
    const size = fstatSync(fd).size
    const seg: SegmentCheck = {
      base,
      path,
      size,
      keep: [],
      damage: [],
      needsSeal: false,
      indexDamaged: false,
      timeIndexDamaged: false,
      records: 0,
      first: undefined,
      next: base,
      keptEnd: base,
      reserve: base,
      gaps: 0,
      notes: [],
    }
    const entries = readIndexEntries(indexPath(dir, base), seg.notes)
    const times = new TimeIndexAudit(timeIndexPath(dir, base), seg.notes)
    const good = new Set<number>() // indexes of entries found pointing at their frame
    const at = new Map<number, number[]>()
    entries?.forEach(([, p], i) => at.set(p, [...(at.get(p) ?? []), i]))
    const b = new Bytes(fd, size)
    let pos = 0
    let keepFrom = 0
    const damage = (to: number, reason: string, offsets?: Damage['offsets']) => {
      if (pos > keepFrom) seg.keep.push([keepFrom, pos])
      seg.damage.push({ kind: 'frames', file: path, from: pos, to, reason, ...(offsets ? { offsets } : {}) })
      pos = keepFrom = to
    }
    while (pos < size) {
      const f = b.frame(pos)
      if (f === undefined) break
      if (typeof f === 'object' && f.ok) {
        const h = f.h
        if (h.flags & FLAG_SEAL) {
          seg.sealNames = h.baseOffset
          if (following !== undefined && h.baseOffset !== following) {
            damage(pos + h.length, `the seal names segment ${h.baseOffset}, but segment ${following} follows`)
            break
          }
          seg.sealedTo = h.baseOffset
          pos += h.length
          break
        }
        const misplaced = h.baseOffset < seg.next
        visit?.(pos, h, misplaced)
        times.frame(pos, h, misplaced)
        if (misplaced)
          seg.notes.push(
            `misplaced frame at byte ${pos} (offsets ${range(h.baseOffset, h.baseOffset + h.count)}, from a writer whose lock was broken; readers skip it)`,
          )
        else {
          if (h.baseOffset > seg.next) {
            seg.gaps++
            if (!compacted) seg.notes.push(`gap: offsets ${range(seg.next, h.baseOffset)} missing (before byte ${pos})`)
          }
          for (const i of at.get(pos) ?? []) if ((entries?.[i] as [number, number])[0] === h.baseOffset) good.add(i)
          if (h.count > 0) seg.first ??= h.baseOffset
          seg.records += h.count
          seg.next = seg.keptEnd = seg.reserve = h.baseOffset + h.count
        }
        pos += h.length
        continue
      }
      if (f === 'short' && following === undefined) {
        seg.tornFrom = pos
        seg.notes.push(
          `torn write: ${size - pos} bytes at byte ${pos} (a write in progress, or one the next append removes)`,
        )
        break
      }
      if (typeof f === 'object') {
        // The header checks out, so its length and offsets can be trusted: exactly this frame is lost.
        const real = !(f.h.flags & FLAG_SEAL) && f.h.baseOffset >= seg.next && f.h.count > 0
        const lost = real ? { first: f.h.baseOffset, end: f.h.baseOffset + f.h.count } : undefined
        damage(pos + f.h.length, `a ${f.h.flags & FLAG_SEAL ? 'seal ' : ''}frame fails its CRC check`, lost)
        if (lost && lost.end > seg.next) seg.next = seg.reserve = lost.end
        continue
      }
      const r = b.resync(pos + 1, seg.next, following)
      const end = r?.base ?? following
      const reason = f === 'bad' ? 'not a valid frame header' : 'an incomplete frame'
      // How many records were lost is unknown; no more than the bytes could hold (each has a header).
      const bound =
        end === undefined ? seg.next + Math.max(0, Math.floor((size - pos - HEADER_BYTES) / RECORD_FIXED)) : undefined
      if (bound !== undefined && bound > seg.reserve) seg.reserve = bound
      damage(
        r?.pos ?? size,
        r ? reason : `${reason} up to the end of the segment`,
        end === undefined || end > seg.next
          ? { first: seg.next, end, ...(bound === undefined ? {} : { bound }) }
          : undefined,
      )
    }
    if (pos > keepFrom) seg.keep.push([keepFrom, pos])
    if (pos < size && seg.tornFrom === undefined) seg.afterSeal = pos
    if (seg.afterSeal !== undefined)
      seg.notes.push(
        `${size - seg.afterSeal} bytes after the seal at byte ${seg.afterSeal} (misplaced writes; readers never reach them)`,
      )
    if (following !== undefined && seg.sealedTo === undefined) {
      seg.needsSeal = true
      const reachesEnd = seg.damage.some((d) => d.to === size)
      const reason = `the segment ends without its seal although segment ${following} follows (truncated?)`
      seg.damage.push({
        kind: 'frames',
        file: path,
        from: size,
        to: size,
        reason,
        ...(!reachesEnd && seg.next < following ? { offsets: { first: seg.next, end: following } } : {}),
      })
    }
    if (following === undefined && seg.sealedTo !== undefined)
      seg.notes.push(`sealed: segment ${seg.sealedTo} is not created yet (the next append creates it)`)
    entries?.forEach(([o, p], i) => {
      if (good.has(i)) return
      seg.indexDamaged = true
      const file = indexPath(dir, base)
      seg.damage.push({
        kind: 'index',
        file,
        from: i * INDEX_ENTRY_BYTES,
        to: (i + 1) * INDEX_ENTRY_BYTES,
        reason: `entry ${i} (offset ${o} at byte ${p}) does not point at a frame of that offset`,
      })
    })
    const badTimes = times.report()
    seg.damage.push(...badTimes)
    seg.timeIndexDamaged = badTimes.length > 0
    return seg
  } finally {
    closeSync(fd)
  }
}

/**
 * Check every segment of partition directory `dir`, and its trim mark. In a `compacted` topic's
 * partition, gaps between frames are the records compaction removed: one note counts them.
 */
export function checkPartition(dir: string, partition: number, topic: string, compacted = false): PartitionCheck {
  const bases = listSegmentsSync(dir, topic)
  const leftovers = new Set<number>()
  const notes: string[] = []
  const segments = bases.map((b, i) => {
    const following = bases[i + 1]
    const seg = checkSegment(dir, b, following, undefined, compacted)
    const to = seg.sealNames
    // A compaction merge killed between its rename and its deletions: this seal skips segments
    // that still hold their records (readers seeking there read them); the next pass deletes them.
    if (!compacted || following === undefined || to === undefined || to <= following || !bases.includes(to)) return seg
    for (const skipped of bases.filter((x) => x > b && x < to)) leftovers.add(skipped)
    notes.push(
      `segment ${b}'s seal skips segments ${following}..${to - 1}: left over from a compaction merge (the next pass deletes them)`,
    )
    return checkSegment(dir, b, to, undefined, compacted)
  })
  const counted = segments.filter((s) => !leftovers.has(s.base))
  const last = segments[segments.length - 1]
  const r: PartitionCheck = {
    partition,
    dir,
    segments,
    damage: segments.flatMap((s) => s.damage),
    notes: [...segments.flatMap((s) => s.notes), ...notes],
    records: counted.reduce((n, s) => n + s.records, 0),
    first: counted.find((s) => s.first !== undefined)?.first,
    end: last ? Math.max(last.next, last.sealedTo ?? 0) : 0,
  }
  if (bases.length === 0) r.notes.push('no segments (the next append creates the first)')
  const gaps = counted.reduce((n, s) => n + s.gaps, 0)
  if (compacted && gaps > 0)
    r.notes.push(
      `${gaps} ${gaps === 1 ? 'gap' : 'gaps'} of removed offsets (a compacted topic: older records of their keys)`,
    )
  let start: number | undefined
  try {
    start = readStartOffsetSync(dir)
  } catch (e) {
    r.damage.push({ kind: 'start', file: startFile(dir), from: 0, to: 0, reason: (e as Error).message })
  }
  if (start !== undefined && start > r.end) {
    r.damage.push({
      kind: 'start',
      file: startFile(dir),
      from: 0,
      to: 0,
      reason: `the trim mark ${start} is past the end ${r.end} of the partition`,
    })
  }
  return r
}

/** Check every partition of native topic `topic` under `root`. */
export async function checkTopic(root: string, topic: string): Promise<PartitionCheck[]> {
  const meta = await readTopicMeta(root, checkTopicName(topic))
  return Array.from({ length: meta.partitions }, (_, p) =>
    checkPartition(partitionDir(root, topic, p), p, topic, meta.compact === true),
  )
}

/** `a..b` for the offsets [a, b) (inclusive on print), `a` for one. */
export function range(first: number, end: number): string {
  return end - first === 1 ? String(first) : `${first}..${end - 1}`
}

/** A damaged range for messages: why, and which offsets it held. */
export function describeDamage(d: Damage): string {
  if (!d.offsets) return d.reason
  const { first, end } = d.offsets
  const unknown = d.offsets.bound === undefined ? 'end unknown' : `end unknown, below ${d.offsets.bound}`
  return `${d.reason}; offsets ${end === undefined ? `from ${first} (${unknown})` : range(first, end)}`
}
