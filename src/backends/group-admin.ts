import type { PartitionKey } from '../core/partition-key.js'
import type { TopicPartition } from './assign.js'

/** A group as stored, in either mode. */
export interface GroupSnapshot {
  group: string
  /**
   * Live members and what they read: a partitioned member its leased partitions, a shared member
   * every partition of its topics.
   */
  members: Array<{ id: string; name: string; assignments: TopicPartition[]; processor?: true }>
  /**
   * Committed offset (next offset to consume) per partition: a partitioned group's commits, a
   * shared group's oldest pending entry, else the one after its last delivered entry.
   */
  commits: Map<PartitionKey, number>
  /** Shared groups: delivered, unacknowledged entries per partition where the shared group exists (else empty). */
  pending: Map<PartitionKey, number>
  /** Topics the group consumes or has consumed. */
  topics: string[]
}

/**
 * Consumer-group administration: one contract that a backend answers for both of its group modes
 * (partitioned and, where it has them, shared), so the facade never composes the two.
 *
 * @remarks
 * - A group exists from its first member's join (or a `resetGroup`) until `deleteGroup`.
 * - "Live member": its session has not expired and (on this host) its process is alive.
 * - Every method throws errors of the `TwainError` tree; a closed backend's with `ClosedError`.
 */
export interface GroupAdmin {
  /**
   * Names of the groups, sorted.
   * @throws `BackendError` when the store cannot be read.
   */
  listGroups(): Promise<string[]>
  /**
   * The group's members, commits, shared pending counts and topics; `undefined` when it does not exist.
   * @throws `InvalidArgumentError` (bad group name), `BackendError`.
   */
  describeGroup(group: string): Promise<GroupSnapshot | undefined>
  /**
   * Overwrite the committed offsets of `topic`'s partitions in `offsets` (partition → offset) in
   * both modes (a shared group's read position moves; its pending entries stay pending); creates the
   * group when it does not exist.
   * @throws `InvalidArgumentError` while a live member consumes `topic` (or a bad group name), `BackendError`.
   */
  resetGroup(group: string, topic: string, offsets: ReadonlyMap<number, number>): Promise<void>
  /**
   * Delete the group and all its state, in both modes.
   * @throws `GroupNotFoundError` when it does not exist, `InvalidArgumentError` while it has live members, `BackendError`.
   */
  deleteGroup(group: string): Promise<void>
  /**
   * The committed offsets (partition → offset; partitions without a commit are absent) of every
   * group, of either mode, that consumes or has consumed `topic`: one map per group, none when no
   * group does. What `retention: { consumed: true }` trims by (`backends/trim-consumed.ts`).
   * @throws `BackendError`.
   */
  topicCommits(topic: string): Promise<Array<Map<number, number>>>
}
