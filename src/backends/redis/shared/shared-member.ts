import { randomBytes } from 'node:crypto'
import { FencedError } from '../../../core/errors.js'
import type { TopicPartition } from '../../assign.js'
import type { EntryRef, SharedDelivery, SharedMember, SharedMemberEvents, SharedMemberOptions } from '../../shared.js'
import { redisError, type Client } from '../connection.js'
import type { RedisKeys } from '../keys.js'
import type { Scripts } from '../scripts.js'
import { SharedAcks } from './shared-acks.js'
import type { DeliveryConfirm } from './shared-confirm.js'
import type { MemberPartition } from './shared-entries.js'
import { SharedHolds } from './shared-holds.js'
import { SharedReads } from './shared-reads.js'
import { MemberState, type ClaimMode } from './shared-state.js'

/** What a member needs from its backend. */
export interface SharedContext {
  client: Client
  scripts: Scripts
  keys: RedisKeys
  /** Re-create the partition groups (after a Redis restart without persistence, or a deleted stream). */
  rejoin(member: RedisSharedMember): Promise<void>
  /** Refresh the member's registration in the group (a heartbeat); resolves with the spec of another live member that has its name, if one does. */
  register(member: RedisSharedMember): Promise<{ pid?: number; host?: string } | undefined>
  unregister(member: RedisSharedMember): Promise<void>
  /** The claim mode to use now (detected from the server version; may change to 'autoclaim' once). */
  claimMode(): ClaimMode
  claimModeFailed(): void
  onLeft(member: RedisSharedMember): void
  /** With `replicaAcks`: confirms deliveries with replicas before they are handed out. */
  confirm?: DeliveryConfirm
}

/**
 * A member of a shared group on Redis: XREADGROUP competing consumers on every
 * partition stream of its topics, under the Redis consumer group named after the twainmq group.
 * It is made of four parts, one concern each:
 *
 * - **Reads** ({@link SharedReads}): recovery of its own pending entries first, then its own pending
 *   entries it never got (a read whose reply was lost), then claims of entries idle longer than
 *   `claimAfterMs` (those of members that died or stalled), then new entries.
 * - **Holds** ({@link SharedHolds}): every entry it handed out or buffered is held until
 *   acknowledged or given back, and refreshed so others cannot claim it while it works.
 * - **Acknowledgements** ({@link SharedAcks}), batched, flushed every `ackIntervalMs` and when leaving.
 * - **Membership** (here): heartbeats, leaving, and one name, one member. Its registration carries a
 *   random token; a heartbeat that finds the name registered by another live member (this one was
 *   silent past `sessionTimeoutMs` and another joined under the name) stops it for good, without
 *   touching what is now the other one's (no give-back, no clean-up on leave), and reports it as `fenced`.
 */
export class RedisSharedMember implements SharedMember {
  readonly partitions: TopicPartition[]
  /** Tells this member's registration from another consumer's under the same name. */
  readonly token = randomBytes(8).toString('hex')
  private readonly s: MemberState
  private readonly reads: SharedReads
  private readonly holds: SharedHolds
  private readonly acks: SharedAcks
  private readonly timers: NodeJS.Timeout[] = []
  private persistent = false
  private leaving: Promise<void> | undefined

  constructor(
    private readonly ctx: SharedContext,
    readonly options: SharedMemberOptions,
    readonly parts: readonly MemberPartition[],
    private readonly events: SharedMemberEvents,
    cluster: boolean,
  ) {
    this.partitions = parts.map((p) => ({ topic: p.topic, partition: p.partition }))
    this.s = new MemberState(ctx.scripts, options, parts, events)
    this.acks = new SharedAcks(
      ctx.scripts,
      options.group,
      parts,
      (o) => events.committed(o),
      (e) => events.error(e),
      ctx.confirm,
    )
    this.holds = new SharedHolds(this.s, this.acks)
    this.reads = new SharedReads(
      this.s,
      ctx.client,
      cluster,
      {
        rejoin: () => ctx.rejoin(this),
        claimMode: () => ctx.claimMode(),
        claimModeFailed: () => ctx.claimModeFailed(),
        giveBack: (refs) => this.giveBack(refs, false),
      },
      ctx.confirm,
    )
    this.timers.push(setInterval(() => void this.heartbeat(), options.heartbeatIntervalMs))
    this.timers.push(
      setInterval(() => void this.flush().catch((e) => this.events.error(e as Error)), options.ackIntervalMs),
    )
    if (options.claimAfterMs > 0)
      this.timers.push(setInterval(() => void this.holds.touch(false), this.holds.touchEveryMs))
    this.setPersistent(false)
  }

  get name(): string {
    return this.options.name
  }

  private get group(): string {
    return this.options.group
  }

  fetch(max: number, signal: AbortSignal): Promise<SharedDelivery[]> {
    return this.reads.fetch(max, signal)
  }

  pause(): void {
    this.reads.pause()
  }

  ack(ref: EntryRef): void {
    const p = this.s.part(ref)
    if (p) this.acks.ack(p, ref.offset)
  }

  flush(): Promise<void> {
    return this.acks.flush()
  }

  async refresh(): Promise<void> {
    this.reads.scanNow()
    await Promise.all([this.holds.touch(true), this.heartbeat()])
  }

  redeliver(entries: readonly EntryRef[]): Promise<SharedDelivery[]> {
    return this.holds.redeliver(entries)
  }

  giveBack(entries: readonly EntryRef[], delivered: boolean): Promise<void> {
    return this.holds.giveBack(entries, delivered)
  }

  // ---- membership -----------------------------------------------------------------------

  private async heartbeat(): Promise<void> {
    if (this.s.halted) return
    try {
      const other = await this.ctx.register(this)
      if (other && !this.s.halted) this.fence(other)
    } catch (e) {
      if (!this.s.halted)
        this.events.error(redisError(`Shared group "${this.group}": heartbeat of member "${this.name}" failed`, e))
    }
  }

  /** Another live member has this name: stop for good, leaving everything to it. */
  private fence(other: { pid?: number; host?: string }): void {
    this.s.replaced = true
    this.halt()
    this.events.fenced(
      new FencedError(
        `Member "${this.name}" of shared group "${this.group}" was replaced: another member (pid ${other.pid} on ${other.host}) joined under its name after it was silent longer than sessionTimeoutMs (${this.options.sessionTimeoutMs} ms); it stopped, and what it held is the other member's now`,
      ),
    )
  }

  setPersistent(on: boolean): void {
    this.persistent = on
    for (const t of this.timers) on ? t.ref() : t.unref()
    this.reads.pin(on)
  }

  /** Whether the member's blocking reads and timers keep the process alive. */
  get isPersistent(): boolean {
    return this.persistent
  }

  stop(): void {
    if (this.s.stopped) return
    this.s.stopped = true
    this.reads.stop()
  }

  /** Stop reads and timers without leaving (the backend is closing). */
  halt(): void {
    this.stop()
    this.s.halted = true
    for (const t of this.timers) clearInterval(t)
  }

  leave(): Promise<void> {
    this.leaving ??= (async () => {
      this.stop()
      const refreshing = this.holds.refreshing
      if (refreshing) await refreshing.catch(() => undefined)
      this.s.halted = true
      for (const t of this.timers) clearInterval(t)
      const s = this.s
      const steps: Array<() => Promise<unknown>> = [
        () => this.flush(),
        // Still this member's name? (A member replaced meanwhile must not clean up the other's.)
        async () => {
          if (!s.replaced && (await this.ctx.register(this))) s.replaced = true
        },
        // Deleted where it holds nothing; elsewhere what it still holds becomes claimable at once.
        () =>
          s.replaced
            ? Promise.resolve()
            : Promise.all(
                this.parts.map((p) =>
                  this.ctx.scripts.call('shared-leave', [p.key], [this.group, this.name, this.options.claimAfterMs]),
                ),
              ),
        () => (s.replaced ? Promise.resolve() : this.ctx.unregister(this)),
      ]
      // Every step runs even if one fails (BullMQ's close), the first failure is reported.
      for (const step of steps) {
        try {
          await step()
        } catch (e) {
          this.events.error(
            redisError(`Shared group "${this.group}": member "${this.name}" could not leave cleanly`, e),
          )
        }
      }
      for (const p of this.parts) p.held.clear()
      this.ctx.onLeft(this)
    })()
    return this.leaving
  }
}
