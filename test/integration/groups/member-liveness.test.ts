// A member whose process is gone is dead at once, before its session times out: partitioned groups
// on files and on Redis drop it (its partitions go to the others), and a shared group lets its name
// be registered again. "Gone" is judged on the member's recorded process identity (pid and the pid's
// start time, as the partition locks record theirs), so a pid reused by an unrelated process does
// not keep a dead member alive. A record of an older twainmq (pid and host only) is judged by its
// pid, as before.
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { Backend } from '../../../src/backends/backend.js'
import { FileBackend } from '../../../src/backends/file/file-backend.js'
import type { MemberSpec } from '../../../src/backends/group.js'
import { HOST, selfIdentity } from '../../../src/backends/liveness.js'
import { RedisBackend } from '../../../src/backends/redis/redis-backend.js'
import type { SharedMemberEvents, SharedMemberOptions } from '../../../src/backends/shared.js'
import { InvalidArgumentError } from '../../../src/core/errors.js'
import { topicMeta } from '../../contract/fixture.js'
import { exited } from '../../helpers/spawn.js'
import { RedisServer } from '../../helpers/redis-server.js'
import { tempDir } from '../../helpers/tmp.js'

const P = 2
const spec = (id: string): MemberSpec => ({
  id,
  name: id,
  topics: ['t'],
  sessionTimeoutMs: 60_000,
  pid: process.pid,
  host: HOST,
})
const owned = (r: { owned: ReadonlyArray<{ partition: number }> }) => r.owned.map((l) => l.partition).sort()

/** A live process that is no member: its pid stands for a dead member's pid, reused. */
let other: ChildProcess
let otherPid: number
/** The pid of a process that has exited. */
let gonePid: number

type Recorded = 'reused' | 'legacy' | 'legacy, gone'

/**
 * The process fields of a member record: `reused` names the live unrelated process's pid with a
 * start time it never had (the member's own process, started long before, is gone); `legacy` names
 * it the way an older twainmq recorded members (pid and host only); `legacy, gone` names so the pid
 * of a process that exited.
 */
function recordedProcess(kind: Recorded): Record<string, unknown> {
  if (kind === 'legacy') return { pid: otherPid, host: HOST }
  if (kind === 'legacy, gone') return { pid: gonePid, host: HOST }
  const me = selfIdentity()
  return { host: HOST, boot: me.boot, ns: me.ns, pid: otherPid, start: '1' }
}

beforeAll(async () => {
  const done = spawn('true', [], { stdio: 'ignore' })
  gonePid = done.pid as number
  await exited(done)
  other = spawn('sleep', ['600'], { stdio: 'ignore' })
  if (other.pid === undefined) throw new Error('could not start sleep')
  otherPid = other.pid
})
afterAll(async () => {
  process.kill(otherPid, 'SIGKILL')
  await exited(other)
})

const opened: Backend[] = []
const dirs: Array<() => void> = []
afterEach(async () => {
  await Promise.all(opened.splice(0).map((b) => b.close().catch(() => undefined)))
  for (const remove of dirs.splice(0)) remove()
})

describe('file: a partitioned member', () => {
  async function setUp(): Promise<{ b: Backend; state: string }> {
    const t = tempDir('twainmq-liveness-')
    dirs.push(t.remove)
    const b = new FileBackend(t.dir, { pollMs: 60_000 })
    await b.init()
    opened.push(b)
    await b.createTopic(topicMeta('t', { partitions: P }))
    expect(owned(await b.groups.groupHeartbeat('g', spec('a'), []))).toEqual([0, 1])
    return { b, state: join(t.dir, '__groups', 'g', 'state.json') }
  }

  /** Rewrite member `id`'s record as if `kind` had written it. */
  function plant(state: string, id: string, kind: Recorded): void {
    const s = JSON.parse(readFileSync(state, 'utf8')) as { members: Record<string, Record<string, unknown>> }
    const { boot: _b, ns: _n, start: _s, ...rest } = s.members[id] as Record<string, unknown>
    s.members[id] = { ...rest, ...recordedProcess(kind) }
    writeFileSync(state, JSON.stringify(s))
  }

  it('whose pid now belongs to another process is dead: its partitions go to the next member at once', async () => {
    const { b, state } = await setUp()
    plant(state, 'a', 'reused')
    expect(owned(await b.groups.groupHeartbeat('g', spec('b'), []))).toEqual([0, 1])
    expect((await b.admin.describeGroup('g'))?.members.map((m) => m.id)).toEqual(['b'])
  })

  it('recorded by an older twainmq (no start time) is judged by its pid: a live pid keeps it', async () => {
    const { b, state } = await setUp()
    plant(state, 'a', 'legacy')
    expect(owned(await b.groups.groupHeartbeat('g', spec('b'), []))).toEqual([])
    expect((await b.admin.describeGroup('g'))?.members.map((m) => m.id).sort()).toEqual(['a', 'b'])
  })

  it('recorded by an older twainmq whose pid is gone is dead at once, as before', async () => {
    const { b, state } = await setUp()
    plant(state, 'a', 'legacy, gone')
    expect(owned(await b.groups.groupHeartbeat('g', spec('b'), []))).toEqual([0, 1])
  })
})

describe('redis', () => {
  let server: RedisServer
  let admin: Redis
  beforeAll(async () => {
    server = await RedisServer.start()
    admin = new Redis({ port: server.port, host: '127.0.0.1', protocol: 2 })
  })
  afterAll(async () => {
    admin.disconnect()
    await server.destroy()
  })

  async function connect(): Promise<{ b: RedisBackend; members: string; alive: string }> {
    const prefix = `l${randomBytes(4).toString('hex')}:`
    const b = await RedisBackend.connect({ url: server.url, cluster: false }, { prefix, clientId: 'liveness' })
    opened.push(b)
    await b.createTopic(topicMeta('t', { partitions: P }))
    return { b, members: `${prefix}group:{g}:members`, alive: `${prefix}group:{g}:alive` }
  }

  /** Rewrite member `id`'s record as if `kind` had written it. */
  async function plant(members: string, id: string, kind: Recorded): Promise<void> {
    const {
      boot: _b,
      ns: _n,
      start: _s,
      ...rest
    } = JSON.parse((await admin.hget(members, id)) as string) as Record<string, unknown>
    await admin.hset(members, id, JSON.stringify({ ...rest, ...recordedProcess(kind) }))
  }

  describe('a partitioned member', () => {
    it('whose pid now belongs to another process is dead: its partitions go to the next member at once', async () => {
      const { b, members } = await connect()
      expect(owned(await b.groups.groupHeartbeat('g', spec('a'), []))).toEqual([0, 1])
      await plant(members, 'a', 'reused')
      expect(owned(await b.groups.groupHeartbeat('g', spec('b'), []))).toEqual([0, 1])
      expect((await b.admin.describeGroup('g'))?.members.map((m) => m.id)).toEqual(['b'])
    })

    it('recorded by an older twainmq (no start time) is judged by its pid: a live pid keeps it', async () => {
      const { b, members } = await connect()
      expect(owned(await b.groups.groupHeartbeat('g', spec('a'), []))).toEqual([0, 1])
      await plant(members, 'a', 'legacy')
      expect(owned(await b.groups.groupHeartbeat('g', spec('b'), []))).toEqual([])
      expect((await b.admin.describeGroup('g'))?.members.map((m) => m.id).sort()).toEqual(['a', 'b'])
    })

    it('recorded by an older twainmq whose pid is gone is dead at once, as before', async () => {
      const { b, members } = await connect()
      expect(owned(await b.groups.groupHeartbeat('g', spec('a'), []))).toEqual([0, 1])
      await plant(members, 'a', 'legacy, gone')
      expect(owned(await b.groups.groupHeartbeat('g', spec('b'), []))).toEqual([0, 1])
    })
  })

  describe('a shared member', () => {
    const events: SharedMemberEvents = {
      lost: () => undefined,
      trimmed: () => undefined,
      committed: () => undefined,
      error: () => undefined,
      fenced: () => undefined,
      rolledBack: () => undefined,
    }
    const options: SharedMemberOptions = {
      group: 'g',
      name: 'worker',
      topics: ['t'],
      from: 'start',
      claimAfterMs: 30_000,
      ackIntervalMs: 50,
      sessionTimeoutMs: 60_000,
      heartbeatIntervalMs: 60_000,
    }

    /** A registration of `worker` by another consumer (token `gone`), its session live for a minute. */
    async function register(members: string, alive: string, kind: Recorded): Promise<void> {
      const stored = {
        name: 'worker',
        topics: ['t'],
        sessionTimeoutMs: 60_000,
        leaving: true,
        mode: 'shared',
        token: 'gone',
        ...recordedProcess(kind),
      }
      await admin.hset(members, 'worker', JSON.stringify(stored))
      await admin.zadd(alive, Date.now() + 60_000, 'worker')
    }

    it('whose pid now belongs to another process is dead: its name can be registered again at once', async () => {
      const { b, members, alive } = await connect()
      await register(members, alive, 'reused')
      const m = await (b.shared as NonNullable<Backend['shared']>).join(options, events)
      const stored = JSON.parse((await admin.hget(members, 'worker')) as string) as { pid: number; token: string }
      expect({ pid: stored.pid, replaced: stored.token !== 'gone' }).toEqual({ pid: process.pid, replaced: true })
      await m.leave()
    })

    it('recorded by an older twainmq (no start time) is judged by its pid: a live pid keeps its name', async () => {
      const { b, members, alive } = await connect()
      await register(members, alive, 'legacy')
      await expect((b.shared as NonNullable<Backend['shared']>).join(options, events)).rejects.toBeInstanceOf(
        InvalidArgumentError,
      )
    })
  })
})
