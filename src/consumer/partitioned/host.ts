import type { TopicPartition } from '../../backends/assign.js'
import type { Backend } from '../../backends/backend.js'
import type { MemberSpec } from '../../backends/group.js'
import type { PartitionKey } from '../../core/partition-key.js'
import type { Wake } from '../../stream/wake.js'
import type { ConsumerEvents } from '../events.js'
import type { ResolvedConsumerOptions } from '../options.js'
import type { OwnedPartition } from '../owned-partition.js'

/**
 * What the partitioned member's parts — its coordination, commits and fetch loop — use of the
 * member (`Consumer` hands them one, so its ledger stays off its public API): the owned
 * partitions, the store, the events, and the ledger's operations on a partition.
 */
export interface MemberHost {
  readonly backend: Backend
  readonly opts: ResolvedConsumerOptions
  readonly member: MemberSpec
  /** The partitions the member owns now (the ledger's). */
  readonly parts: Map<PartitionKey, OwnedPartition>
  readonly events: ConsumerEvents
  /** Room to fetch may have appeared, or a partition was added (the fetch loop's wake-up). */
  readonly fetchWake: Wake
  state(): 'running' | 'closing' | 'closed'
  /** A fatal failure ended the member: no coordination step runs after it. */
  failed(): boolean
  /** Something iterates the member: its timers and watches keep the process alive. */
  keepAlive(): boolean
  emitError(e: unknown): void
  /** A fatal failure: every iteration throws it, the member closes. */
  fail(e: unknown): void
  /** Stop holding `p`: its undelivered messages are forgotten, its reader and watch closed. */
  dropPartition(p: OwnedPartition): TopicPartition
}
