import type { Client } from './connection.js'
import { INCARNATIONS_FIELD, newIncarnationFrom, type RollbackNotice } from './incarnations.js'

/** A partition's end and incarnations as one look found them. */
export interface Look {
  end: number
  inc: string
}

/** What rollback detection keeps of a watched partition (decision 112). */
export interface Judged {
  /** Last offset seen (−1: none); undefined until the first look at the partition's end. */
  cursor: number | undefined
  /** The latest rollback found (readers take each once). */
  rollback: RollbackNotice | undefined
  /** The end and incarnations at the last look. */
  seen: Look | undefined
}

/**
 * The ends and incarnations of partitions, in one round trip: their `end` and producers-hash `~inc`
 * reads are written together (the partitions of one slot group share a slot on a Cluster, so they
 * all go to one node, back to back on its connection).
 */
export async function look(
  base: Client,
  parts: ReadonlyArray<{ endKey: string; producersKey: string }>,
): Promise<Look[]> {
  const replies = await Promise.all(
    parts.flatMap((w) => [base.get(w.endKey), base.hget(w.producersKey, INCARNATIONS_FIELD)]),
  )
  return parts.map((_, i) => {
    const end = replies[2 * i]
    const inc = replies[2 * i + 1]
    return { end: end === null || end === undefined ? 0 : Number(end), inc: inc ?? '' }
  })
}

/**
 * Compare a look with the one before. The log was rolled back from F when its end is below what
 * was seen, or when an incarnation not seen before starts below the end seen before (after a
 * broken connection: below what was received). On a rollback the partition's cursor goes back to
 * F, a notice is published, and true is returned (the entries just received are not taken).
 */
export function judge(w: Judged, now: Look, broken: boolean): boolean {
  const prev = w.seen
  w.seen = now
  if (prev === undefined) return false
  // What this watcher has seen; readers that read further themselves judge by their own offsets.
  const high = Math.max(prev.end, (w.cursor ?? -1) + 1)
  let from = now.end < high ? now.end : Infinity
  // Without a broken connection a new incarnation (a slot moved to another master) starts at or
  // above the end seen before; only a rollback puts it below what was received since.
  const fresh = newIncarnationFrom(prev.inc, now.inc)
  if (fresh !== undefined && fresh < (broken ? high : prev.end)) from = Math.min(from, fresh)
  if (from === Infinity) return false
  w.rollback = { seq: (w.rollback?.seq ?? 0) + 1, from }
  if (w.cursor !== undefined) w.cursor = Math.min(w.cursor, from - 1)
  return true
}
