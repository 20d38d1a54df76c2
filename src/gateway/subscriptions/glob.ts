/**
 * A subscription's `pattern` (Durable Streams subscriptions): stream paths of segments split by
 * `/`, where a `*` segment matches exactly one segment, `**` any number of them (none too), and
 * any other segment itself (`%2A` in it stands for a literal `*`).
 */
export function globMatch(pattern: string, path: string): boolean {
  return matchFrom(segmentsOf(pattern), 0, segmentsOf(path), 0)
}

/** The non-empty segments of a path (leading, trailing and doubled `/` ignored). */
export function segmentsOf(path: string): string[] {
  return path.split('/').filter((s) => s.length > 0)
}

function matchFrom(pattern: readonly string[], p: number, path: readonly string[], s: number): boolean {
  for (; p < pattern.length; p++, s++) {
    const seg = pattern[p] as string
    if (seg === '**') {
      for (let skip = s; skip <= path.length; skip++) if (matchFrom(pattern, p + 1, path, skip)) return true
      return false
    }
    if (s >= path.length) return false
    if (seg !== '*' && seg.replace(/%2a/gi, '*') !== path[s]) return false
  }
  return s === path.length
}
