/** The most source bytes one run spans (a file reader's read window is 1 MiB). */
const MAX_SPAN = 1 << 20

/**
 * Values that lie in ascending order in one source buffer (the records of a read window or a
 * Redis reply), gathered so that a body gets them with one copy of the span they lie in and then
 * an in-place move of each (`copyWithin`, no allocation): on Node 20 a `Buffer.copy` of part of a
 * buffer makes a view object per call, which cost more than copying 100 bytes.
 */
export class ValueRun {
  /** Pending values. */
  count = 0
  /** Their bytes. */
  bytes = 0
  private src: Buffer | undefined
  private from = 0
  private to = 0
  private readonly starts: number[] = []
  private readonly ends: number[] = []

  /**
   * Whether `buf[start, end)` can join the run: the same buffer, after the last value with at
   * least one byte between them (room for a separator when the values are moved together).
   */
  fits(buf: Buffer, start: number, end: number): boolean {
    return this.count === 0 || (buf === this.src && start > this.to && end - this.from <= MAX_SPAN)
  }

  add(buf: Buffer, start: number, end: number): void {
    if (this.count === 0) {
      this.src = buf
      this.from = start
    }
    this.starts[this.count] = start
    this.ends[this.count] = end
    this.count++
    this.to = end
    this.bytes += end - start
  }

  /**
   * Write the values into `dst` from `at`, `sep` (a byte, -1: none) before each one and also before
   * the first when `lead`; returns the position after them. `dst` needs room for the values and
   * separators; with room for the whole span they are copied together, else one by one.
   */
  flush(dst: Buffer, at: number, sep: number, lead: boolean): number {
    const src = this.src as Buffer
    const n = this.count
    const shift = lead && sep >= 0 ? 1 : 0
    const together = at + shift + (this.to - this.from) <= dst.length
    if (together) src.copy(dst, at + shift, this.from, this.to)
    let pos = at
    for (let i = 0; i < n; i++) {
      if (sep >= 0 && (i > 0 || lead)) dst[pos++] = sep
      const start = this.starts[i] as number
      const len = (this.ends[i] as number) - start
      if (!together) src.copy(dst, pos, start, start + len)
      else {
        // Never after where the value lies (the run's values have gaps at least as wide as a separator).
        const lies = at + shift + (start - this.from)
        if (lies !== pos) dst.copyWithin(pos, lies, lies + len)
      }
      pos += len
    }
    this.count = this.bytes = 0
    this.src = undefined
    return pos
  }
}
