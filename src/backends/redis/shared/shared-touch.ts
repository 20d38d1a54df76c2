import type { EntryRef } from '../../shared.js'
import { redisError } from '../connection.js'
import type { Scripts } from '../scripts.js'
import { idOf, offsetsOf } from '../entry-codec.js'
import type { MemberPartition } from './shared-entries.js'

/** Entries per refresh script call. */
const TOUCH_BATCH = 1000

/**
 * Refresh what a shared member holds of one partition (the `shared-touch` script: XCLAIM to itself,
 * JUSTID), the entries not refreshed since `stale` (every one with `Infinity`), so others cannot
 * claim them while it works. Returns the entries it turned out to have lost to another member;
 * entries trimmed while held are dropped (the member has their data). A failed call is reported
 * through `onError` and the rest go on.
 */
export async function refreshHeld(
  scripts: Scripts,
  group: string,
  name: string,
  p: MemberPartition,
  stale: number,
  now: number,
  onError: (e: Error) => void,
): Promise<EntryRef[]> {
  const lost: EntryRef[] = []
  const offsets: number[] = []
  for (const [o, h] of p.held) if (!h.acked && !h.given && h.refreshed <= stale) offsets.push(o)
  for (let i = 0; i < offsets.length; i += TOUCH_BATCH) {
    const chunk = offsets.slice(i, i + TOUCH_BATCH)
    try {
      const [gone, trimmed] = await scripts.call('shared-touch', [p.key], [group, name, ...chunk.map(idOf)])
      for (const o of chunk) {
        const h = p.held.get(o)
        if (h) h.refreshed = now
      }
      for (const o of offsetsOf(gone)) {
        const h = p.held.get(o)
        if (!h || h.acked || h.given) continue // acknowledged or given back meanwhile
        p.held.delete(o)
        lost.push(p.ref(o))
      }
      for (const o of offsetsOf(trimmed)) p.held.delete(o)
    } catch (e) {
      onError(
        redisError(
          `Shared group "${group}": refresh of ${chunk.length} held entries of "${p.topic}" partition ${p.partition} failed`,
          e,
        ),
      )
    }
  }
  return lost
}
