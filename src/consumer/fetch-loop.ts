import type { Wake } from '../stream/wake.js'

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

/** What the fetch loop watches: its member's state and demand, and the ledger's count. */
export interface FetchingMember {
  readonly state: 'running' | 'closing' | 'closed'
  /** Something wants messages (an iteration, or `poll()` was called). */
  readonly demand: boolean
  /** Room to fetch may have appeared (a settlement at the refill mark, a watch, a seek, the shutdown). */
  readonly fetchWake: Wake
  readonly opts: { readonly maxInFlight: number }
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
 * whenever something wants messages and the refill rule allows, asleep on `fetchWake` otherwise.
 */
export async function fetchLoop(member: FetchingMember, reads: FetchRounds): Promise<void> {
  const max = member.opts.maxInFlight
  while (member.state === 'running') {
    member.fetchWake.take()
    // Nothing reads until an iteration or poll() wants messages, and until the refill mark is free.
    if (!member.demand || !mayRefill(max, reads.outstanding)) {
      await member.fetchWake.next()
      continue
    }
    if (!(await reads.round())) await member.fetchWake.next() // the shutdown wakes it too
  }
}
