import { GroupMessageImpl } from '../group-message.js'
import type { OwnedPartition } from './owned-partition.js'

/**
 * Where a partitioned-mode message was fetched (its handle): one object for the messages of one
 * read. Whether a message is settled or delivered is in its flags (below).
 */
export interface PartitionHandle {
  readonly part: OwnedPartition
  readonly generation: number
}

/** A message of a partitioned group. */
export type PartitionMessage<V> = GroupMessageImpl<V, PartitionHandle>

/** Acked or termed: no further settlement counts. */
export const SETTLED = 1
/** Handed to the application and not settled. */
export const DELIVERED = 2

type AnyMessage = GroupMessageImpl<unknown, unknown>

/** The message was acked or termed (no further settlement counts). */
export const isSettled = (m: AnyMessage): boolean => (GroupMessageImpl.flags(m) & SETTLED) !== 0

/** The message is handed to the application and not settled. */
export const isDelivered = (m: AnyMessage): boolean => (GroupMessageImpl.flags(m) & DELIVERED) !== 0

function setFlag(m: AnyMessage, flag: number, on: boolean): void {
  const f = GroupMessageImpl.flags(m)
  GroupMessageImpl.setFlags(m, on ? f | flag : f & ~flag)
}

export const setSettled = (m: AnyMessage, on: boolean): void => setFlag(m, SETTLED, on)

export const setDelivered = (m: AnyMessage, on: boolean): void => setFlag(m, DELIVERED, on)

/** Whether a message's partition is still this member's, in the generation it was read in. */
export function current(h: PartitionHandle): boolean {
  return !h.part.lost && !h.part.dropped && h.generation === h.part.generation
}
