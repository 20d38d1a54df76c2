/** What `takeUpTo` gives when it takes nothing (never written to). */
const NONE: Array<{ end: number; key: string }> = []

/**
 * The open windows of one input partition by the watermark that closes them (rebuilt from the
 * state when the partition's state is restored or rewound), so the windows a watermark passes are
 * found without a scan. An entry is a state key and the watermark that closes it (a key of
 * sessions is listed once per session). What it holds is a function of the state alone, so a
 * message processed again closes the same windows in the same order.
 */
export class WindowIndex {
  /** Times with entries, ascending. */
  private readonly ends: number[] = []
  private readonly byEnd = new Map<number, Set<string>>()

  add(end: number, stateKey: string): void {
    let keys = this.byEnd.get(end)
    if (keys === undefined) {
      this.byEnd.set(end, (keys = new Set()))
      this.ends.splice(this.at(end), 0, end)
    }
    keys.add(stateKey)
  }

  /** Remove one entry (a session that grew or merged). */
  remove(end: number, stateKey: string): void {
    const keys = this.byEnd.get(end)
    if (keys === undefined || !keys.delete(stateKey) || keys.size > 0) return
    this.byEnd.delete(end)
    this.ends.splice(this.at(end), 1)
  }

  /** Where `end` is, or goes, in `ends` (binary search). */
  private at(end: number): number {
    let lo = 0
    let hi = this.ends.length
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if ((this.ends[mid] as number) < end) lo = mid + 1
      else hi = mid
    }
    return lo
  }

  /** The entries at or before `watermark` (with `below`, before it), at most `limit` of them, taken out: by time, then key. */
  takeUpTo(watermark: number, limit = Infinity, below = false): Array<{ end: number; key: string }> {
    const first = this.ends[0]
    // Most calls (one per message) find nothing: no array made for them.
    if (first === undefined || (below ? first >= watermark : first > watermark) || limit <= 0) return NONE
    const out: Array<{ end: number; key: string }> = []
    let n = 0
    while (n < this.ends.length && out.length < limit) {
      const end = this.ends[n] as number
      if (below ? end >= watermark : end > watermark) break
      const set = this.byEnd.get(end) as Set<string>
      const keys = [...set].sort()
      const taken = keys.slice(0, limit - out.length)
      for (const key of taken) out.push({ end, key })
      if (taken.length < keys.length) {
        for (const key of taken) set.delete(key)
        break
      }
      this.byEnd.delete(end)
      n++
    }
    if (n > 0) this.ends.splice(0, n)
    return out
  }

  /** The earliest time with an entry (Infinity: none). */
  get first(): number {
    return this.ends[0] ?? Infinity
  }

  get size(): number {
    let n = 0
    for (const s of this.byEnd.values()) n += s.size
    return n
  }
}
