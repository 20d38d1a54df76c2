import { InvalidArgumentError } from '../../core/errors.js'
import type { TopicPartition } from '../../backends/assign.js'
import type { PartitionOffsets } from '../../backends/backend.js'
import type { Lease, MemberSpec } from '../../backends/group.js'
import { FencedError } from '../../core/errors.js'
import { partitionKey } from '../../core/partition-key.js'
import type { Commits } from './commits.js'
import type { PartitionedLedger } from './ledger.js'
import type { OwnedPartition } from './owned-partition.js'
import type { PartitionReads } from './partition-reads.js'

/**
 * The partitioned member's membership (kafkajs's consumer group): one step at a time — heartbeat,
 * release the revoked partitions that drained, drop the leases taken from it, acquire the new
 * ones, begin revoking what the assignment moved elsewhere — run on the heartbeat timer, on a
 * change of the group's state, when a revoking partition drains, and on `rebalance()`.
 */
export class Coordination {
  private stepping: Promise<void> | undefined
  private stepAgain = false
  private unwatchGroup: (() => void) | undefined
  private heartbeat: NodeJS.Timeout | undefined
  /** No more steps: the shutdown is about to leave (a step after the leave would rejoin). */
  private halted = false

  constructor(
    private readonly ledger: PartitionedLedger<unknown>,
    private readonly member: MemberSpec,
    private readonly commits: Commits,
    private readonly reads: PartitionReads<unknown>,
  ) {}

  /** Join: watch the group's state (which creates it: a store it cannot write throws), start heartbeating. */
  start(): void {
    const core = this.ledger.core
    this.unwatchGroup = core.backend.groups.watchGroup(core.opts.group, () => this.schedule(), core.keepAlive)
    this.heartbeat = setInterval(() => this.schedule(), core.opts.heartbeatIntervalMs)
  }

  /** Keep the process alive (heartbeat, group watch) only while `keepAlive()`. */
  rewatch(): void {
    const core = this.ledger.core
    const keep = core.keepAlive
    if (this.heartbeat) keep ? this.heartbeat.ref() : this.heartbeat.unref()
    if (core.state !== 'running' || !this.unwatchGroup) return
    this.unwatchGroup()
    this.unwatchGroup = core.backend.groups.watchGroup(core.opts.group, () => this.schedule(), keep)
  }

  /**
   * Stop heartbeating and refuse further steps (the shutdown, once drained, before it leaves): a
   * step started by a change of the group announced during the leave would write the member back.
   */
  stopHeartbeat(): void {
    this.halted = true
    clearInterval(this.heartbeat)
  }

  /** Stop watching the group's state (the shutdown's last step). */
  stopWatching(): void {
    this.unwatchGroup?.()
  }

  /** Run a step soon (one at a time; a request during a step runs another after it). */
  schedule(): void {
    const core = this.ledger.core
    if (this.halted || core.state === 'closed' || core.failed) return
    if (this.stepping) {
      this.stepAgain = true
      return
    }
    this.stepping = (async () => {
      do {
        this.stepAgain = false
        // A step the store refuses for its arguments (a shared group of that name) cannot succeed later.
        await this.step().catch((e) => (e instanceof InvalidArgumentError ? core.fail(e) : core.emitError(e)))
      } while (this.stepAgain && !this.halted && core.state !== 'closed' && !core.failed)
      this.stepping = undefined
    })()
  }

  /** Resolves when no step runs (after the one under way and any it queued). */
  async idle(): Promise<void> {
    while (this.stepping) await this.stepping.catch(() => undefined)
  }

  private async step(): Promise<void> {
    const { ledger, member } = this
    const core = ledger.core
    if (core.state === 'closing') return this.closingHeartbeat()
    const now = Date.now()
    const release = [...ledger.parts.values()].filter((p) => p.revoking && (p.drained || now >= p.drainDeadline))
    for (const p of release) p.releasing = true // a processor's outputs for it stop now
    if (release.length) await this.commits.commitParts(release).catch(() => undefined)
    const began = Date.now()
    const res = await core.backend.groups.groupHeartbeat(
      core.opts.group,
      member,
      release.map((p) => ({ topic: p.topic, partition: p.partition })),
    )
    // Counted from the heartbeat the store recorded, which may be an earlier one than this.
    ledger.sessionDeadline = Math.min(began, res.seen ?? began) + member.sessionTimeoutMs
    if (core.state !== 'running') return
    const revoked: TopicPartition[] = []
    for (const p of release) if (ledger.parts.get(p.key) === p) revoked.push(ledger.dropPartition(p))
    const owned = new Map(res.owned.map((l) => [partitionKey(l.topic, l.partition), l]))
    const taken: TopicPartition[] = []
    for (const p of [...ledger.parts.values()]) {
      if (!owned.has(p.key) || owned.get(p.key)?.epoch !== p.epoch) {
        // Not released by us: the lease was taken (we were silent past the session timeout).
        p.lost = true
        const tp = ledger.dropPartition(p)
        revoked.push(tp)
        taken.push(tp)
      }
    }
    if (taken.length) {
      this.commits.fenced.push(...taken)
      core.emitError(
        new FencedError(
          `Member ${member.id} of group "${core.opts.group}" lost ${taken.map((t) => partitionKey(t.topic, t.partition)).join(', ')}: its lease was taken after the session timeout; acks of messages from it are ignored`,
        ),
      )
    }
    const { assigned, failure } = await this.acquireNew(
      res.owned.filter((l) => !ledger.parts.has(partitionKey(l.topic, l.partition))),
    )
    for (const tp of res.revoke) {
      const p = ledger.parts.get(partitionKey(tp.topic, tp.partition))
      if (p && !p.revoking) this.beginRevoke(p)
    }
    if (revoked.length) core.events.emit('revoked', revoked)
    if (assigned.length) core.events.emit('assigned', assigned)
    if ([...ledger.parts.values()].some((p) => p.revoking && p.drained)) this.stepAgain = true
    // A partition that could not be opened stays the member's in the store, not in the ledger: the
    // next step takes it again.
    if (failure !== undefined) throw failure
  }

  /**
   * Open every new partition first, then let the fetch loop see them all at once (so the first
   * one opened does not get a head start on a backlog); commit the start positions not committed.
   * One that fails to open (its reader) does not hold the others back: they are taken, and the
   * first failure is returned for the step to throw once it is done.
   */
  private async acquireNew(leases: Lease[]): Promise<{ assigned: TopicPartition[]; failure: unknown }> {
    const ledger = this.ledger
    const core = ledger.core
    // One offsets query per topic for the whole step: one per lease made a step over P new
    // partitions cost O(P²) (52 s to the first delivery at 1,000 partitions).
    const offsets = new Map<string, Map<number, PartitionOffsets>>()
    for (const topic of new Set(leases.map((l) => l.topic))) {
      offsets.set(topic, new Map((await core.backend.offsets(topic)).map((o) => [o.partition, o])))
    }
    const settled = await Promise.allSettled(
      leases.map((l) => ledger.acquire(l, offsets.get(l.topic)?.get(l.partition))),
    )
    const fresh: OwnedPartition[] = []
    let failure: unknown
    for (const s of settled) {
      if (s.status === 'fulfilled') fresh.push(s.value)
      else failure ??= s.reason
    }
    const assigned: TopicPartition[] = []
    for (const p of fresh) {
      if (core.state !== 'running') {
        void p.reader?.close()
        continue
      }
      ledger.parts.set(p.key, p)
      this.reads.watch(p)
      assigned.push({ topic: p.topic, partition: p.partition })
    }
    const unsaved = fresh.filter((p) => p.committed < 0 && !p.dropped)
    if (unsaved.length) await this.commits.commitParts(unsaved).catch((e) => core.emitError(e))
    if (fresh.length) core.fetchWake.wake()
    return { assigned, failure }
  }

  /**
   * While closing: keep the session alive (and the leases) as a *leaving* member, which the
   * assignment skips, so in-flight messages can still be acked and committed during the drain.
   */
  private async closingHeartbeat(): Promise<void> {
    const core = this.ledger.core
    const began = Date.now()
    const res = await core.backend.groups.groupHeartbeat(core.opts.group, this.member, [])
    this.ledger.sessionDeadline = Math.min(began, res.seen ?? began) + this.member.sessionTimeoutMs
    const owned = new Map(res.owned.map((l) => [partitionKey(l.topic, l.partition), l.epoch]))
    for (const p of this.ledger.parts.values()) if (owned.get(p.key) !== p.epoch) p.lost = true
  }

  private beginRevoke(p: OwnedPartition): void {
    p.revoking = true
    p.drainDeadline = Date.now() + this.ledger.core.opts.drainTimeoutMs
    this.ledger.forgetBuffered(p)
    if (p.drained) this.stepAgain = true
  }
}
