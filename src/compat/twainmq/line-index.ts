import { closeSync, fstatSync, openSync, readSync } from 'node:fs'
import { backendError } from '../../core/errors.js'

/** A byte position is remembered for every this many lines. */
const STEP = 1024
const CHUNK = 1 << 20

/**
 * What is known about one chunk file: its complete lines and where every STEP-th line starts.
 * Chunk files only grow, so the index is brought up to date by scanning only the bytes appended
 * since the last look (TwainMQ re-reads whole files with `readlines()` instead). A file that shrank
 * or was replaced (another inode) is scanned again from the start.
 */
export class LineIndex {
  private ino = -1
  /** Bytes scanned. */
  size = 0
  /** Complete (`\n`-terminated) lines in the scanned bytes. */
  lines = 0
  /** Byte position just after the last `\n` (the end of the complete lines). */
  completeEnd = 0
  /** marks[k] = byte position where line k * STEP starts. */
  private marks: number[] = [0]

  constructor(readonly path: string) {}

  /** Whether the file ends in a line without its `\n` (a write in progress, or a torn line). */
  get partialTail(): boolean {
    return this.size > this.completeEnd
  }

  /** Scan what was appended since the last call, through `fd` if given (else the file is opened). Returns this. */
  refresh(fd?: number): this {
    const own = fd === undefined
    let h: number
    try {
      h = own ? openSync(this.path, 'r') : fd
    } catch (e) {
      throw backendError(`Cannot open ${this.path}`, e)
    }
    try {
      const st = fstatSync(h)
      if (st.ino !== this.ino || st.size < this.size) this.reset(st.ino)
      if (st.size > this.size) this.scan(h, st.size)
    } finally {
      if (own) closeSync(h)
    }
    return this
  }

  /**
   * Account for `data` just appended at byte `at` by us, without reading it back. Ignored unless
   * the index is complete up to `at` (then the next `refresh` reads whatever it lacks).
   */
  appended(data: Uint8Array, at: number): void {
    if (at !== this.size) return
    let i = data.indexOf(10)
    while (i >= 0) {
      this.lines++
      this.completeEnd = at + i + 1
      if (this.lines % STEP === 0) this.marks.push(this.completeEnd)
      i = data.indexOf(10, i + 1)
    }
    this.size = at + data.length
  }

  private reset(ino: number): void {
    this.ino = ino
    this.size = 0
    this.lines = 0
    this.completeEnd = 0
    this.marks = [0]
  }

  private scan(fd: number, to: number): void {
    const buf = Buffer.allocUnsafe(Math.min(CHUNK, to - this.size))
    while (this.size < to) {
      const n = readSync(fd, buf, 0, Math.min(buf.length, to - this.size), this.size)
      if (n <= 0) break
      let i = buf.indexOf(10)
      while (i >= 0 && i < n) {
        this.lines++
        this.completeEnd = this.size + i + 1
        if (this.lines % STEP === 0) this.marks.push(this.completeEnd)
        i = buf.indexOf(10, i + 1)
      }
      this.size += n
    }
  }

  /**
   * Byte position where line `k` (0-based, `k <= lines`) starts, reading from the nearest mark with
   * `fd`. Line `lines` starts at `completeEnd`.
   */
  positionOf(k: number, fd: number): number {
    if (k >= this.lines) return this.completeEnd
    const m = Math.floor(k / STEP)
    let pos = this.marks[m] as number
    let line = m * STEP
    if (line === k) return pos
    const buf = Buffer.allocUnsafe(64 * 1024)
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, pos)
      if (n <= 0) return this.completeEnd
      let i = buf.indexOf(10)
      while (i >= 0 && i < n) {
        line++
        if (line === k) return pos + i + 1
        i = buf.indexOf(10, i + 1)
      }
      pos += n
    }
  }
}

/** Line indexes of chunk files, shared by a store's readers and appenders. */
export class LineIndexCache {
  private readonly map = new Map<string, LineIndex>()

  get(path: string): LineIndex {
    let i = this.map.get(path)
    if (!i) this.map.set(path, (i = new LineIndex(path)))
    return i
  }

  /** Drop the indexes of files under `dir` (a deleted topic). */
  forget(dir: string): void {
    for (const p of this.map.keys()) if (p.startsWith(dir + '/') || p.startsWith(dir + '\\')) this.map.delete(p)
  }
}
