import { randomBytes } from 'node:crypto'
import { hostname } from 'node:os'
import { tpKey, type TopicPartition } from '../backends/assign.js'
import type { PartitionOffsets } from '../backends/backend.js'
import type { Lease, MemberSpec } from '../backends/group.js'
import { FencedError, InvalidArgumentError } from '../core/errors.js'
import type { Key } from '../core/types.js'
import { MemberCore, type ConsumerContext } from './member-core.js'
import { GroupMessageImpl, type PartitionHandle, type PartitionMessage, type Settler } from './group-message.js'
import type { ResolvedConsumerOptions } from './options.js'
import { OwnedPartition } from './owned-partition.js'

const MAX_FETCH = 1024

/**
 * A member of a consumer group (partitioned mode). It is a `MessageStream` of `GroupMessage`s:
 * every `for await` or subscription is a view of the one membership, and ending a view leaves the
 * member in the group. Only `close()`, `twain.close()` or the `signal` leave.
 */
export class Consumer<V = unknown, K extends Key = Key> extends MemberCore<V, PartitionHandle, K> {
  private readonly parts = new Map<string, OwnedPartition>()
  private outstanding = 0
  private timers: NodeJS.Timeout[] = []
  private stepping: Promise<void> | undefined
  private stepAgain = false
  private unwatchGroup: (() => void) | undefined
  private readonly member: MemberSpec
  private readonly pendingSeeks = new Map<string, number>()
  private readonly redeliveries = new Set<NodeJS.Timeout>()
  /** Where the next fetch round starts. */
  private rr = 0
  /** Partitions whose lease was taken since the last `commit()` (reported by it as `FencedError`). */
  private readonly fenced: TopicPartition[] = []
  /** How its messages settle: kept out of the consumer's API. */
  readonly #settler: Settler<PartitionHandle> = { ack: (m) => this.#ack(m), nack: (m, ms) => this.#nack(m, ms), term: (m, r) => this.#term(m, r), release: (m) => this.#release(m) }

  /** @internal Use `twain.consumer()`. */
  constructor(ctx: ConsumerContext, topics: string[], opts: ResolvedConsumerOptions, onClosed: (c: Consumer<any>) => void) {
    super(ctx, topics, opts, onClosed as (c: MemberCore<any, any>) => void)
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

  protected flushCommits(): Promise<void> {
    return this.commitParts()
  }

  protected deliverable(m: PartitionMessage<V>): boolean {
    return this.live(m)
  }

  /** The member counts deliveries itself: `deliveryCount` is the deliveries made. */
  protected deliveriesMade(m: PartitionMessage<V>): number {
    return m.deliveryCount
  }

  protected deliver(m: PartitionMessage<V>): void {
    const h = GroupMessageImpl.handle(m)
    m.deliveryCount++
    h.delivered = true
    h.part.inFlight++
  }

  protected unread(items: PartitionMessage<V>[]): void {
    const back: PartitionMessage<V>[] = []
    for (const m of items) {
      const h = GroupMessageImpl.handle(m)
      if (!h.delivered || h.settled) continue
      h.delivered = false
      h.part.inFlight--
      m.deliveryCount--
      back.push(m)
    }
    if (back.length) {
      this.buffer = back.concat(this.buffer)
      this.wakeViews()
      this.settleWake.wake()
    }
  }

  // ---- settlement ---------------------------------------------------------------------

  private live(m: PartitionMessage<unknown>): boolean {
    const h = GroupMessageImpl.handle(m)
    return !h.settled && !h.part.lost && !h.part.dropped && h.generation === h.part.generation
  }

  private undeliver(m: PartitionMessage<unknown>): void {
    const h = GroupMessageImpl.handle(m)
    if (h.delivered) {
      h.delivered = false
      h.part.inFlight--
    }
  }

  #ack(m: PartitionMessage<unknown>): void {
    if (!this.live(m)) return
    const h = GroupMessageImpl.handle(m)
    h.settled = true
    this.undeliver(m)
    this.settled(h.part, m.offset)
  }

  private settled(part: OwnedPartition, offset: number): void {
    // A dropped partition's outstanding messages were all counted out when it was dropped (a
    // dead-letter write can complete after that).
    if (!part.dropped && part.ack(offset)) {
      this.outstanding--
      this.fetchWake.wake()
    }
    this.settleWake.wake()
    if (part.revoking && part.drained) this.scheduleStep()
  }

  #nack(m: PartitionMessage<unknown>, delayMs: number): void {
    if (!this.live(m)) return
    this.undeliver(m)
    const h = GroupMessageImpl.handle(m)
    this.settleWake.wake()
    if (h.part.revoking && h.part.drained) this.scheduleStep()
    const again = () => {
      if (!this.live(m) || h.part.revoking || this.state !== 'running') return
      this.buffer.push(m as PartitionMessage<V>)
      this.wakeViews()
    }
    if (delayMs <= 0) return again()
    const t = setTimeout(() => {
      this.redeliveries.delete(t)
      again()
    }, delayMs)
    if (this.views === 0) t.unref()
    this.redeliveries.add(t)
  }

  #release(m: PartitionMessage<unknown>): void {
    const h = GroupMessageImpl.handle(m)
    if (!this.live(m) || !h.delivered) return
    h.delivered = false
    h.part.inFlight--
    m.deliveryCount--
    // Back in offset order among its partition's buffered messages, so released runs keep their order.
    const at = this.buffer.findIndex((b) => b.partition === m.partition && b.topic === m.topic && b.offset > m.offset)
    this.buffer.splice(at < 0 ? 0 : at, 0, m as PartitionMessage<V>)
    this.wakeViews()
    this.settleWake.wake()
    const part = GroupMessageImpl.handle(m).part
    if (part.revoking && part.drained) this.scheduleStep()
  }

  #term(m: PartitionMessage<unknown>, reason: string): void {
    if (!this.live(m)) return
    const h = GroupMessageImpl.handle(m)
    h.settled = true
    this.undeliver(m)
    const part = h.part
    if (!this.dlq) return this.settled(part, m.offset)
    part.pendingTerms++
    this.dlq.send(
      m,
      reason,
      () => {
        part.pendingTerms--
        if (h.generation === part.generation) this.settled(part, m.offset)
        else this.settleWake.wake()
      },
      (e) => {
        part.pendingTerms--
        h.settled = false
        this.settleWake.wake()
        this.emitError(e)
        this.#nack(m, 1000)
      },
    )
  }

  // ---- fetching -----------------------------------------------------------------------

  private watchPartition(p: OwnedPartition): void {
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
        for (const m of msgs) {
          p.track(m.offset)
          this.buffer.push(new GroupMessageImpl<V, PartitionHandle>(m, 0, this.#settler, { part: p, generation: p.generation, settled: false, delivered: false }))
        }
        this.outstanding += msgs.length
        if (msgs.length > 0) {
          progressed = true
          this.wakeViews()
        }
      }
      if (!progressed) await this.fetchWake.next() // shutdown wakes it too
    }
  }

  // ---- membership -----------------------------------------------------------------------

  private scheduleStep(): void {
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
    const owned = new Map(res.owned.map((l) => [tpKey(l.topic, l.partition), l]))
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
      this.emitError(new FencedError(`Member ${this.member.id} of group "${this.opts.group}" lost ${taken.map((t) => tpKey(t.topic, t.partition)).join(', ')}: its lease was taken after the session timeout; acks of messages from it are ignored`))
    }
    // Open every new partition first, then let the fetch loop see them all at once (so the first
    // one opened does not get a head start on a backlog).
    const leases = res.owned.filter((l) => !this.parts.has(tpKey(l.topic, l.partition)))
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
      const p = this.parts.get(tpKey(tp.topic, tp.partition))
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
    const owned = new Map(res.owned.map((l) => [tpKey(l.topic, l.partition), l.epoch]))
    for (const p of this.parts.values()) if (owned.get(p.key) !== p.epoch) p.lost = true
  }

  /** Open a newly leased partition (not yet visible to the fetch loop), given its offsets as this step found them. */
  private async acquire(lease: Lease, offsets: PartitionOffsets | undefined): Promise<OwnedPartition> {
    const key = tpKey(lease.topic, lease.partition)
    const start = offsets?.start ?? 0
    const seek = this.pendingSeeks.get(key)
    this.pendingSeeks.delete(key)
    let position = seek ?? lease.committed ?? (this.opts.from === 'end' ? (offsets?.end ?? 0) : start)
    if (position < start) position = start
    const p = new OwnedPartition(lease.topic, lease.partition, lease.epoch, position)
    if (seek !== undefined || lease.committed === undefined) p.committed = -1 // commit the start position at once ('end' must stick)
    p.reader = await this.backend.openReader(lease.topic, lease.partition, position)
    return p
  }

  private beginRevoke(p: OwnedPartition): void {
    p.revoking = true
    p.drainDeadline = Date.now() + this.opts.drainTimeoutMs
    this.forgetBuffered(p)
    if (p.drained) this.stepAgain = true
  }

  /** Drop undelivered buffered messages of `p` (all partitions when undefined): they were never handed out. */
  private forgetBuffered(p?: OwnedPartition): void {
    const keep: PartitionMessage<V>[] = []
    const dropped = new Map<OwnedPartition, number[]>()
    for (const m of this.buffer) {
      const h = GroupMessageImpl.handle(m)
      if (p === undefined || h.part === p) {
        if (!h.settled && h.generation === h.part.generation) {
          const list = dropped.get(h.part) ?? []
          list.push(m.offset)
          dropped.set(h.part, list)
        }
      } else keep.push(m)
    }
    this.buffer = keep
    for (const [part, offsets] of dropped) {
      const before = part.outstandingCount
      part.forget(offsets)
      this.outstanding -= before - part.outstandingCount
    }
  }

  private dropPartition(p: OwnedPartition): TopicPartition {
    this.forgetBuffered(p)
    this.outstanding -= p.outstandingCount
    this.parts.delete(p.key)
    p.dropped = true
    p.unwatch?.()
    p.unwatch = undefined
    void p.reader?.close()
    this.settleWake.wake()
    return { topic: p.topic, partition: p.partition }
  }

  // ---- commits ---------------------------------------------------------------------------

  private async commitParts(parts?: OwnedPartition[]): Promise<void> {
    const list = (parts ?? [...this.parts.values()]).filter((p) => !p.lost && p.commitPoint() !== p.committed)
    if (list.length === 0) return
    const reqs = list.map((p) => ({ topic: p.topic, partition: p.partition, offset: p.commitPoint(), epoch: p.epoch }))
    const fenced = await this.backend.groups.groupCommit(this.opts.group, this.member.id, reqs)
    const fencedKeys = new Set(fenced.map((f) => tpKey(f.topic, f.partition)))
    const done: Array<TopicPartition & { offset: number }> = []
    const lost: TopicPartition[] = []
    list.forEach((p, i) => {
      if (fencedKeys.has(p.key)) {
        p.lost = true
        if (this.parts.get(p.key) === p) lost.push(this.dropPartition(p))
      } else {
        p.committed = (reqs[i] as { offset: number }).offset
        done.push({ topic: p.topic, partition: p.partition, offset: p.committed })
      }
    })
    if (done.length) {
      this.events.emit('commit', done)
      this.retention.committed()
    }
    if (lost.length) this.events.emit('revoked', lost)
    if (fenced.length) {
      throw new FencedError(`Commit of ${fenced.map((f) => tpKey(f.topic, f.partition)).join(', ')} by member ${this.member.id} of group "${this.opts.group}" was rejected: the partition is owned by another member now`)
    }
  }

  /** Commit the acked prefix of every owned partition now. Rejects with `FencedError` for lost partitions. */
  async commit(): Promise<void> {
    const lost = this.fenced.splice(0)
    await this.commitParts()
    if (lost.length) {
      throw new FencedError(`Partitions ${lost.map((t) => tpKey(t.topic, t.partition)).join(', ')} of group "${this.opts.group}" were taken from member ${this.member.id} (session timeout): their acks since the last commit were not committed`)
    }
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

  /** Continue a partition from `offset` (applied when the partition is acquired if it is not owned now). */
  seek(topic: string, partition: number, offset: number): void {
    if (!Number.isSafeInteger(offset) || offset < 0) throw new InvalidArgumentError(`seek offset must be a non-negative integer, got ${String(offset)}`)
    if (!this.topics.includes(topic)) throw new InvalidArgumentError(`This consumer does not consume topic "${topic}" (it consumes ${this.topics.join(', ')})`)
    const p = this.parts.get(tpKey(topic, partition))
    if (!p) return void this.pendingSeeks.set(tpKey(topic, partition), offset)
    this.forgetBuffered(p)
    this.outstanding -= p.outstandingCount
    p.reset(offset)
    p.committed = -1
    p.dirty = true
    this.fetchWake.wake()
    this.settleWake.wake()
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
