import { randomBytes } from 'node:crypto'
import { hostname } from 'node:os'
import type { TopicPartition } from '../backends/assign.js'
import { partitionKey } from '../core/partition-key.js'
import type { PartitionOffsets } from '../backends/backend.js'
import type { MemberSpec } from '../backends/group.js'
import { FencedError } from '../core/errors.js'
import type { Key } from '../core/types.js'
import type { ConsumerContext } from './member-core.js'
import { PartitionedMember } from './partitioned-member.js'
import type { ResolvedConsumerOptions } from './options.js'
import type { OwnedPartition } from './owned-partition.js'

const MAX_FETCH = 1024

/**
 * A member of a consumer group (partitioned mode). It is a `MessageStream` of `GroupMessage`s:
 * every `for await` or subscription is a view of the one membership, and ending a view leaves the
 * member in the group. Only `close()`, `twain.close()` or the `signal` leave.
 */
export class Consumer<V = unknown, K extends Key = Key> extends PartitionedMember<V, K> {
  private timers: NodeJS.Timeout[] = []
  private stepping: Promise<void> | undefined
  private stepAgain = false
  private unwatchGroup: (() => void) | undefined
  protected readonly member: MemberSpec
  /** Where the next fetch round starts. */
  private rr = 0

  /** @internal Use `twain.consumer()`. */
  constructor(ctx: ConsumerContext, topics: string[], opts: ResolvedConsumerOptions, onClosed: (c: Consumer<any>) => void) {
    super(ctx, topics, opts, onClosed as (c: unknown) => void)
    const id = `${opts.name ?? 'member'}-${randomBytes(5).toString('hex')}`
    this.member = { id, name: opts.name ?? id, topics: [...topics].sort(), sessionTimeoutMs: opts.sessionTimeoutMs, pid: process.pid, host: hostname() }
    void this.start()
  }

  /** This member's id in the group. */
  get memberId(): string {
    return this.member.id
  }

  private async start(): Promise<void> {
    try {
      await this.retention.load(this.topics)
      if (this.state !== 'running') return
      // Watching creates the group's state directory: a store it cannot write fails the consumer.
      this.unwatchGroup = this.backend.groups.watchGroup(this.opts.group, () => this.scheduleStep(), this.views > 0)
    } catch (e) {
      return this.fail(e)
    }
    this.timers.push(setInterval(() => this.scheduleStep(), this.opts.heartbeatIntervalMs))
    this.timers.push(setInterval(() => void this.commitParts().catch((e) => this.emitError(e)), this.opts.commitIntervalMs))
    this.updateRefs()
    this.scheduleStep()
    void this.fetchLoop()
  }

  // ---- views (iterations) ---------------------------------------------------------------

  /** Keep the process alive only while something iterates this consumer. */
  protected updateRefs(): void {
    const keep = this.views > 0
    for (const t of this.timers) keep ? t.ref() : t.unref()
    for (const t of this.redeliveries) keep ? t.ref() : t.unref()
    if (this.state !== 'running') return
    if (this.unwatchGroup) {
      this.unwatchGroup()
      this.unwatchGroup = this.backend.groups.watchGroup(this.opts.group, () => this.scheduleStep(), keep)
    }
    for (const p of this.parts.values()) if (p.unwatch) this.watchPartition(p)
  }

  /** Reads start with the first iteration or poll; a member without one keeps its buffer and reads no more. */
  protected demandChanged(): void {
    if (this.demand) this.fetchWake.wake()
  }

  // ---- fetching -----------------------------------------------------------------------

  protected watchPartition(p: OwnedPartition): void {
    p.unwatch?.()
    p.unwatch = this.backend.watch(
      p.topic,
      p.partition,
      () => {
        p.dirty = true
        this.fetchWake.wake()
      },
      this.views > 0,
    )
  }

  private async fetchLoop(): Promise<void> {
    while (this.state === 'running') {
      this.fetchWake.take()
      if (!this.demand) {
        await this.fetchWake.next() // nothing reads until an iteration or poll() wants messages
        continue
      }
      let progressed = false
      // Round-robin with a fair share per partition, so a backlog on one cannot starve the others.
      const parts = [...this.parts.values()]
      const share = Math.max(1, Math.ceil(this.opts.maxInFlight / Math.max(1, parts.length)))
      const start = parts.length ? this.rr % parts.length : 0
      // Hysteresis: refill once a quarter of maxInFlight is free, not one message per ack.
      const lowWater = Math.max(1, Math.floor(this.opts.maxInFlight / 4))
      for (let k = 0; k < parts.length; k++) {
        const i = (start + k) % parts.length
        const p = parts[i] as OwnedPartition
        const room = this.opts.maxInFlight - this.outstanding
        if (room <= 0 || (room < lowWater && !progressed)) break
        if (p.revoking || p.lost || !p.dirty || !p.reader) continue
        p.dirty = false
        const want = Math.min(room, share, MAX_FETCH)
        this.rr = i + 1 // the next round starts after the partition served last
        const gen = p.generation
        let msgs
        try {
          msgs = await p.reader.read(want)
          if (this.decode && msgs.length) msgs = await this.decode(msgs)
        } catch (e) {
          this.emitError(e)
          continue
        }
        if (this.state !== 'running' || p.lost || p.dropped || p.revoking || gen !== p.generation) {
          // A seek or revocation happened during the read: its result is stale, and the reader moved
          // past where the partition now wants to fetch from.
          if (!p.dropped && !p.lost) p.reader?.seek(p.position)
          continue
        }
        if (msgs.length === want) p.dirty = true
        for (const m of msgs) this.buffered(m, p)
        if (msgs.length > 0) {
          progressed = true
          this.wakeViews()
        }
      }
      if (!progressed) await this.fetchWake.next() // shutdown wakes it too
    }
  }

  // ---- membership -----------------------------------------------------------------------

  protected scheduleStep(): void {
    if (this.state === 'closed') return
    if (this.stepping) {
      this.stepAgain = true
      return
    }
    this.stepping = (async () => {
      do {
        this.stepAgain = false
        await this.step().catch((e) => this.emitError(e))
      } while (this.stepAgain && this.state !== 'closed')
      this.stepping = undefined
    })()
  }

  private async step(): Promise<void> {
    if (this.state === 'closing') return this.closingHeartbeat()
    const now = Date.now()
    const release = [...this.parts.values()].filter((p) => p.revoking && (p.drained || now >= p.drainDeadline))
    if (release.length) await this.commitParts(release).catch(() => undefined)
    const res = await this.backend.groups.groupHeartbeat(this.opts.group, this.member, release.map((p) => ({ topic: p.topic, partition: p.partition })))
    if (this.state !== 'running') return
    const revoked: TopicPartition[] = []
    for (const p of release) if (this.parts.get(p.key) === p) revoked.push(this.dropPartition(p))
    const owned = new Map(res.owned.map((l) => [partitionKey(l.topic, l.partition), l]))
    const taken: TopicPartition[] = []
    for (const p of [...this.parts.values()]) {
      if (!owned.has(p.key) || owned.get(p.key)?.epoch !== p.epoch) {
        // Not released by us: the lease was taken (we were silent past the session timeout).
        p.lost = true
        const tp = this.dropPartition(p)
        revoked.push(tp)
        taken.push(tp)
      }
    }
    if (taken.length) {
      this.fenced.push(...taken)
      this.emitError(new FencedError(`Member ${this.member.id} of group "${this.opts.group}" lost ${taken.map((t) => partitionKey(t.topic, t.partition)).join(', ')}: its lease was taken after the session timeout; acks of messages from it are ignored`))
    }
    // Open every new partition first, then let the fetch loop see them all at once (so the first
    // one opened does not get a head start on a backlog).
    const leases = res.owned.filter((l) => !this.parts.has(partitionKey(l.topic, l.partition)))
    // One offsets query per topic for the whole step: one per lease made a step over P new
    // partitions cost O(P²) (52 s to the first delivery at 1,000 partitions).
    const offsets = new Map<string, Map<number, PartitionOffsets>>()
    for (const topic of new Set(leases.map((l) => l.topic))) {
      offsets.set(topic, new Map((await this.backend.offsets(topic)).map((o) => [o.partition, o])))
    }
    const fresh = await Promise.all(leases.map((l) => this.acquire(l, offsets.get(l.topic)?.get(l.partition))))
    const assigned: TopicPartition[] = []
    for (const p of fresh) {
      if (this.state !== 'running') {
        void p.reader?.close()
        continue
      }
      this.parts.set(p.key, p)
      this.watchPartition(p)
      assigned.push({ topic: p.topic, partition: p.partition })
    }
    const unsaved = fresh.filter((p) => p.committed < 0 && !p.dropped)
    if (unsaved.length) await this.commitParts(unsaved).catch((e) => this.emitError(e))
    if (fresh.length) this.fetchWake.wake()
    for (const tp of res.revoke) {
      const p = this.parts.get(partitionKey(tp.topic, tp.partition))
      if (p && !p.revoking) this.beginRevoke(p)
    }
    if (revoked.length) this.events.emit('revoked', revoked)
    if (assigned.length) this.events.emit('assigned', assigned)
    if ([...this.parts.values()].some((p) => p.revoking && p.drained)) this.stepAgain = true
  }

  /**
   * While closing: keep the session alive (and the leases) as a *leaving* member, which the
   * assignment skips, so in-flight messages can still be acked and committed during the drain.
   */
  private async closingHeartbeat(): Promise<void> {
    const res = await this.backend.groups.groupHeartbeat(this.opts.group, this.member, [])
    const owned = new Map(res.owned.map((l) => [partitionKey(l.topic, l.partition), l.epoch]))
    for (const p of this.parts.values()) if (owned.get(p.key) !== p.epoch) p.lost = true
  }

  private beginRevoke(p: OwnedPartition): void {
    p.revoking = true
    p.drainDeadline = Date.now() + this.opts.drainTimeoutMs
    this.forgetBuffered(p)
    if (p.drained) this.stepAgain = true
  }

  /** The partitions this member owns now. */
  assignments(): TopicPartition[] {
    return [...this.parts.values()].filter((p) => !p.lost).map((p) => ({ topic: p.topic, partition: p.partition }))
  }

  /** Run a coordination step now (join, release, acquire) and wait for it. */
  async rebalance(): Promise<void> {
    this.scheduleStep()
    while (this.stepping) await this.stepping
  }

  /** `close()`: stop fetching, wait for in-flight acks (up to `drainTimeoutMs`), commit, leave. */
  protected async shutdown(): Promise<void> {
    if (!this.beginShutdown()) return
    this.member.leaving = true
    await this.endIterations()
    // Keep heartbeating (as a leaving member) while draining; the other timers stop now.
    const [heartbeat, ...others] = this.timers
    for (const t of others) clearInterval(t)
    this.scheduleStep()
    for (const t of this.redeliveries) clearTimeout(t)
    this.redeliveries.clear()
    this.forgetBuffered()
    await this.drain(() => [...this.parts.values()].every((p) => p.drained))
    if (heartbeat) clearInterval(heartbeat)
    while (this.stepping) await this.stepping.catch(() => undefined)
    if (this.failure === undefined) {
      await this.commitParts().catch((e) => {
        if (!(e instanceof FencedError)) this.emitError(e)
      })
      await this.backend.groups.groupLeave(this.opts.group, this.member.id).catch((e) => this.emitError(e))
    }
    const revoked = [...this.parts.values()].map((p) => this.dropPartition(p))
    this.unwatchGroup?.()
    if (revoked.length) this.events.emit('revoked', revoked)
    this.finishShutdown()
  }

}
