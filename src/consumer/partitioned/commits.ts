import type { TopicPartition } from '../../backends/assign.js'
import { FencedError, InvalidArgumentError } from '../../core/errors.js'
import { partitionKey } from '../../core/partition-key.js'
import type { MemberSpec } from '../../backends/group.js'
import type { PartitionedLedger } from './ledger.js'
import type { OwnedPartition } from './owned-partition.js'

/**
 * The partitioned member's commits (kafkajs's offset manager): each owned partition's commit point
 * (its acked prefix, `OwnedPartition.commitPoint`) is written with the lease's epoch, every
 * `commitIntervalMs`, on `commit()`, on coordination steps and on close. A commit the store
 * refuses (the lease moved on) fences the partition: it is dropped and reported, never written
 * over the new owner's. `seek` moves a partition's commit point.
 */
export class Commits {
  /** Partitions whose lease was taken since the last `commit()` (reported by it as `FencedError`). */
  readonly fenced: TopicPartition[] = []
  private timer: NodeJS.Timeout | undefined
  /** The commit being written (commits are written one at a time). */
  private queue: Promise<unknown> = Promise.resolve()

  constructor(
    private readonly ledger: PartitionedLedger<unknown>,
    private readonly member: MemberSpec,
  ) {}

  /** Commit every `commitIntervalMs` (a failure is an `'error'` event). */
  startPeriodic(): void {
    const core = this.ledger.core
    this.timer = setInterval(() => void this.commitParts().catch((e) => core.emitError(e)), core.opts.commitIntervalMs)
  }

  /** The periodic commit keeps the process alive only while `keepAlive()`. */
  rewatch(): void {
    if (this.timer) this.ledger.core.keepAlive ? this.timer.ref() : this.timer.unref()
  }

  stopPeriodic(): void {
    clearInterval(this.timer)
  }

  /**
   * Commit the acked prefix of `parts` (every owned partition when undefined) that moved since the
   * last commit. One at a time, in the order asked: a commit of an older position written after a
   * newer one would move the group back (the file store's lock is not first come, first served).
   */
  commitParts(parts?: OwnedPartition[]): Promise<void> {
    const run = this.queue.then(() => this.commitNow(parts))
    this.queue = run.catch(() => undefined)
    return run
  }

  private async commitNow(parts: OwnedPartition[] | undefined): Promise<void> {
    const { ledger, member } = this
    const core = ledger.core
    const list = (parts ?? [...ledger.parts.values()]).filter((p) => !p.lost && p.commitPoint() !== p.committed)
    if (list.length === 0) return
    const reqs = list.map((p) => ({ topic: p.topic, partition: p.partition, offset: p.commitPoint(), epoch: p.epoch }))
    const fenced = await core.backend.groups.groupCommit(core.opts.group, member.id, reqs)
    const fencedKeys = new Set(fenced.map((f) => partitionKey(f.topic, f.partition)))
    const done: Array<TopicPartition & { offset: number }> = []
    const lost: TopicPartition[] = []
    list.forEach((p, i) => {
      if (fencedKeys.has(p.key)) {
        p.lost = true
        if (ledger.parts.get(p.key) === p) lost.push(ledger.dropPartition(p))
      } else {
        p.committed = (reqs[i] as { offset: number }).offset
        done.push({ topic: p.topic, partition: p.partition, offset: p.committed })
      }
    })
    if (done.length) {
      core.events.emit('commit', done)
      core.retention.committed()
    }
    if (lost.length) core.events.emit('revoked', lost)
    if (fenced.length) {
      throw new FencedError(
        `Commit of ${fenced.map((f) => partitionKey(f.topic, f.partition)).join(', ')} by member ${member.id} of group "${core.opts.group}" was rejected: the partition is owned by another member now`,
      )
    }
  }

  /** `commit()`: every owned partition now; rejects with `FencedError` for partitions lost since the last one. */
  async commit(): Promise<void> {
    const lost = this.fenced.splice(0)
    await this.commitParts()
    if (lost.length) {
      throw new FencedError(
        `Partitions ${lost.map((t) => partitionKey(t.topic, t.partition)).join(', ')} of group "${this.ledger.core.opts.group}" were taken from member ${this.member.id} (session timeout): their acks since the last commit were not committed`,
      )
    }
  }

  /** `seek()`: continue a partition from `offset` (when it is acquired, if it is not owned now). */
  seek(topic: string, partition: number, offset: number): void {
    const ledger = this.ledger
    const topics = ledger.core.topics
    if (!Number.isSafeInteger(offset) || offset < 0)
      throw new InvalidArgumentError(`seek offset must be a non-negative integer, got ${String(offset)}`)
    if (!topics.includes(topic))
      throw new InvalidArgumentError(
        `This consumer does not consume topic "${topic}" (it consumes ${topics.join(', ')})`,
      )
    const key = partitionKey(topic, partition)
    const p = ledger.parts.get(key)
    if (p) ledger.restart(p, offset)
    else ledger.pendingSeeks.set(key, offset)
  }
}
