import type { EntryRef } from '../../backends/shared.js'
import type { Message } from '../../core/types.js'
import { GroupMessageImpl, type Settler } from '../group-message.js'

/**
 * Where a shared-mode message stands: `buffered` (fetched, not handed out), `delivered` (handed out,
 * not settled), `waiting` (nacked, re-delivered later), `terming` (dead-letter write under way),
 * `settled` (acked or termed), `lost` (another member claimed it, or it was trimmed), `given`
 * (handed back to the group unprocessed at close).
 */
export type SharedState = 'buffered' | 'delivered' | 'waiting' | 'terming' | 'settled' | 'lost' | 'given'

/** What a shared-mode member keeps on a message. */
export interface SharedHandle {
  state: SharedState
}

/** A message of a shared group: a `GroupMessage` whose `deliveryCount` is Redis's. */
export type SharedMessage<V> = GroupMessageImpl<V, SharedHandle>

/** A fetched message, `buffered`. */
export const sharedMessage = <V>(m: Message, deliveryCount: number, settler: Settler<SharedHandle>): SharedMessage<V> =>
  GroupMessageImpl.from<V, SharedHandle>(m, deliveryCount, settler, { state: 'buffered' })

export const state = (m: SharedMessage<unknown>): SharedState => GroupMessageImpl.handle(m).state

export const setState = (m: SharedMessage<unknown>, s: SharedState): void => {
  GroupMessageImpl.handle(m).state = s
}

/** The entry it came from. */
export const ref = (m: EntryRef): EntryRef => ({ topic: m.topic, partition: m.partition, offset: m.offset })

/** `"t/0@1, t/0@2"` for entries (at most ten named). */
export const entryList = (entries: readonly EntryRef[]): string =>
  entries
    .slice(0, 10)
    .map((e) => `${e.topic}/${e.partition}@${e.offset}`)
    .join(', ') + (entries.length > 10 ? ` and ${entries.length - 10} more` : '')
