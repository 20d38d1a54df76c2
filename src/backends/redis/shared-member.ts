import { randomBytes } from 'node:crypto'
import { FencedError } from '../../core/errors.js'
import type { TopicPartition } from '../assign.js'
import type { EntryRef, SharedDelivery, SharedMember, SharedMemberEvents, SharedMemberOptions } from '../shared.js'
import { redisError, type Client } from './connection.js'
import type { RedisKeys } from './keys.js'
import type { Scripts } from './scripts.js'
import type { Message } from '../../core/types.js'
import { decodePacked, parseHeader } from './reader.js'
import { SharedAcks } from './shared-acks.js'
import { refreshHeld } from './shared-touch.js'
import { delivery, idOf, isOffsetId, offsetOf, offsetsOf, ProducerIds, takeScripted, type MemberPartition } from './shared-entries.js'
import { GroupReader, type XReadGroupReply } from './shared-reader.js'

/** Longest a blocking read waits before the member looks for claimable entries again. */
const BLOCK_MS = 5000
/** Most entries one read asks for per partition. */
const READ_MAX = 1000
/** Entries per refresh script call. */
const TOUCH_BATCH = 1000
/** Least time between refreshes / claim scans (for tiny `claimAfterMs`). */
const MIN_PERIOD_MS = 5

/** How claims are made: XAUTOCLAIM with a cursor, or `XREADGROUP … CLAIM` (Redis ≥ 8.4). */
export type ClaimMode = 'autoclaim' | 'readgroup'

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
}

const isNoGroup = (e: unknown): boolean => e instanceof Error && /NOGROUP/.test(e.message)

/**
 * A member of a shared group on Redis: XREADGROUP competing consumers on every
 * partition stream of its topics, under the Redis consumer group named after the twainmq group.
 *
 * - **Recovery first.** A member starts by re-reading its own pending entries (`XREADGROUP` with an
 *   ID), moving a cursor past every entry returned, so an entry it never acknowledges cannot make it
 *   read the same entries forever (a livelock); then it reads new entries.
 * - **Claims.** At least every `claimAfterMs / 2` it scans the group's pending list (XAUTOCLAIM,
 *   keeping the cursor, or `XREADGROUP … CLAIM` on Redis ≥ 8.4) for entries idle longer than
 *   `claimAfterMs`: those of members that died or stalled.
 * - **Holding.** Every entry it handed out or buffered is *held* until acknowledged or given back; it
 *   refreshes held entries (XCLAIM to itself, JUSTID) every `claimAfterMs / 3` so others cannot
 *   claim them while it works, and it never hands out an entry it already holds (a claim that
 *   returns one is dropped). Entries it held and lost to another member are reported.
 * - **Acknowledgements** are batched ({@link SharedAcks}), flushed every `ackIntervalMs` and when leaving.
 * - **One name, one member.** Its registration carries a random token; a heartbeat that finds the
 *   name registered by another live member (this one was silent past `sessionTimeoutMs` and another
 *   joined under the name) stops it for good, without touching what is now the other one's (no
 *   give-back, no clean-up on leave), and reports it as `fenced`.
 */
export class RedisSharedMember implements SharedMember {
  readonly partitions: TopicPartition[]
  /** Tells this member's registration from another consumer's under the same name. */
  readonly token = randomBytes(8).toString('hex')
  private readonly index = new Map<string, MemberPartition[]>()
  private readonly byKey = new Map<string, MemberPartition>()
  private readonly readers: GroupReader[]
  private readonly ids = new ProducerIds()
  private readonly scanEveryMs: number
  private readonly touchEveryMs: number
  private nextScan = 0
  private readonly timers: NodeJS.Timeout[] = []
  private persistent = false
  /** Reads ended (`stop()`). */
  private stopped = false
  /** Timers ended too (`leave()` or `halt()`). */
  private halted = false
  private leaving: Promise<void> | undefined
  private touchRun: Promise<void> | undefined
  private readonly acks: SharedAcks
  /** Another live member registered under this name: what the name holds is that member's now. */
  private replaced = false
  /** Next partition a recovery or claim round starts with. */
  private rr = 0
  /** Wakes a `fetch` waiting on its reads. */
  private readDone: (() => void) | undefined
  /** The last read of new entries filled its count: read on with the packed script, without blocking. */
  private backlog = false
  /** `pause()`d: what a read under way returns goes back to the group. */
  private paused = false

  constructor(
    private readonly ctx: SharedContext,
    readonly options: SharedMemberOptions,
    readonly parts: readonly MemberPartition[],
    private readonly events: SharedMemberEvents,
    cluster: boolean,
  ) {
    this.partitions = parts.map((p) => ({ topic: p.topic, partition: p.partition }))
    for (const p of parts) {
      this.byKey.set(p.key, p)
      const list = this.index.get(p.topic) ?? []
      list[p.partition] = p
      this.index.set(p.topic, list)
    }
    this.acks = new SharedAcks(ctx.scripts, options.group, parts, (o) => events.committed(o), (e) => events.error(e))
    this.readers = cluster ? parts.map((p) => new GroupReader(ctx.client, [p])) : [new GroupReader(ctx.client, parts)]
    const claim = options.claimAfterMs
    this.scanEveryMs = Math.max(MIN_PERIOD_MS, Math.floor(claim / 2))
    this.touchEveryMs = Math.max(MIN_PERIOD_MS, Math.floor(claim / 3))
    this.timers.push(setInterval(() => void this.heartbeat(), options.heartbeatIntervalMs))
    this.timers.push(setInterval(() => void this.flush().catch((e) => this.events.error(e as Error)), options.ackIntervalMs))
    if (claim > 0) this.timers.push(setInterval(() => void this.touch(false), this.touchEveryMs))
    this.setPersistent(false)
  }

  get name(): string {
    return this.options.name
  }

  private get group(): string {
    return this.options.group
  }

  private part(ref: { topic: string; partition: number }): MemberPartition | undefined {
    return this.index.get(ref.topic)?.[ref.partition]
  }

  // ---- reading ------------------------------------------------------------------------

  async fetch(max: number, signal: AbortSignal): Promise<SharedDelivery[]> {
    if (this.stopped || signal.aborted) return []
    this.paused = false
    max = Math.max(1, Math.floor(max))
    try {
      // 1. What this member's name held before (a restart), partition by partition.
      for (let k = 0; k < this.parts.length; k++) {
        const p = this.parts[(this.rr + k) % this.parts.length] as MemberPartition
        while (p.recoverFrom !== undefined && !this.stopped) {
          const got = await this.recover(p, max)
          if (got.length) return got
        }
      }
      // 2. Entries idle too long in the group (dead or stalled members).
      if (Date.now() >= this.nextScan) {
        this.nextScan = Date.now() + this.scanEveryMs
        const got = await this.claim(max)
        if (got.length) return got
      }
      // 3. New entries.
      return await this.readNew(max, signal)
    } catch (e) {
      if (this.stopped) return []
      if (isNoGroup(e)) {
        await this.ctx.rejoin(this)
        return []
      }
      throw redisError(`Shared group "${this.group}": read of member "${this.name}" failed`, e)
    }
  }

  private async recover(p: MemberPartition, max: number): Promise<SharedDelivery[]> {
    const [last, flat, trimmed] = (await this.ctx.scripts.runBuffer('shared-recover', [p.key], [this.group, this.name, p.recoverFrom as string, Math.min(max, READ_MAX)])) as [Buffer, unknown[], unknown[]]
    if (this.stopped) return []
    p.recoverFrom = last.length === 0 ? undefined : last.toString('latin1')
    this.reportTrimmed(p, trimmed)
    return takeScripted(p, flat, Date.now(), this.ids)
  }

  private async claim(max: number): Promise<SharedDelivery[]> {
    const out: SharedDelivery[] = []
    const n = this.parts.length
    const start = this.rr++ % n
    for (let k = 0; k < n && out.length < max; k++) {
      const p = this.parts[(start + k) % n] as MemberPartition
      const mode = this.ctx.claimMode()
      let reply: [Buffer, unknown[], unknown[]]
      try {
        reply = (await this.ctx.scripts.runBuffer('shared-claim', [p.key], [this.group, this.name, this.options.claimAfterMs, p.claimCursor, Math.min(max - out.length, READ_MAX), mode])) as [Buffer, unknown[], unknown[]]
      } catch (e) {
        // A server that turns out not to know XREADGROUP … CLAIM: XAUTOCLAIM from now on.
        if (mode === 'readgroup' && e instanceof Error && /syntax|unknown|wrong number|CLAIM/i.test(e.message) && !isNoGroup(e)) {
          this.ctx.claimModeFailed()
          k--
          continue
        }
        throw e
      }
      if (this.stopped) return []
      p.claimCursor = reply[0].toString('latin1')
      this.reportTrimmed(p, reply[2])
      out.push(...takeScripted(p, reply[1], Date.now(), this.ids))
    }
    if (out.length >= max) this.nextScan = 0 // there may be more: scan on at the next fetch
    return out
  }

  private async readNew(max: number, signal: AbortSignal): Promise<SharedDelivery[]> {
    const per = Math.max(1, Math.min(READ_MAX, Math.floor(max / this.parts.length)))
    if (this.backlog && !this.readers.some((r) => r.pending !== undefined)) {
      const got = await this.readPacked(per)
      if (got.length > 0 || this.stopped) return got
    }
    const block = Math.max(1, Math.min(BLOCK_MS, this.nextScan - Date.now()))
    for (const r of this.readers) if (!r.pending) r.start(this.group, this.name, per, block, () => this.readEnded(r))
    if (!this.readers.some((r) => r.done)) {
      await new Promise<void>((resolve) => {
        const done = () => {
          this.readDone = undefined
          signal.removeEventListener('abort', done)
          resolve()
        }
        this.readDone = done
        signal.addEventListener('abort', done, { once: true })
      })
    }
    if (this.stopped || signal.aborted) return []
    const out: SharedDelivery[] = []
    let failure: unknown
    this.backlog = false
    for (const r of this.readers) {
      if (!r.done) continue
      try {
        this.takeRead(r, r.collect(), out)
      } catch (e) {
        failure ??= e
      }
    }
    if (failure !== undefined && out.length === 0) throw failure
    return out
  }

  /**
   * New entries of every partition through the `shared-read` script (one packed bulk string per
   * partition, far cheaper to decode than XREADGROUP's nested reply), while there is a backlog.
   */
  private async readPacked(per: number): Promise<SharedDelivery[]> {
    const blobs = (await Promise.all(this.parts.map((p) => this.ctx.scripts.runBuffer('shared-read', [p.key], [this.group, this.name, per])))) as Buffer[]
    const now = Date.now()
    const out: SharedDelivery[] = []
    const msgs: Message[] = []
    let full = false
    blobs.forEach((blob, i) => {
      if (blob.length === 0) return
      const p = this.parts[i] as MemberPartition
      const body = blob.subarray(1)
      const h = parseHeader(body)
      h.ids = blob[0] === 0x69 // 'i'
      if (h.count >= per) full = true
      msgs.length = 0
      decodePacked(body, h, p.codec, p.topic, p.partition, msgs)
      for (const m of msgs) {
        if (p.held.has(m.offset)) continue
        p.held.set(m.offset, { count: 1, refreshed: now })
        out.push({ message: m, deliveryCount: 1 })
      }
    })
    this.backlog = full
    return out
  }

  private readEnded(r: GroupReader): void {
    if (this.paused) void this.giveBackRead(r)
    this.readDone?.()
  }

  pause(): void {
    this.paused = true
    for (const r of this.readers) if (r.done) void this.giveBackRead(r)
  }

  /** A read that ended while paused: its entries go back, uncounted (they were never handed out). */
  private async giveBackRead(r: GroupReader): Promise<void> {
    const refs: EntryRef[] = []
    try {
      for (const [key, items] of r.collect() ?? []) {
        const p = r.parts.length === 1 ? r.parts[0] : this.byKey.get(key.toString())
        for (const [id] of p ? items : []) if (!p?.held.has(offsetOf(id))) refs.push({ topic: p?.topic as string, partition: p?.partition as number, offset: offsetOf(id) })
      }
      await this.giveBack(refs, false)
    } catch (e) {
      if (!this.stopped) this.events.error(redisError(`Shared group "${this.group}": member "${this.name}" could not give back ${refs.length} entries read while idle`, e))
    }
  }

  private takeRead(r: GroupReader, reply: XReadGroupReply, out: SharedDelivery[]): void {
    if (!reply) return
    const now = Date.now()
    for (const [key, items] of reply) {
      const p = r.parts.length === 1 ? (r.parts[0] as MemberPartition) : this.byKey.get(key.toString())
      if (!p) continue
      if (items.length >= r.count) this.backlog = true
      for (const [id, fields] of items) {
        const offset = offsetOf(id)
        if (!fields || p.held.has(offset)) continue
        let record: Buffer | undefined
        let producer: Buffer | undefined
        if (fields.length === 4 && (fields[0] as Buffer)[0] === 0x72) {
          record = fields[1] as Buffer // fields r, p in the order the append script writes them
          producer = fields[3] as Buffer
        } else {
          for (let i = 0; i + 1 < fields.length; i += 2) {
            const f = fields[i] as Buffer
            if (f.length === 1 && f[0] === 0x72) record = fields[i + 1]
            else if (f.length === 1 && f[0] === 0x70) producer = fields[i + 1]
          }
        }
        if (!record) {
          if (isOffsetId(id)) p.dropForeign(offset, now)
          continue
        }
        p.held.set(offset, { count: 1, refreshed: now })
        out.push(delivery(p, offset, record, producer ? this.ids.of(producer) : '', 1))
      }
    }
  }

  private reportTrimmed(p: MemberPartition, ids: unknown): void {
    const offsets = offsetsOf(ids)
    if (offsets.length === 0) return
    for (const o of offsets) p.held.delete(o)
    this.events.trimmed(offsets.map((o) => p.ref(o)))
  }

  // ---- acknowledgements -----------------------------------------------------------------

  ack(ref: EntryRef): void {
    const p = this.part(ref)
    if (p) this.acks.ack(p, ref.offset)
  }

  flush(): Promise<void> {
    return this.acks.flush()
  }

  // ---- holding --------------------------------------------------------------------------

  /** Refresh held entries (all of them, or those not refreshed for a period). */
  private touch(all: boolean): Promise<void> {
    if (this.touchRun || this.halted) return this.touchRun ?? Promise.resolve()
    const run = (async () => {
      await this.flush().catch((e) => this.events.error(e as Error))
      const now = Date.now()
      const stale = all ? Infinity : now - this.touchEveryMs
      const onError = (e: Error) => void (this.halted || this.events.error(e))
      const lost = (await Promise.all(this.parts.map((p) => refreshHeld(this.ctx.scripts, this.group, this.name, p, stale, now, onError)))).flat()
      if (lost.length) this.events.lost(lost)
    })()
    this.touchRun = run
    void run.finally(() => {
      if (this.touchRun === run) this.touchRun = undefined
    })
    return run
  }

  async refresh(): Promise<void> {
    this.nextScan = 0
    await Promise.all([this.touch(true), this.heartbeat()])
  }

  async redeliver(entries: readonly EntryRef[]): Promise<SharedDelivery[]> {
    const out: SharedDelivery[] = []
    const lost: EntryRef[] = []
    for (const [p, offsets] of this.byPartition(entries)) {
      const [flat, gone, trimmed] = (await this.ctx.scripts.runBuffer('shared-redeliver', [p.key], [this.group, this.name, ...offsets.map(idOf)])) as [unknown[], unknown[], unknown[]]
      for (const o of offsetsOf(gone)) {
        if (p.held.delete(o)) lost.push(p.ref(o))
      }
      this.reportTrimmed(p, trimmed)
      const now = Date.now()
      for (let i = 0; i + 3 < flat.length; i += 4) {
        const offset = offsetOf(flat[i] as Buffer)
        const count = Number(flat[i + 1])
        p.held.set(offset, { count, refreshed: now })
        out.push(delivery(p, offset, flat[i + 2] as Buffer, this.ids.of(flat[i + 3] as Buffer), count))
      }
    }
    if (lost.length) this.events.lost(lost)
    return out
  }

  async giveBack(entries: readonly EntryRef[], delivered: boolean): Promise<void> {
    if (this.replaced) return // the name's entries are the other member's now
    if (this.touchRun) await this.touchRun.catch(() => undefined) // a refresh under way would make them fresh again
    for (const [p, offsets] of this.byPartition(entries)) {
      for (const o of offsets) p.held.delete(o)
      for (let i = 0; i < offsets.length; i += TOUCH_BATCH) {
        const chunk = offsets.slice(i, i + TOUCH_BATCH)
        await this.ctx.scripts.run('shared-release', [p.key], [this.group, this.name, this.options.claimAfterMs, delivered ? '0' : '1', ...chunk.map(idOf)])
      }
    }
  }

  private byPartition(entries: readonly EntryRef[]): Map<MemberPartition, number[]> {
    const by = new Map<MemberPartition, number[]>()
    for (const e of entries) {
      const p = this.part(e)
      if (!p) continue
      const list = by.get(p) ?? []
      list.push(e.offset)
      by.set(p, list)
    }
    return by
  }

  // ---- membership -----------------------------------------------------------------------

  private async heartbeat(): Promise<void> {
    if (this.halted) return
    try {
      const other = await this.ctx.register(this)
      if (other && !this.halted) this.fence(other)
    } catch (e) {
      if (!this.halted) this.events.error(redisError(`Shared group "${this.group}": heartbeat of member "${this.name}" failed`, e))
    }
  }

  /** Another live member has this name: stop for good, leaving everything to it. */
  private fence(other: { pid?: number; host?: string }): void {
    this.replaced = true
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
    for (const r of this.readers) r.pin(on)
  }

  /** Whether the member's blocking reads and timers keep the process alive. */
  get isPersistent(): boolean {
    return this.persistent
  }

  stop(): void {
    if (this.stopped) return
    this.stopped = true
    for (const r of this.readers) r.stop()
    this.readDone?.()
  }

  /** Stop reads and timers without leaving (the backend is closing). */
  halt(): void {
    this.stop()
    this.halted = true
    for (const t of this.timers) clearInterval(t)
  }

  leave(): Promise<void> {
    this.leaving ??= (async () => {
      this.stop()
      if (this.touchRun) await this.touchRun.catch(() => undefined)
      this.halted = true
      for (const t of this.timers) clearInterval(t)
      const steps: Array<() => Promise<unknown>> = [
        () => this.flush(),
        // Still this member's name? (A member replaced meanwhile must not clean up the other's.)
        async () => {
          if (!this.replaced && (await this.ctx.register(this))) this.replaced = true
        },
        // Deleted where it holds nothing; elsewhere what it still holds becomes claimable at once.
        () => (this.replaced ? Promise.resolve() : Promise.all(this.parts.map((p) => this.ctx.scripts.run('shared-leave', [p.key], [this.group, this.name, this.options.claimAfterMs])))),
        () => (this.replaced ? Promise.resolve() : this.ctx.unregister(this)),
      ]
      // Every step runs even if one fails (BullMQ's close), the first failure is reported.
      for (const step of steps) {
        try {
          await step()
        } catch (e) {
          this.events.error(redisError(`Shared group "${this.group}": member "${this.name}" could not leave cleanly`, e))
        }
      }
      for (const p of this.parts) p.held.clear()
      this.ctx.onLeft(this)
    })()
    return this.leaving
  }
}
