import type { Wake } from '../stream/wake.js'
import { StallWatch, type WatchedMember } from './stall-watch.js'

/**
 * The refill rule of both modes: a member reads again once this much of `maxInFlight` is free,
 * not one message per settlement, and settlements wake its fetch loop only then. Half: each read
 * asks for about half of `maxInFlight` (500 by default), so the per-read costs (a `stat` of the
 * trim mark per file read, a round trip per Redis read) are paid half as often as with a quarter,
 * while at least half of `maxInFlight` is still buffered or in flight when a refill starts
 * (decision 166; the shared mode, which refilled at a quarter, follows it since both modes run
 * this loop).
 */
export function refillAt(maxInFlight: number): number {
  return Math.max(1, Math.floor(maxInFlight / 2))
}

/** Whether a member holding `outstanding` messages may read (the refill rule). */
export function mayRefill(maxInFlight: number, outstanding: number): boolean {
  return maxInFlight - outstanding >= refillAt(maxInFlight)
}

/** What the fetch loop watches: its member's state and demand, and the ledger's count (and what its stall watch needs). */
export interface FetchingMember extends WatchedMember {
  /** Something wants messages (an iteration, or `poll()` was called). */
  readonly demand: boolean
  /** Room to fetch may have appeared (a settlement at the refill mark, a watch, a seek, the shutdown). */
  readonly fetchWake: Wake
}

/** A mode's reads: one round of them, whenever the member may read. */
export interface FetchRounds {
  /** Messages fetched and not settled (bounded by `maxInFlight`). */
  readonly outstanding: number
  /**
   * Read what there is room for into the ledger. True to go round again at once (something was
   * read, or the read itself waited); false to sleep until the next wake.
   */
  round(): Promise<boolean>
}

/**
 * The fetch loop of both modes (kafkajs's runner): demand-driven, one round of the mode's reads
 * whenever something wants messages and the refill rule allows, asleep on `fetchWake` otherwise
 * (settlements at the refill mark, the application starting to wait, a watch, a seek and the
 * shutdown wake it). Its rounds are what the member's stall watch (`stall-watch.ts`) follows.
 */
export async function fetchLoop(member: FetchingMember, reads: FetchRounds): Promise<void> {
  const max = member.opts.maxInFlight
  const stall = new StallWatch(member, () => reads.outstanding)
  try {
    while (member.state === 'running') {
      member.fetchWake.take()
      // Nothing reads until an iteration or poll() wants messages, and until the refill mark is
      // free, unless the application waits for messages: then whatever room there is is read (a
      // round's reads are capped, so a refill may stop short of `maxInFlight` with less than the
      // mark free). So a member that stops short of `maxInFlight` is one the application is not
      // waiting on, and a stall shows as one; a busy application's member reads in pieces of half
      // of `maxInFlight`, not a few messages whenever a few were settled (decision 223).
      const outstanding = reads.outstanding
      const paced = member.views.waitingSince === undefined && !mayRefill(max, outstanding)
      if (!member.demand || outstanding >= max || paced) {
        await member.fetchWake.next()
        continue
      }
      stall.roundStarted()
      const more = await reads.round()
      stall.roundEnded()
      if (!more) await member.fetchWake.next() // the shutdown wakes it too
    }
  } finally {
    stall.stop()
  }
}
