/**
 * The open windows of one input partition by end time (rebuilt from the state when the partition's
 * state is restored or rewound), so the windows a watermark passes are found without a scan.
 */
export class WindowIndex {
  /** Ends with open windows, ascending. */
  private readonly ends: number[] = []
  private readonly byEnd = new Map<number, Set<string>>()

  add(end: number, stateKey: string): void {
    let keys = this.byEnd.get(end)
    if (keys === undefined) {
      this.byEnd.set(end, (keys = new Set()))
      let lo = 0
      let hi = this.ends.length
      while (lo < hi) {
        const mid = (lo + hi) >> 1
        if ((this.ends[mid] as number) < end) lo = mid + 1
        else hi = mid
      }
      this.ends.splice(lo, 0, end)
    }
    keys.add(stateKey)
  }

  /** The state keys of the windows ending at or before `watermark`, taken out: by end, then key. */
  takeUpTo(watermark: number): Array<{ end: number; key: string }> {
    const out: Array<{ end: number; key: string }> = []
    let n = 0
    while (n < this.ends.length && (this.ends[n] as number) <= watermark) {
      const end = this.ends[n] as number
      const keys = [...(this.byEnd.get(end) as Set<string>)].sort()
      for (const key of keys) out.push({ end, key })
      this.byEnd.delete(end)
      n++
    }
    if (n > 0) this.ends.splice(0, n)
    return out
  }

  get size(): number {
    let n = 0
    for (const s of this.byEnd.values()) n += s.size
    return n
  }
}
