import { partitionKey, type PartitionKey } from '../../../core/partition-key.js'
import { Cluster } from 'ioredis'
import { HOST } from '../../liveness.js'
import { memberGone, memberProcess, type MemberProcess } from '../../member-liveness.js'
import { InvalidArgumentError, TopicNotFoundError } from '../../../core/errors.js'
import { keyCodec } from '../../../core/keys.js'
import { checkGroupName } from '../../../core/names.js'
import type { TopicPartition } from '../../assign.js'
import type { TopicMeta } from '../../backend.js'
import type { SharedGroups, SharedMember, SharedMemberEvents, SharedMemberOptions } from '../../shared.js'
import { redisError, type Client } from '../connection.js'
import type { RedisKeys } from '../keys.js'
import type { Scripts } from '../scripts.js'
import { idOf } from '../entry-codec.js'
import { isNoGroup } from './no-group.js'
import type { DeliveryConfirm } from './shared-confirm.js'
import { MemberPartition } from './shared-entries.js'
import { RedisSharedMember, type SharedContext } from './shared-member.js'
import type { ClaimMode } from './shared-state.js'

/** A partition's group forgets members idle this long that hold nothing (checked when a member joins). */
const FORGET_IDLE_MS = 10 * 60_000

interface StoredSpec extends MemberProcess {
  name?: string
  /** Which consumer registered it (a random id per member). */
  token?: string
  topics?: string[]
  mode?: string
}

/**
 * Shared groups on Redis (`mode: 'shared'`): on every partition stream of its topics a
 * Redis consumer group named after the twainmq group (`XGROUP CREATE <stream> <group> 0|$ MKSTREAM`
 * on first use), read by {@link RedisSharedMember}s with XREADGROUP.
 *
 * Members also register in the group's member hash (`member-join`, with `mode: 'shared'` and
 * marked as never taking partitions), so `describeGroup`, `listGroups` and the refusal to delete or
 * reset a group with live members work as for partitioned groups; after each acknowledgement batch
 * the group's `committed` offset of the partition (oldest pending entry, else the one after the last
 * delivered) is written where partitioned groups keep theirs, for `describeGroup` and
 * `retention: { consumed: true }`. A group is either partitioned or shared: joining a group with live
 * partitioned members is refused.
 */
export class RedisSharedGroups implements SharedGroups {
  private readonly members = new Set<RedisSharedMember>()
  /** `<group>\0<name>` of this instance's members (joined or joining). */
  private readonly names = new Set<string>()
  private mode: ClaimMode | undefined
  /** For tests: use this claim mode instead of detecting it from the server version. */
  forceClaimMode: ClaimMode | undefined

  constructor(
    private readonly client: Client,
    private readonly scripts: Scripts,
    private readonly keys: RedisKeys,
    /** A topic's configuration (`TopicNotFoundError` when absent). */
    private readonly topic: (name: string) => Promise<TopicMeta>,
    /** With `replicaAcks`: members hand entries out once replicas hold their delivery. */
    private readonly confirm?: DeliveryConfirm,
  ) {}

  /** `XREADGROUP … CLAIM` exists from Redis 8.4; older servers (and Valkey, which reports 7.x) use XAUTOCLAIM. */
  private async detectClaimMode(): Promise<ClaimMode> {
    if (this.forceClaimMode) return this.forceClaimMode
    if (this.mode) return this.mode
    let mode: ClaimMode = 'autoclaim'
    try {
      const info = String(await this.client.info('server'))
      const v = /redis_version:(\d+)\.(\d+)/.exec(info)
      const major = Number(v?.[1] ?? 0)
      const minor = Number(v?.[2] ?? 0)
      if (major > 8 || (major === 8 && minor >= 4)) mode = 'readgroup'
    } catch {
      /* INFO may be renamed or refused: the portable way */
    }
    this.mode = mode
    return mode
  }

  /** The claim mode in use (after the first join). */
  get claimMode(): ClaimMode | undefined {
    return this.forceClaimMode ?? this.mode
  }

  async join(options: SharedMemberOptions, events: SharedMemberEvents): Promise<SharedMember> {
    const group = checkGroupName(options.group)
    const id = `${group}\0${options.name}`
    if (this.names.has(id)) {
      throw new InvalidArgumentError(
        `Member name "${options.name}" is in use in shared group "${group}" by another consumer of this instance: close it first, or use another name`,
      )
    }
    this.names.add(id)
    try {
      return await this.joinAs(group, options, events)
    } catch (e) {
      this.names.delete(id)
      throw e
    }
  }

  private async joinAs(group: string, options: SharedMemberOptions, events: SharedMemberEvents): Promise<SharedMember> {
    const metas = await Promise.all(options.topics.map((t) => this.topic(t)))
    const replace = await this.checkMembers(options)
    await this.detectClaimMode()
    const parts = metas.flatMap((m) =>
      Array.from(
        { length: m.partitions },
        (_, p) => new MemberPartition(m.name, p, keyCodec(m.keyType), this.keys, group),
      ),
    )
    await this.ensure(parts, options)
    const ctx: SharedContext = {
      client: this.client,
      scripts: this.scripts,
      keys: this.keys,
      rejoin: async (m) => {
        for (const t of m.options.topics) await this.topic(t)
        await this.ensure(m.parts, m.options)
      },
      register: (m) => this.register(m.options, m.token),
      unregister: (m) => this.unregister(m.options),
      claimMode: () => this.forceClaimMode ?? this.mode ?? 'autoclaim',
      claimModeFailed: () => {
        this.mode = 'autoclaim'
      },
      ...(this.confirm ? { confirm: this.confirm } : {}),
      onLeft: (m) => {
        this.members.delete(m)
        this.names.delete(`${group}\0${m.name}`)
      },
    }
    const member = new RedisSharedMember(ctx, options, parts, events, this.client instanceof Cluster)
    this.members.add(member)
    let taken: StoredSpec | undefined
    try {
      taken = await this.register(options, member.token, replace)
    } catch (e) {
      member.halt()
      this.members.delete(member)
      throw redisError(`Member "${options.name}" could not join shared group "${group}"`, e)
    }
    if (taken) {
      member.halt()
      this.members.delete(member)
      throw new InvalidArgumentError(
        `Member name "${options.name}" is in use in shared group "${group}" by a live member (pid ${taken.pid} on ${taken.host}): member names must be unique among live members`,
      )
    }
    return member
  }

  /** Create the partition groups where missing (and record `committed`). */
  private async ensure(parts: readonly MemberPartition[], options: SharedMemberOptions): Promise<void> {
    try {
      await Promise.all(
        parts.map((p) =>
          this.scripts.call('shared-join', [p.key, p.stateKey], [options.group, startId(p, options), FORGET_IDLE_MS]),
        ),
      )
    } catch (e) {
      throw redisError(
        `Cannot create shared group "${options.group}" on ${options.topics.map((t) => `"${t}"`).join(', ')}`,
        e,
      )
    }
  }

  /** Live members of a group, with their stored specs. */
  private async liveSpecs(group: string): Promise<Array<[string, StoredSpec]>> {
    const [flat, alive] = await Promise.all([
      this.client.hgetall(this.keys.groupMembers(group)),
      this.client.zrangebyscore(this.keys.groupAlive(group), Date.now(), '+inf'),
    ])
    const live = new Set(alive)
    const out: Array<[string, StoredSpec]> = []
    for (const [id, json] of Object.entries(flat)) {
      if (!live.has(id)) continue
      let spec: StoredSpec
      try {
        spec = JSON.parse(json) as StoredSpec
      } catch {
        continue
      }
      if (memberGone(spec)) continue // dead at once, as for partitioned groups
      out.push([id, spec])
    }
    return out
  }

  /**
   * Refuse a group with live partitioned members. Returns the stored spec of a member under this
   * name whose process is known to be gone (`memberGone`), which registering may replace at once.
   */
  private async checkMembers(o: SharedMemberOptions): Promise<string> {
    let specs: Array<[string, StoredSpec]>
    let stored: string | null
    try {
      ;[specs, stored] = await Promise.all([
        this.liveSpecs(o.group),
        this.client.hget(this.keys.groupMembers(o.group), o.name),
      ])
    } catch (e) {
      throw redisError(`Cannot read the members of group "${o.group}"`, e)
    }
    for (const [id, spec] of specs) {
      if (spec.mode !== 'shared') {
        throw new InvalidArgumentError(
          `Group "${o.group}" is a partitioned group (member ${id} is live): use mode 'partitioned' or another group name; a group is either partitioned or shared`,
        )
      }
    }
    return stored !== null && !specs.some(([id]) => id === o.name) ? stored : ''
  }

  /**
   * Register (or refresh) a member, in one script with the name check: resolves `undefined`, or the
   * spec of the live member of another consumer that has the name (then nothing was written).
   */
  private async register(o: SharedMemberOptions, token: string, replace = ''): Promise<StoredSpec | undefined> {
    const now = Date.now()
    // `leaving: true` keeps partitioned assignment from ever counting a shared member.
    const spec = JSON.stringify({
      name: o.name,
      topics: [...o.topics].sort(),
      ...memberProcess(process.pid, HOST),
      sessionTimeoutMs: o.sessionTimeoutMs,
      leaving: true,
      mode: 'shared',
      token,
    })
    const gk = [this.keys.groupMembers(o.group), this.keys.groupAlive(o.group), this.keys.groupTopics(o.group)] as const
    const [[ok, other]] = await Promise.all([
      this.scripts.call('shared-member-join', gk, [
        o.name,
        spec,
        now,
        now + o.sessionTimeoutMs,
        token,
        replace,
        ...o.topics,
      ]),
      this.client.sadd(this.keys.groups(), o.group),
    ])
    if (ok === 1) return undefined
    try {
      return JSON.parse(other ?? '{}') as StoredSpec
    } catch {
      return {}
    }
  }

  private async unregister(o: SharedMemberOptions): Promise<void> {
    await this.scripts.call('member-leave', [this.keys.groupMembers(o.group), this.keys.groupAlive(o.group)], [o.name])
  }

  private async partitionsOf(topics: readonly string[]): Promise<TopicPartition[]> {
    const out: TopicPartition[] = []
    for (const topic of [...new Set(topics)].sort()) {
      let meta: TopicMeta
      try {
        meta = await this.topic(topic)
      } catch (e) {
        if (e instanceof TopicNotFoundError) continue
        throw e
      }
      for (let partition = 0; partition < meta.partitions; partition++) out.push({ topic, partition })
    }
    return out
  }

  /** Pending counts per partition and live shared members, or `undefined` when no partition of `topics` has the group (for `RedisGroupAdmin`). */
  async describeGroup(
    group: string,
    topics: readonly string[],
  ): Promise<{ pending: Map<PartitionKey, number>; members: Map<string, TopicPartition[]> } | undefined> {
    const parts = await this.partitionsOf(topics)
    const pending = new Map<PartitionKey, number>()
    try {
      await Promise.all(
        parts.map(async (tp) => {
          try {
            const s = (await this.client.xpending(this.keys.stream(tp.topic, tp.partition), group)) as unknown[]
            pending.set(partitionKey(tp.topic, tp.partition), Number(s[0] ?? 0))
          } catch (e) {
            if (!isNoGroup(e)) throw e
          }
        }),
      )
    } catch (e) {
      throw redisError(`Cannot describe shared group "${group}"`, e)
    }
    if (pending.size === 0) return undefined
    const members = new Map<string, TopicPartition[]>()
    for (const [id, spec] of await this.liveSpecs(group)) {
      if (spec.mode !== 'shared') continue
      const mine = new Set(spec.topics ?? [])
      members.set(
        id,
        parts.filter((tp) => mine.has(tp.topic)),
      )
    }
    return { pending, members }
  }

  /** Move the group's read position of a topic where it exists (pending entries stay pending). */
  async resetGroup(group: string, topic: string, offsets: ReadonlyMap<number, number>): Promise<void> {
    try {
      await Promise.all(
        [...offsets].map(async ([partition, offset]) => {
          try {
            await this.client.xgroup(
              'SETID',
              this.keys.stream(topic, partition),
              group,
              offset <= 0 ? '0' : idOf(offset - 1),
            )
          } catch (e) {
            if (!isNoGroup(e)) throw e
          }
        }),
      )
    } catch (e) {
      throw redisError(`Cannot reset shared group "${group}" on "${topic}"`, e)
    }
  }

  /** Destroy the group's Redis consumer group on every partition of `topics`. */
  async deleteGroup(group: string, topics: readonly string[]): Promise<void> {
    const parts = await this.partitionsOf(topics)
    try {
      await Promise.all(
        parts.map(async (tp) => {
          try {
            await this.client.xgroup('DESTROY', this.keys.stream(tp.topic, tp.partition), group)
          } catch (e) {
            if (!isNoGroup(e)) throw e
          }
        }),
      )
    } catch (e) {
      throw redisError(`Cannot delete shared group "${group}"`, e)
    }
  }

  /** Stop every member's reads at once (the backend is closing). */
  close(): void {
    for (const m of this.members) m.halt()
    this.members.clear()
    this.names.clear()
  }
}

/**
 * Where a new group starts on a partition: '0' (every retained entry) for `from: 'start'`; for
 * `'end'`, after the last entry below the end when `consumer()` was called (entry IDs are
 * `<offset>-1`), so a message sent right after is delivered; '$' where that end is not known.
 */
function startId(p: MemberPartition, options: SharedMemberOptions): string {
  if (options.from !== 'end') return '0'
  const end = options.ends?.get(p.topic)?.[p.partition]
  if (end === undefined) return '$'
  return end === 0 ? '0' : `${end - 1}-1`
}
