import { randomBytes } from 'node:crypto'
import { existsSync, readFileSync, readdirSync, renameSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import { InvalidArgumentError, backendError, GroupNotFoundError } from '../../core/errors.js'
import { checkGroupName } from '../../core/names.js'
import { memberGone, memberProcess } from '../member-liveness.js'
import { assignPartitions, type TopicPartition } from '../assign.js'
import { partitionKey, splitPartitionKey } from '../../core/partition-key.js'
import type { CommitRequest, GroupCoordinator, HeartbeatResult, Lease, MemberSpec } from '../group.js'
import type { GroupAdmin, GroupSnapshot } from '../group-admin.js'
import { parseGroupState, type GroupState, type StoredMember } from './group-state.js'
import { PartitionLock } from './partition-lock.js'
import { isRealDir, replaceFile } from './safe-fs.js'
import { makeDirs } from './make-dirs.js'
import type { WatchHub } from './watch-hub.js'

const STATE = 'state.json'

/** Alive: heartbeated within its session timeout, and its process not known to be gone (`memberGone`). */
function alive(m: StoredMember, now: number): boolean {
  return now - m.lastSeen <= m.sessionTimeoutMs && !memberGone(m)
}

/**
 * Consumer-group coordination and administration on files (docs/format.md): one small state file
 * per group, changed under a lock. Partitioned groups only (the file backend has no shared mode).
 */
export class FileGroupStore implements GroupCoordinator, GroupAdmin {
  constructor(
    private readonly root: string,
    private readonly hub: WatchHub,
    /** Partition count of a topic, or undefined when it does not exist (synchronous; called under the lock). */
    private readonly partitionsOf: (topic: string) => number | undefined,
  ) {}

  private dir(group: string): string {
    return join(this.root, '__groups', checkGroupName(group))
  }

  private read(dir: string): GroupState | undefined {
    const file = join(dir, STATE)
    let text: string
    try {
      if (!isRealDir(dir, 'group directory')) return undefined
      text = readFileSync(file, 'utf8')
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined
      throw backendError(`Cannot read group state ${file}`, e)
    }
    return parseGroupState(text, file)
  }

  private write(dir: string, state: GroupState): void {
    replaceFile(join(dir, STATE), JSON.stringify(state))
  }

  /** The group's directory, created if asked; a planted symlink in its place is refused. */
  private ensureDir(group: string, create: boolean): string {
    const dir = this.dir(group)
    try {
      isRealDir(join(this.root, '__groups'), 'groups directory')
      if (isRealDir(dir, 'group directory') || !create) return dir
      makeDirs(dir, 'a group directory')
      isRealDir(dir, 'group directory')
      return dir
    } catch (e) {
      throw backendError(`Cannot create the directory of group "${group}"`, e)
    }
  }

  /** Run `fn` on the group's state under its lock; `fn` returns whether it changed the state. */
  private async locked<T>(
    group: string,
    create: boolean,
    fn: (s: GroupState, now: number) => { changed: boolean; result: T },
  ): Promise<T> {
    const dir = this.ensureDir(group, create)
    if (!create && !existsSync(join(dir, STATE))) throw new GroupNotFoundError(`Group "${group}" does not exist`)
    const lock = new PartitionLock(`${dir}.lock`) // beside the group directory, so its watchers stay quiet
    await lock.acquire()
    try {
      const state = this.read(dir) ?? { version: 1, epoch: 0, members: {}, owners: {}, commits: {}, topics: [] }
      const { changed, result } = fn(state, Date.now())
      if (changed) this.write(dir, state)
      return result
    } finally {
      lock.release()
      lock.dispose()
    }
  }

  /**
   * `partitionsOf` asked once per topic within one locked step: it reads topic.json, and asking per
   * lease made a heartbeat of a member owning 10,000 partitions read it 10,000 times.
   */
  private counter(): (topic: string) => number | undefined {
    const seen = new Map<string, number | undefined>()
    return (topic) => {
      if (!seen.has(topic)) seen.set(topic, this.partitionsOf(topic))
      return seen.get(topic)
    }
  }

  /** Drop dead members and the leases of members or topics that are gone. */
  private prune(s: GroupState, now: number, partitionsOf = this.counter()): boolean {
    let changed = false
    for (const [id, m] of Object.entries(s.members)) {
      if (!alive(m, now)) {
        delete s.members[id]
        changed = true
      }
    }
    for (const [key, o] of Object.entries(s.owners)) {
      const { topic, partition } = splitPartitionKey(key)
      const count = partitionsOf(topic)
      if (!s.members[o.member] || count === undefined || partition >= count) {
        delete s.owners[key]
        changed = true
      }
    }
    return changed
  }

  async groupHeartbeat(
    group: string,
    member: MemberSpec,
    release: readonly TopicPartition[],
  ): Promise<HeartbeatResult> {
    return this.locked(group, true, (s, now) => {
      const prev = s.members[member.id]
      const partitionsOf = this.counter()
      let changed = this.prune(s, now, partitionsOf)
      const topicsChanged = !prev || prev.topics.join('\0') !== member.topics.join('\0')
      if (topicsChanged || now - prev.lastSeen > member.sessionTimeoutMs / 6) changed = true
      if (!!prev?.leaving !== !!member.leaving) changed = true
      s.members[member.id] = {
        name: member.name,
        topics: member.topics,
        ...memberProcess(member.pid, member.host),
        lastSeen: now,
        sessionTimeoutMs: member.sessionTimeoutMs,
        leaving: member.leaving,
        ...(member.processor === true ? { processor: true } : {}),
      }
      for (const tp of release) {
        const key = partitionKey(tp.topic, tp.partition)
        if (s.owners[key]?.member === member.id) {
          delete s.owners[key]
          changed = true
        }
      }
      for (const t of member.topics) {
        if (!s.topics.includes(t)) {
          s.topics.push(t)
          changed = true
        }
      }
      // Leaving members keep their leases until they release them, but are assigned nothing.
      const members = Object.entries(s.members)
        .filter(([, m]) => !m.leaving)
        .map(([id, m]) => ({ id, topics: m.topics }))
      const partitions: TopicPartition[] = []
      for (const topic of new Set(members.flatMap((m) => m.topics))) {
        const n = partitionsOf(topic) ?? 0
        for (let p = 0; p < n; p++) partitions.push({ topic, partition: p })
      }
      const owners = new Map(Object.entries(s.owners).map(([k, o]) => [k, o.member]))
      const target = assignPartitions(partitions, members, owners)
      for (const [key, id] of target) {
        if (id === member.id && !member.leaving && !s.owners[key]) {
          s.owners[key] = { member: member.id, epoch: ++s.epoch }
          changed = true
        }
      }
      const owned: Lease[] = []
      const revoke: TopicPartition[] = []
      for (const [key, o] of Object.entries(s.owners)) {
        if (o.member !== member.id) continue
        const tp = splitPartitionKey(key)
        owned.push({ ...tp, epoch: o.epoch, committed: s.commits[key]?.offset })
        if (target.get(key) !== member.id) revoke.push(tp)
      }
      // Unchanged, the state is not written: the member's last heartbeat on file is an older one.
      const seen = changed || !prev ? now : prev.lastSeen
      return { changed, result: { owned, revoke, seen } }
    })
  }

  async groupLeave(group: string, memberId: string): Promise<void> {
    await this.locked(group, false, (s) => {
      let changed = !!s.members[memberId]
      delete s.members[memberId]
      for (const [key, o] of Object.entries(s.owners)) {
        if (o.member === memberId) {
          delete s.owners[key]
          changed = true
        }
      }
      return { changed, result: undefined }
    }).catch((e: unknown) => {
      // A deleted group has nothing to leave; a leave that cannot be written is reported (as on Redis).
      if (!(e instanceof GroupNotFoundError)) throw e
    })
  }

  async groupCommit(group: string, memberId: string, commits: readonly CommitRequest[]): Promise<TopicPartition[]> {
    return this.locked(group, true, (s, now) => {
      const fenced: TopicPartition[] = []
      let changed = false
      for (const c of commits) {
        const key = partitionKey(c.topic, c.partition)
        const o = s.owners[key]
        if (!o || o.member !== memberId || o.epoch !== c.epoch) {
          fenced.push({ topic: c.topic, partition: c.partition })
          continue
        }
        s.commits[key] = { offset: c.offset, epoch: c.epoch, at: now }
        changed = true
      }
      const m = s.members[memberId]
      if (m && changed) m.lastSeen = now
      return { changed, result: fenced }
    })
  }

  watchGroup(group: string, onChange: () => void, persistent = true): () => void {
    return this.hub.subscribe(this.ensureDir(group, true), onChange, STATE, persistent)
  }

  async describeGroup(group: string): Promise<GroupSnapshot | undefined> {
    const s = this.read(this.dir(group))
    if (!s) return undefined
    const now = Date.now()
    const members = Object.entries(s.members)
      .filter(([, m]) => alive(m, now))
      .map(([id, m]) => ({
        id,
        name: m.name,
        assignments: Object.entries(s.owners)
          .filter(([, o]) => o.member === id)
          .map(([k]) => splitPartitionKey(k)),
        ...(m.processor === true ? { processor: true as const } : {}),
      }))
    const commits = new Map(
      Object.entries(s.commits).map(([k, c]) => {
        const { topic, partition } = splitPartitionKey(k)
        return [partitionKey(topic, partition), c.offset] as const
      }),
    )
    return { group, members, commits, pending: new Map(), topics: [...s.topics] }
  }

  async topicCommits(topic: string): Promise<Array<Map<number, number>>> {
    const out: Array<Map<number, number>> = []
    for (const group of await this.listGroups()) {
      const s = this.read(this.dir(group))
      if (!s?.topics.includes(topic)) continue
      const commits = new Map<number, number>()
      for (const [k, c] of Object.entries(s.commits)) {
        const tp = splitPartitionKey(k)
        if (tp.topic === topic) commits.set(tp.partition, c.offset)
      }
      out.push(commits)
    }
    return out
  }

  async listGroups(): Promise<string[]> {
    let names: string[]
    try {
      names = readdirSync(join(this.root, '__groups'))
    } catch {
      return []
    }
    return names
      .filter(
        (n) => !n.startsWith('~') && !n.endsWith('.lock') && this.read(join(this.root, '__groups', n)) !== undefined,
      )
      .sort()
  }

  async resetGroup(group: string, topic: string, offsets: ReadonlyMap<number, number>): Promise<void> {
    await this.locked(group, true, (s, now) => {
      this.prune(s, now)
      const busy = Object.values(s.members).filter((m) => m.topics.includes(topic))
      if (busy.length > 0) {
        throw new InvalidArgumentError(
          `Group "${group}" has ${busy.length} live member(s) consuming "${topic}": close them before resetting`,
        )
      }
      for (const [p, offset] of offsets) s.commits[partitionKey(topic, p)] = { offset, epoch: 0, at: now }
      if (!s.topics.includes(topic)) s.topics.push(topic)
      return { changed: true, result: undefined }
    })
  }

  async deleteGroup(group: string): Promise<void> {
    const dir = this.dir(group)
    const gone = join(this.root, '__groups', `~deleting-${group}-${randomBytes(4).toString('hex')}`)
    await this.locked(group, false, (s, now) => {
      this.prune(s, now)
      const live = Object.keys(s.members).length
      if (live > 0)
        throw new InvalidArgumentError(`Group "${group}" has ${live} live member(s): close them before deleting it`)
      renameSync(dir, gone)
      return { changed: false, result: undefined }
    })
    await rm(gone, { recursive: true, force: true })
  }
}
