import type { TopicPartition } from '../../backends/assign.js'
import { FencedError, InvalidArgumentError } from '../../core/errors.js'
import { partitionKey, type PartitionKey } from '../../core/partition-key.js'
import type { ConsumedRetention } from '../consumed-retention.js'
import type { OwnedPartition } from '../owned-partition.js'
import type { MemberHost } from './host.js'

/** What the commits need besides the member host. */
export interface CommitHost extends MemberHost {
  readonly topics: string[]
  readonly retention: ConsumedRetention
  /** Seeks of partitions not owned now, applied when they are acquired. */
  readonly pendingSeeks: Map<PartitionKey, number>
  /** Start an owned partition over at `offset` (the ledger's `restart`). */
  restart(p: OwnedPartition, offset: number): void
}

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

  constructor(private readonly host: CommitHost) {}

  /** Commit every `commitIntervalMs` (a failure is an `'error'` event). */
  startPeriodic(): void {
    this.timer = setInterval(() => void this.commitParts().catch((e) => this.host.emitError(e)), this.host.opts.commitIntervalMs)
  }

  /** The periodic commit keeps the process alive only while `keepAlive()`. */
  rewatch(): void {
    if (this.timer) this.host.keepAlive() ? this.timer.ref() : this.timer.unref()
  }

  stopPeriodic(): void {
    clearInterval(this.timer)
  }

  /** Commit the acked prefix of `parts` (every owned partition when undefined) that moved since the last commit. */
  async commitParts(parts?: OwnedPartition[]): Promise<void> {
    const h = this.host
    const list = (parts ?? [...h.parts.values()]).filter((p) => !p.lost && p.commitPoint() !== p.committed)
    if (list.length === 0) return
    const reqs = list.map((p) => ({ topic: p.topic, partition: p.partition, offset: p.commitPoint(), epoch: p.epoch }))
    const fenced = await h.backend.groups.groupCommit(h.opts.group, h.member.id, reqs)
    const fencedKeys = new Set(fenced.map((f) => partitionKey(f.topic, f.partition)))
    const done: Array<TopicPartition & { offset: number }> = []
    const lost: TopicPartition[] = []
    list.forEach((p, i) => {
      if (fencedKeys.has(p.key)) {
        p.lost = true
        if (h.parts.get(p.key) === p) lost.push(h.dropPartition(p))
      } else {
        p.committed = (reqs[i] as { offset: number }).offset
        done.push({ topic: p.topic, partition: p.partition, offset: p.committed })
      }
    })
    if (done.length) {
      h.events.emit('commit', done)
      h.retention.committed()
    }
    if (lost.length) h.events.emit('revoked', lost)
    if (fenced.length) {
      throw new FencedError(`Commit of ${fenced.map((f) => partitionKey(f.topic, f.partition)).join(', ')} by member ${h.member.id} of group "${h.opts.group}" was rejected: the partition is owned by another member now`)
    }
  }

  /** `commit()`: every owned partition now; rejects with `FencedError` for partitions lost since the last one. */
  async commit(): Promise<void> {
    const lost = this.fenced.splice(0)
    await this.commitParts()
    if (lost.length) {
      const h = this.host
      throw new FencedError(`Partitions ${lost.map((t) => partitionKey(t.topic, t.partition)).join(', ')} of group "${h.opts.group}" were taken from member ${h.member.id} (session timeout): their acks since the last commit were not committed`)
    }
  }

  /** `seek()`: continue a partition from `offset` (when it is acquired, if it is not owned now). */
  seek(topic: string, partition: number, offset: number): void {
    const h = this.host
    if (!Number.isSafeInteger(offset) || offset < 0) throw new InvalidArgumentError(`seek offset must be a non-negative integer, got ${String(offset)}`)
    if (!h.topics.includes(topic)) throw new InvalidArgumentError(`This consumer does not consume topic "${topic}" (it consumes ${h.topics.join(', ')})`)
    const key = partitionKey(topic, partition)
    const p = h.parts.get(key)
    if (p) h.restart(p, offset)
    else h.pendingSeeks.set(key, offset)
  }
}
