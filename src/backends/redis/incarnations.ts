/**
 * Rollback detection for Redis partitions (decision 112). The append script keeps, in the
 * partition's producers hash under `~inc`, the partition's incarnations: `<run id>:<first offset>`
 * for each server process (12 hex digits of its `run_id`) that appended to it, oldest first, the last
 * 16. A server restored from an older snapshot, or a replica promoted before it had everything,
 * brings back an older list and the older end; its first append adds its own incarnation at that
 * end. So a reader that remembers the list and the offsets it has seen can tell: where the list now
 * differs from the one it saw, the log was rebuilt from that incarnation's first offset on; and an
 * end below what it has seen is a rollback with no appends since.
 */

/** A partition's incarnations as the append script stores them (`''` or absent: none yet). */
export type Incarnations = string

/** The producers-hash field that holds them. */
export const INCARNATIONS_FIELD = '~inc'

interface Incarnation {
  id: string
  first: number
}

function parse(list: Incarnations | null | undefined): Incarnation[] {
  if (!list) return []
  return list.split(' ').map((s) => {
    const i = s.lastIndexOf(':')
    return { id: s, first: Number(s.slice(i + 1)) }
  })
}

/**
 * The first offset of the oldest incarnation in `now` that is not in `seen` (the log from there on
 * was written after the reader last looked), or `undefined` when `now` only extends `seen`.
 */
export function newIncarnationFrom(seen: Incarnations | undefined, now: Incarnations | null): number | undefined {
  const a = parse(seen)
  const b = parse(now)
  if (b.length === 0) return undefined
  // Align on the oldest incarnation still listed (the list keeps the last 16).
  const k = a.findIndex((x) => x.id === (b[0] as Incarnation).id)
  if (k < 0) return (b[0] as Incarnation).first
  for (let i = 0; i < b.length; i++) {
    const x = a[k + i]
    if (x === undefined || x.id !== (b[i] as Incarnation).id) return (b[i] as Incarnation).first
  }
  return undefined
}

/** A rollback a partition watcher found: readers that had read past `from` start again there. */
export interface RollbackNotice {
  /** Counts the notices of the partition (a reader takes each once). */
  seq: number
  from: number
}
