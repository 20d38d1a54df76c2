import type { TopicPartition } from './assign.js'

/** A consumer-group member as the backend records it. */
export interface MemberSpec {
  /** Unique per consumer instance. */
  id: string
  /** The user's member name (informational in partitioned mode). */
  name: string
  topics: string[]
  sessionTimeoutMs: number
  /** The member's process: when it is this process, the backend records its whole identity (`memberProcess`). */
  pid: number
  host: string
  /** Closing: keeps its session and leases while it drains, but is assigned nothing new. */
  leaving?: boolean
  /** A processor (`twain.processor()`): stored with the member, shown by `describeGroup`. */
  processor?: boolean
}

/** A partition lease held by a member: `epoch` is its fencing token. */
export interface Lease extends TopicPartition {
  epoch: number
  /** The group's committed offset for the partition (next offset to consume), if any. */
  committed?: number | undefined
}

/** What one coordination step tells a member. */
export interface HeartbeatResult {
  /** Partitions the member owns now. */
  owned: Lease[]
  /** Owned partitions now assigned to someone else: drain them, commit, then release. */
  revoke: TopicPartition[]
  /**
   * When the store counts the member's session from, if earlier than the call (a store that does
   * not record every heartbeat): its session lapses, and its leases can be taken, `sessionTimeoutMs`
   * after this, so the member's own deadline must not be later.
   */
  seen?: number
}

/** One partition's commit, checked against its lease epoch. */
export interface CommitRequest extends TopicPartition {
  offset: number
  epoch: number
}

/**
 * Partitioned consumer-group coordination primitives. The consumer core drives them; a backend
 * implements them atomically (a lock and a state file on the file backend, Lua on Redis).
 *
 * @remarks
 * - Liveness: a member that has not heartbeated for its `sessionTimeoutMs` is dropped and its
 *   leases freed; one whose process is known to be gone is dropped at once (`memberGone` in
 *   `member-liveness.ts`: the same identity check as the partition locks).
 * - A partition changes hands only when its owner releases it or is dropped; every new lease gets a
 *   fresh epoch from a counter, and a commit whose epoch is not the current lease's is rejected.
 * - Describing, listing, resetting and deleting groups is the `GroupAdmin` contract
 *   (`Backend.admin`, `group-admin.ts`), which answers for both group modes.
 * - Failures are of the `TwainError` tree: `BackendError` / `ConnectionError` (the store),
 *   `TimeoutError` (the file backend's group lock), `ClosedError` once the backend is closed.
 */
export interface GroupCoordinator {
  /**
   * Join or refresh membership, release `release`, run one assignment step; returns the member's leases.
   * @throws `InvalidArgumentError` (bad group name), `BackendError`, `TimeoutError`.
   */
  groupHeartbeat(group: string, member: MemberSpec, release: readonly TopicPartition[]): Promise<HeartbeatResult>
  /** Leave: release every lease and remove the member. @throws `BackendError`, `TimeoutError`. */
  groupLeave(group: string, memberId: string): Promise<void>
  /**
   * Commit offsets; returns the partitions whose commit was fenced (not written).
   * @throws `BackendError`, `TimeoutError` (a fenced commit is a result, not an error).
   */
  groupCommit(group: string, memberId: string, commits: readonly CommitRequest[]): Promise<TopicPartition[]>
  /**
   * Call `onChange` (possibly spuriously) when the group's state may have changed; returns the unsubscribe function.
   * @throws `ClosedError` (synchronously) once the backend is closed.
   */
  watchGroup(group: string, onChange: () => void, persistent?: boolean): () => void
}
