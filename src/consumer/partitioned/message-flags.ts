import { GroupMessageImpl } from '../group-message.js'

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
