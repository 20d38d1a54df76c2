import type { LogRollbackError } from '../core/errors.js'
import type { Message } from '../core/types.js'
import type { TopicPartition } from './assign.js'

/** An entry of a partition, by position. */
export interface EntryRef extends TopicPartition {
  offset: number
}

/** How a shared-group member joins (`mode: 'shared'`). */
export interface SharedMemberOptions {
  group: string
  /**
   * The member's name in the backend's groups. A member that restarts under the same name first
   * gets the entries it held and never acknowledged.
   */
  name: string
  topics: readonly string[]
  /** Where a group that does not exist yet starts on each partition. */
  from: 'start' | 'end'
  /**
   * With `from: 'end'`: each topic's end offsets when the member was asked for (`consumer()`), so
   * a group created later starts there; where a topic has none, at the end when the group is created.
   */
  ends?: ReadonlyMap<string, readonly number[]> | undefined
  /**
   * Entries pending this long without being refreshed by their holder are claimed from it (its
   * process died or stalled). Live members refresh what they hold well within this time.
   */
  claimAfterMs: number
  /** Acknowledgements are flushed at least this often (and whenever a batch fills up). */
  ackIntervalMs: number
  sessionTimeoutMs: number
  heartbeatIntervalMs: number
}

/** An entry handed to a member. */
export interface SharedDelivery {
  message: Message
  /** How often the backend has delivered the entry, this delivery included (1 on the first). */
  deliveryCount: number
}

/** What a member reports while it runs (each callback must not throw). */
export interface SharedMemberEvents {
  /**
   * Entries this member held that another member claimed (this one was silent longer than
   * `claimAfterMs`): their acknowledgements from here are ignored.
   */
  lost(entries: EntryRef[]): void
  /**
   * Entries pending in the group whose data was trimmed from the partition before they could be
   * (re)delivered: they are acknowledged and never delivered.
   */
  trimmed(entries: EntryRef[]): void
  /** Acknowledgements reached the backend: the group's new committed offset per partition (everything below is acknowledged). */
  committed(offsets: EntryRef[]): void
  /** A background failure (heartbeat, acknowledgement flush, refresh). */
  error(e: Error): void
  /**
   * The partition's log moved back below entries this member had read (decision 112): the entries
   * it held from `rollback.from` on are void (their acknowledgements are ignored), and the records
   * now stored at those offsets are delivered as new entries.
   */
  rolledBack(rollback: LogRollbackError, entries: EntryRef[]): void
  /**
   * Another live member joined under this member's name (this one was silent past
   * `sessionTimeoutMs`): the member stopped for good; the consumer must stop too.
   */
  fenced(e: Error): void
}

/**
 * One member of a shared group: competing consumers over every partition of its topics. The
 * member *holds* every entry it handed out until it is acknowledged or given back, keeps them from
 * being claimed by others while it holds them, and never hands out an entry it already holds.
 *
 * @remarks Not safe for concurrent `fetch` calls: one consumer drives it.
 */
export interface SharedMember {
  /** The member's name in the group. */
  readonly name: string
  /** Every partition of the member's topics. */
  readonly partitions: readonly TopicPartition[]
  /**
   * Up to about `max` entries: first the entries this member's name still held from before (after a
   * restart), then entries claimed from members silent for `claimAfterMs`, then new ones. Waits for
   * entries (a bounded time); resolves with `[]` when nothing came, or at once when `signal` aborts.
   */
  fetch(max: number, signal: AbortSignal): Promise<SharedDelivery[]>
  /** Acknowledge an entry (batched; `flush` sends what is waiting). */
  ack(entry: EntryRef): void
  /**
   * Deliver held entries again through the backend, so the delivery is counted: resolves with those
   * still held by this member (lost or trimmed ones are reported through the events instead).
   */
  redeliver(entries: readonly EntryRef[]): Promise<SharedDelivery[]>
  /**
   * Stop holding entries that were not processed: other members may take them at once. With
   * `delivered: false` (buffered, never handed to the application) their last delivery is not counted.
   */
  giveBack(entries: readonly EntryRef[], delivered: boolean): Promise<void>
  /** Send waiting acknowledgements now. */
  flush(): Promise<void>
  /** Refresh what it holds, and look for claimable entries at the next `fetch`. */
  refresh(): Promise<void>
  /** Whether the member's blocking reads keep the process alive. */
  setPersistent(on: boolean): void
  /**
   * Nothing wants entries for now: a read still under way gives back what it returns (its delivery
   * uncounted) instead of keeping it for the next `fetch`, which reads again as usual.
   */
  pause(): void
  /**
   * Stop reading at once (a blocked read ends now); `fetch` resolves `[]` from here on. The member
   * still refreshes what it holds and takes acknowledgements until `leave()`.
   */
  stop(): void
  /**
   * Leave: flush acknowledgements, stop refreshing, delete the member from each partition's group
   * where it holds nothing (deleting a member with pending entries would drop them). Idempotent.
   */
  leave(): Promise<void>
}

/**
 * Shared (competing-consumer) groups: an optional backend capability (the Redis backend's consumer
 * groups on each partition stream). Backends without it refuse `mode: 'shared'`.
 *
 * @remarks
 * - At-least-once: an entry is pending from its delivery until acknowledged; a member that dies
 *   leaves its entries pending, and live members claim them after `claimAfterMs`.
 * - Delivery counts come from the backend and count every delivery, including claims and
 *   re-deliveries after a restart.
 */
export interface SharedGroups {
  /**
   * Join a shared group (created on first use, starting at `from`). Describing, resetting and
   * deleting shared groups is `Backend.admin` (`GroupAdmin`), as for partitioned groups.
   * @throws `InvalidArgumentError` (the group has live partitioned members, or the name is taken by
   * a live member), `TopicNotFoundError`, `BackendError`.
   */
  join(options: SharedMemberOptions, events: SharedMemberEvents): Promise<SharedMember>
}
