import { closeSync, existsSync, fstatSync, fsyncSync, futimesSync, openSync, renameSync, unlinkSync } from 'node:fs'
import { FLAG_SEAL, HEADER_BYTES, frameIdAt, sealFrame } from './batch-format.js'
import { indexPath, segmentPath, timeIndexPath } from './layout.js'
import { CREATE_FLAGS, tempBeside, writeAll } from './safe-fs.js'
import { INDEX_INTERVAL_BYTES, encodeIndexEntry } from './segment-index.js'
import { forEachRecord, walkFrames, type SegmentFrame, type StoredRecord } from './segment-records.js'
import { encodeTimeEntry } from './time-index.js'

/*
 * The compacted copy of one sealed segment (compaction.ts, step 3). Its frames keep their records'
 * bytes and offsets: a frame whose records all stay is copied as it is; of the others, each run of
 * consecutive offsets that stays becomes a frame of its own (same producer id, same timestamp base,
 * so the records' bytes are copied unchanged), the offsets between runs become gaps, which readers
 * step over (a frame's records have consecutive offsets; frames may leave gaps between them).
 * Frames that reserve offsets (no records) and the seal are copied; misplaced frames are dropped.
 */

/** A compacted copy written and synced beside its segment, not yet in place. */
export interface SegmentRewrite {
  records: number
  bytes: number
  /** Rename the copy and its indexes over the segment's (the caller holds the lock). */
  install(): void
  /** Remove the temporary files. */
  discard(): void
}

/**
 * Write the compacted copy of sealed segment `base` (open as `fd`, holding `records` records at or
 * past the start) keeping the records `keep` accepts; undefined when it would keep them all and the
 * segment has its index (nothing to gain).
 */
export function rewriteSegment(
  dir: string,
  base: number,
  fd: number,
  keep: (r: StoredRecord) => boolean,
  records: number,
): SegmentRewrite | undefined {
  const st = fstatSync(fd)
  let kept = 0
  walkFrames(fd, st.size, (f) => {
    if (!(f.h.flags & FLAG_SEAL)) forEachRecord(f, (r) => void (keep(r) && kept++))
  })
  if (kept === records && existsSync(indexPath(dir, base))) return undefined
  const path = segmentPath(dir, base)
  const temps = [tempBeside(path, 'compact'), tempBeside(indexPath(dir, base), 'compact')]
  temps.push(tempBeside(timeIndexPath(dir, base), 'compact'))
  const discard = () => {
    for (const t of temps) {
      try {
        unlinkSync(t)
      } catch {
        /* not created, or renamed */
      }
    }
  }
  try {
    const out = openSync(temps[0] as string, CREATE_FLAGS, 0o644)
    let w: FrameWriter
    try {
      w = new FrameWriter(out)
      let prevEnd = -1
      walkFrames(fd, st.size, (f) => {
        if (f.h.flags & FLAG_SEAL || f.h.count === 0) return w.write(f.buf.subarray(f.rel, f.rel + f.h.length), f.h)
        if (f.h.baseOffset < prevEnd) return // misplaced: readers skip it
        prevEnd = f.h.baseOffset + f.h.count
        copyKept(f, keep, w)
      })
      // Its modification time is the time of its last append (a tombstone's retention counts from it).
      futimesSync(out, st.atime, st.mtime)
      fsyncSync(out)
    } finally {
      closeSync(out)
    }
    writeSynced(temps[1] as string, Buffer.concat(w.entries))
    writeSynced(temps[2] as string, Buffer.concat(w.times))
    return {
      records: w.records,
      bytes: w.position,
      install: () => {
        renameSync(temps[0] as string, path)
        renameSync(temps[1] as string, indexPath(dir, base))
        renameSync(temps[2] as string, timeIndexPath(dir, base))
      },
      discard,
    }
  } catch (e) {
    discard()
    throw e
  }
}

/** Write the records of frame `f` that `keep` accepts: the whole frame when all stay, else a frame per run of consecutive offsets. */
function copyKept(f: SegmentFrame, keep: (r: StoredRecord) => boolean, w: FrameWriter): void {
  const runs: Array<{ first: number; count: number; start: number; end: number; max: number }> = []
  let all = true
  forEachRecord(f, (r) => {
    if (!keep(r)) {
      all = false
      return
    }
    const run = runs[runs.length - 1]
    if (run !== undefined && run.first + run.count === r.offset) {
      run.count++
      run.end = r.end
      if (r.timestamp > run.max) run.max = r.timestamp
    } else runs.push({ first: r.offset, count: 1, start: r.start, end: r.end, max: r.timestamp })
  })
  if (all) return w.write(f.buf.subarray(f.rel, f.rel + f.h.length), f.h)
  const pid = f.buf.subarray(f.rel + f.h.headerBytes, f.rel + f.h.headerBytes + f.h.producerIdLength)
  for (const run of runs) {
    const frame = Buffer.allocUnsafe(HEADER_BYTES + pid.length + run.end - run.start)
    pid.copy(frame, HEADER_BYTES)
    f.buf.copy(frame, HEADER_BYTES + pid.length, run.start, run.end)
    // The records' timestamps are deltas from the frame's first timestamp: the new frame keeps it.
    sealFrame(frame, 0, pid.length, run.first, run.count, f.h.firstTimestamp, run.max)
    w.write(frame, { baseOffset: run.first, count: run.count, maxTimestamp: run.max })
  }
}

/** Appends frames to a copy, building its sparse and time indexes as the writers do. */
export class FrameWriter {
  position = 0
  records = 0
  readonly entries: Buffer[] = []
  readonly times: Buffer[] = []
  private prevStart = -1
  private max = -Infinity

  constructor(private readonly fd: number) {}

  write(frame: Buffer, h: { baseOffset: number; count: number; maxTimestamp: number }): void {
    const pos = this.position
    // The writers' rule: the first records frame, then the first frame starting in each new 64 KiB.
    if (
      h.count > 0 &&
      (this.entries.length === 0 ||
        Math.floor(this.prevStart / INDEX_INTERVAL_BYTES) < Math.floor(pos / INDEX_INTERVAL_BYTES))
    ) {
      if (pos > 0)
        this.times.push(
          encodeTimeEntry({ offset: h.baseOffset, position: pos, maxBefore: this.max, frameId: frameIdAt(frame, 0) }),
        )
      this.entries.push(encodeIndexEntry(h.baseOffset, pos))
    }
    if (h.count > 0 && h.maxTimestamp > this.max) this.max = h.maxTimestamp
    this.prevStart = pos
    writeAll(this.fd, frame, 0, frame.length, null)
    this.position += frame.length
    this.records += h.count
  }
}

/** Create `path` with `data`, synced. */
export function writeSynced(path: string, data: Buffer): void {
  const fd = openSync(path, CREATE_FLAGS, 0o644)
  try {
    writeAll(fd, data, 0, data.length, null)
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}
