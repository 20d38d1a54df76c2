import { memberGone, memberProcess, type MemberProcess } from '../member-liveness.js'
import { InvalidArgumentError, GroupNotFoundError } from '../../core/errors.js'
import { checkGroupName } from '../../core/names.js'
import { assignPartitions, type TopicPartition } from '../assign.js'
import { partitionKey, type PartitionKey } from '../../core/partition-key.js'
import type { CommitRequest, GroupCoordinator, HeartbeatResult, Lease, MemberSpec } from '../group.js'
import type { GroupSnapshot } from '../group-admin.js'
import { redisError, type Client } from './connection.js'
import type { GroupNotifier } from './group-notify.js'
import type { RedisKeys } from './keys.js'
import { Scripts } from './scripts.js'
import type { DeliveryConfirm } from './shared/shared-confirm.js'

interface StoredMember extends MemberProcess {
  id: string
  name: string
  topics: string[]
  pid: number
  host: string
  sessionTimeoutMs: number
  /** Closing: keeps its session and leases while it drains, assigned nothing new. */
  leaving?: boolean
  /** A processor's member (absent for a consumer's). */
  processor?: boolean
}

function parseMembers(flat: readonly string[]): StoredMember[] {
  const out: StoredMember[] = []
  for (let i = 0; i + 1 < flat.length; i += 2) {
    try {
      out.push({ ...(JSON.parse(flat[i + 1] as string) as Omit<StoredMember, 'id'>), id: flat[i] as string })
    } catch {
      /* an unreadable member is skipped; it expires */
    }
  }
  return out
}

/**
 * Partitioned consumer groups on Redis (docs/format.md), with the semantics of the file group store:
 * members in a hash plus a zset of session expiries (joined and pruned in Lua), assignment computed
 * client-side with `assignPartitions`, and per-partition leases in `<partition>:g:<group>` hashes
 * next to the partition (owner, epoch from HINCRBY, expiry, committed offset). Leases are taken,
 * renewed, released and commits checked in Lua, each script on one partition's keys only.
 */
const COMMIT_LUA = Scripts.source('commit')

export class RedisGroupStore implements GroupCoordinator {
  constructor(
    private readonly client: Client,
    private readonly scripts: Scripts,
    private readonly keys: RedisKeys,
    private readonly notifier: GroupNotifier,
    /** Partition count of a topic (0 when it does not exist). */
    private readonly partitionsOf: (topic: string) => Promise<number>,
    /**
     * With `replicaAcks`: a commit counts once replicas hold it (a processor's output partitions
     * forget the outputs of inputs below a commit its writes carry; a failover must not take it back).
     */
    private readonly confirm?: DeliveryConfirm,
  ) {}

  private lease(tp: TopicPartition, group: string): string {
    return this.keys.partitionGroup(tp.topic, tp.partition, group)
  }

  private async partitions(topics: Iterable<string>): Promise<TopicPartition[]> {
    const list = [...new Set(topics)].sort()
    const counts = await Promise.all(list.map((t) => this.partitionsOf(t)))
    return list.flatMap((topic, i) =>
      Array.from({ length: counts[i] as number }, (_, partition) => ({ topic, partition })),
    )
  }

  private notify(group: string): void {
    void this.client.publish(this.keys.groupChannel(group), '1').catch(() => undefined)
  }

  async groupHeartbeat(
    group: string,
    member: MemberSpec,
    release: readonly TopicPartition[],
  ): Promise<HeartbeatResult> {
    checkGroupName(group)
    try {
      const now = Date.now()
      const spec = JSON.stringify({
        name: member.name,
        topics: member.topics,
        ...memberProcess(member.pid, member.host),
        sessionTimeoutMs: member.sessionTimeoutMs,
        leaving: member.leaving === true,
        ...(member.processor === true ? { processor: true } : {}),
      })
      const gk = [this.keys.groupMembers(group), this.keys.groupAlive(group), this.keys.groupTopics(group)] as const
      const [reply] = await Promise.all([
        this.scripts.call('member-join', gk, [member.id, spec, now, now + member.sessionTimeoutMs, ...member.topics]),
        this.client.sadd(this.keys.groups(), group),
      ])
      const [changedFlag, ...flat] = reply
      let changed = Number(changedFlag) === 1
      let members = parseMembers(flat)
      // A group is either partitioned or shared (a shared member refuses to join a partitioned group likewise).
      const shared = members.find(
        (m) => m.id !== member.id && (m as { mode?: unknown }).mode === 'shared' && !memberGone(m),
      )
      if (shared) {
        await this.scripts.call('member-leave', [gk[0], gk[1]], [member.id])
        throw new InvalidArgumentError(
          `Group "${group}" is a shared group (member ${shared.id} is live): use mode 'shared' or another group name; a group is either partitioned or shared`,
        )
      }
      const gone = members.filter((m) => m.id !== member.id && memberGone(m))
      if (gone.length) {
        await this.scripts.call(
          'member-leave',
          [gk[0], gk[1]],
          gone.map((m) => m.id),
        )
        members = members.filter((m) => !gone.includes(m))
        changed = true
      }
      if (release.length) {
        const released = await Promise.all(
          release.map((tp) => this.scripts.call('lease-release', [this.lease(tp, group)], [member.id])),
        )
        if (released.some((r) => Number(r) === 1)) changed = true
      }
      const partitions = await this.partitions(
        members
          .filter((m) => !m.leaving)
          .flatMap((m) => m.topics)
          .concat(member.topics),
      )
      const owners = await Promise.all(partitions.map((tp) => this.client.hget(this.lease(tp, group), 'owner')))
      const live = new Set(members.map((m) => m.id))
      const current = new Map<string, string>()
      partitions.forEach((tp, i) => {
        const o = owners[i]
        if (o && live.has(o)) current.set(partitionKey(tp.topic, tp.partition), o)
      })
      // Leaving members keep their leases until they release them, but are assigned nothing.
      const target = assignPartitions(
        partitions,
        members.filter((m) => !m.leaving),
        current,
      )
      // Renew what this member holds; take what is assigned to it and held by no live member.
      const want: Array<{ tp: TopicPartition; seen: string; mine: boolean }> = []
      partitions.forEach((tp, i) => {
        const o = owners[i] ?? ''
        const key = partitionKey(tp.topic, tp.partition)
        if (o === member.id) want.push({ tp, seen: o, mine: true })
        else if (!member.leaving && target.get(key) === member.id && (o === '' || !live.has(o)))
          want.push({ tp, seen: o, mine: false })
      })
      const expiry = now + member.sessionTimeoutMs
      const got = await Promise.all(
        want.map((w) =>
          this.scripts.call('lease-acquire', [this.lease(w.tp, group)], [member.id, w.seen, now, expiry]),
        ),
      )
      const owned: Lease[] = []
      const revoke: TopicPartition[] = []
      got.forEach((r, i) => {
        const res = r
        const w = want[i] as (typeof want)[number]
        if (res.length < 2) return
        if (!w.mine) changed = true
        const committed = res[1] === '' ? undefined : Number(res[1])
        owned.push({ topic: w.tp.topic, partition: w.tp.partition, epoch: Number(res[0]), committed })
        if (target.get(partitionKey(w.tp.topic, w.tp.partition)) !== member.id) revoke.push(w.tp)
      })
      if (changed) this.notify(group)
      return { owned, revoke }
    } catch (e) {
      throw redisError(`Heartbeat of member ${member.id} in group "${group}" failed`, e)
    }
  }

  async groupLeave(group: string, memberId: string): Promise<void> {
    checkGroupName(group)
    try {
      const spec = await this.client.hget(this.keys.groupMembers(group), memberId)
      const topics = spec
        ? (JSON.parse(spec) as StoredMember).topics
        : await this.client.smembers(this.keys.groupTopics(group))
      const partitions = await this.partitions(topics)
      await Promise.all(partitions.map((tp) => this.scripts.call('lease-release', [this.lease(tp, group)], [memberId])))
      await this.scripts.call('member-leave', [this.keys.groupMembers(group), this.keys.groupAlive(group)], [memberId])
      this.notify(group)
    } catch (e) {
      throw redisError(`Member ${memberId} could not leave group "${group}"`, e)
    }
  }

  async groupCommit(group: string, memberId: string, commits: readonly CommitRequest[]): Promise<TopicPartition[]> {
    checkGroupName(group)
    try {
      const confirm = this.confirm
      const res = await Promise.all(
        commits.map((c) =>
          confirm
            ? confirm.run(
                COMMIT_LUA,
                [this.lease(c, group)],
                [memberId, c.epoch, c.offset],
                `Commit of ${c.topic}/${c.partition} in group "${group}"`,
              )
            : this.scripts.call('commit', [this.lease(c, group)], [memberId, c.epoch, c.offset]),
        ),
      )
      return commits.filter((_, i) => Number(res[i]) !== 1).map((c) => ({ topic: c.topic, partition: c.partition }))
    } catch (e) {
      throw redisError(`Commit of member ${memberId} in group "${group}" failed`, e)
    }
  }

  watchGroup(group: string, onChange: () => void, persistent = true): () => void {
    return this.notifier.watch(this.keys.groupChannel(checkGroupName(group)), onChange, persistent)
  }

  /** Live members (session not expired, process not known to be gone: `memberGone`). */
  private async liveMembers(group: string): Promise<StoredMember[]> {
    const [flat, alive] = await Promise.all([
      this.client.hgetall(this.keys.groupMembers(group)),
      this.client.zrangebyscore(this.keys.groupAlive(group), Date.now(), '+inf'),
    ])
    const ids = new Set(alive)
    return parseMembers(Object.entries(flat).flat()).filter((m) => ids.has(m.id) && !memberGone(m))
  }

  /** The group as partitioned groups store it (shared groups write their `committed` there too); for `RedisGroupAdmin`. */
  async describeGroup(group: string): Promise<Omit<GroupSnapshot, 'pending'> | undefined> {
    checkGroupName(group)
    try {
      if (!(await this.client.sismember(this.keys.groups(), group))) return undefined
      const [members, topics] = await Promise.all([
        this.liveMembers(group),
        this.client.smembers(this.keys.groupTopics(group)),
      ])
      const partitions = await this.partitions(topics)
      const states = await Promise.all(
        partitions.map((tp) => this.client.hmget(this.lease(tp, group), 'owner', 'committed')),
      )
      const commits = new Map<PartitionKey, number>()
      const assignments = new Map<string, TopicPartition[]>(members.map((m) => [m.id, []]))
      partitions.forEach((tp, i) => {
        const [owner, committed] = states[i] as [string | null, string | null]
        if (committed !== null) commits.set(partitionKey(tp.topic, tp.partition), Number(committed))
        if (owner !== null) assignments.get(owner)?.push(tp)
      })
      return {
        group,
        members: members.map((m) => ({
          id: m.id,
          name: m.name,
          assignments: assignments.get(m.id) ?? [],
          ...(m.processor === true ? { processor: true as const } : {}),
        })),
        commits,
        topics: [...topics].sort(),
      }
    } catch (e) {
      throw redisError(`Cannot describe group "${group}"`, e)
    }
  }

  async listGroups(): Promise<string[]> {
    try {
      return (await this.client.smembers(this.keys.groups())).sort()
    } catch (e) {
      throw redisError('Cannot list groups', e)
    }
  }

  /** Overwrite the `committed` offsets (refused while live members, of either mode, consume `topic`). */
  async resetGroup(group: string, topic: string, offsets: ReadonlyMap<number, number>): Promise<void> {
    checkGroupName(group)
    const busy = (await this.liveMembers(group)).filter((m) => m.topics.includes(topic))
    if (busy.length > 0)
      throw new InvalidArgumentError(
        `Group "${group}" has ${busy.length} live member(s) consuming "${topic}": close them before resetting`,
      )
    try {
      await Promise.all(
        [...offsets].map(([partition, offset]) =>
          this.client.hset(this.lease({ topic, partition }, group), 'committed', String(offset)),
        ),
      )
      await Promise.all([
        this.client.sadd(this.keys.groupTopics(group), topic),
        this.client.sadd(this.keys.groups(), group),
      ])
      this.notify(group)
    } catch (e) {
      throw redisError(`Cannot reset group "${group}"`, e)
    }
  }

  /** Delete the group's members and per-partition state (refused with live members); resolves with the topics it had. */
  async deleteGroup(group: string): Promise<string[]> {
    checkGroupName(group)
    if (!(await this.client.sismember(this.keys.groups(), group)))
      throw new GroupNotFoundError(`Group "${group}" does not exist`)
    const live = (await this.liveMembers(group)).length
    if (live > 0)
      throw new InvalidArgumentError(`Group "${group}" has ${live} live member(s): close them before deleting it`)
    try {
      const topics = await this.client.smembers(this.keys.groupTopics(group))
      const partitions = await this.partitions(topics)
      await Promise.all(partitions.map((tp) => this.client.del(this.lease(tp, group))))
      await this.client.del(this.keys.groupMembers(group), this.keys.groupAlive(group), this.keys.groupTopics(group))
      await this.client.srem(this.keys.groups(), group)
      this.notify(group)
      return topics.sort()
    } catch (e) {
      throw redisError(`Cannot delete group "${group}"`, e)
    }
  }

  /**
   * The `committed` offsets of `topic` of every group that consumes it (either mode: shared groups
   * write theirs in the same hashes): three pipelined rounds however many groups and partitions.
   */
  async topicCommits(topic: string): Promise<Array<Map<number, number>>> {
    try {
      const groups = await this.client.smembers(this.keys.groups())
      const consuming = await Promise.all(groups.map((g) => this.client.sismember(this.keys.groupTopics(g), topic)))
      const list = groups.filter((_, i) => consuming[i] === 1)
      if (list.length === 0) return []
      const partitions = await this.partitionsOf(topic)
      const read = (g: string) =>
        Promise.all(
          Array.from({ length: partitions }, (_, p) =>
            this.client.hget(this.lease({ topic, partition: p }, g), 'committed'),
          ),
        )
      const values = await Promise.all(list.map(read))
      return values.map((vs) => new Map(vs.flatMap((v, p) => (v === null ? [] : [[p, Number(v)] as const]))))
    } catch (e) {
      throw redisError(`Cannot read the commits of "${topic}"`, e)
    }
  }
}
