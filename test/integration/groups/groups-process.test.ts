// Consumer groups across processes (DESIGN §3.6, §5): rebalancing, concurrent joins, process exit.
// File backend only, unlike the other groups-*.test.ts files (which run on every store kind): these
// tests kill, stop and stall child processes that hold the file backend's group lock files and are
// declared dead by its pid-liveness check (a dead pid frees its leases before the session timeout).
// The child scripts (test/helpers/children/group-*.ts) open a directory. On Redis a dead member is
// noticed by its session timeout only; that and fencing are proven in one process by
// test/contract/groups.test.ts on every kind.
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { ChildProcess } from 'node:child_process'
import { open, type Twain } from '../../../src/index.js'
import { exited, killChildren, spawnChild, until } from '../../helpers/spawn.js'
import { tempDir } from '../../helpers/tmp.js'
import { watch, type Out } from '../../helpers/group-children.js'
import { sleep } from '../../helpers/wait.js'

let tmp: ReturnType<typeof tempDir>
let twain: Twain
const children: ChildProcess[] = []

beforeEach(async () => {
  tmp = tempDir('twainmq-groups-proc-')
  twain = await open(tmp.dir, { pollMs: 50 })
})
afterEach(async () => {
  await killChildren(children)
  try {
    await twain.close()
  } finally {
    tmp.remove()
  }
})

function member(topics: string, group: string, opts: Record<string, unknown> = {}): { child: ChildProcess; out: Out } {
  const child = spawnChild('group-member.ts', [tmp.dir, topics, group, JSON.stringify(opts)])
  children.push(child)
  return { child, out: watch(child) }
}

const FAST = { sessionTimeoutMs: 2000, heartbeatIntervalMs: 200, commitIntervalMs: 100 }

async function ownership(group: string): Promise<number[]> {
  const d = await twain.describeGroup(group).catch(() => undefined)
  return d ? d.members.map((m) => m.assignments.length).sort((a, b) => a - b) : []
}

/** Every partition owned by exactly one member, `n` members, counts differing by ≤ 1. */
async function balanced(group: string, n: number, partitions: number): Promise<boolean> {
  const d = await twain.describeGroup(group).catch(() => undefined)
  if (!d || d.members.length !== n) return false
  const owned = d.members.flatMap((m) => m.assignments.map((a) => `${a.topic}/${a.partition}`))
  const counts = d.members.map((m) => m.assignments.length)
  return (
    owned.length === partitions && new Set(owned).size === partitions && Math.max(...counts) - Math.min(...counts) <= 1
  )
}

const errorLines = (outs: Out[]) => outs.flatMap((o) => o.lines.filter((l) => l.startsWith('# error')))

describe('rebalancing across processes', () => {
  it('3 member processes on 6 partitions own 2 each; when one leaves the others own 3 each; a newcomer gets its share at its first rebalance', async () => {
    await twain.createTopic('t', { partitions: 6 })
    // A long session timeout, so a newcomer that waited for one (not its first rebalance) shows.
    const cfg = { ...FAST, sessionTimeoutMs: 15_000 }
    const ms = [member('t', 'g', cfg), member('t', 'g', cfg), member('t', 'g', cfg)]
    await until(() => balanced('g', 3, 6), 20_000, 'three members with 2 partitions each')
    expect(await ownership('g')).toEqual([2, 2, 2])

    ms[0]!.child.kill('SIGTERM') // graceful: close() leaves the group
    expect(await exited(ms[0]!.child), ms[0]!.out.stderr()).toBe(0)
    expect(ms[0]!.out.lines).toContain('# closed')
    await until(() => balanced('g', 2, 6), 10_000, 'two members with 3 partitions each')

    // the newcomer: from its consumer's creation to its first 'assigned' (the goal, < 1 s, is the
    // groups bench's join time; here a bound no load reaches, far below the session timeout)
    const late = member('t', 'g', cfg)
    await until(() => late.out.lines.some((l) => l.startsWith('# assigned')), 20_000, 'the newcomer to get partitions')
    const line = late.out.lines.find((l) => l.startsWith('# assigned'))!
    const ms1 = Number(line.split(' ')[3])
    expect(ms1).toBeLessThan(7500)
    await until(() => balanced('g', 3, 6), 10_000, 'three members again')
    expect(errorLines([...ms, late].map((m) => m.out))).toEqual([])
  }, 60_000)

  it('6 consumers created at once in 3 processes all join without errors and own one partition each', async () => {
    await twain.createTopic('t', { partitions: 6 })
    const ms = [0, 1, 2].map(() => member('t', 'g', { ...FAST, members: 2 }))
    await until(() => balanced('g', 6, 6), 20_000, 'six members with one partition each')
    expect(await ownership('g')).toEqual([1, 1, 1, 1, 1, 1])
    // the messages sent now are each read exactly once by the six
    const p = twain.producer<string>('t')
    await p.sendBatch(Array.from({ length: 60 }, (_, i) => ({ key: i, value: `v${i}`, partition: i % 6 })))
    const processed = () => ms.flatMap((m) => m.out.lines.filter((l) => !l.startsWith('#')))
    await until(() => processed().length >= 60, 10_000, 'all 60 messages')
    await sleep(200) // no message is read twice: nothing more arrives within 200 ms
    expect(processed().sort()).toEqual(Array.from({ length: 60 }, (_, i) => `t/${i % 6}@${Math.floor(i / 6)}`).sort())
    expect(errorLines(ms.map((m) => m.out))).toEqual([])
    for (const m of ms) m.child.kill('SIGTERM')
    expect(await Promise.all(ms.map((m) => exited(m.child)))).toEqual([0, 0, 0])
    await until(async () => (await twain.describeGroup('g')).members.length === 0, 3000, 'everyone to leave')
    const d = await twain.describeGroup('g')
    expect(d.topics.map((t) => t.lag)).toEqual([0, 0, 0, 0, 0, 0])
  }, 60_000)

  it("from: 'end' is committed at once: after its member is SIGKILLed, a new member resumes at the end, not the start", async () => {
    await twain.createTopic('t', { partitions: 2 })
    const p = twain.producer<string>('t')
    await p.sendBatch(Array.from({ length: 10 }, (_, i) => ({ key: i, value: `old${i}`, partition: i % 2 })))
    const m = member('t', 'g', { ...FAST, from: 'end', commitIntervalMs: 60_000 })
    await until(() => m.out.lines.filter((l) => l.startsWith('# assigned')).length > 0, 20_000, 'assignment')
    await until(
      async () => (await twain.describeGroup('g')).topics.every((t) => t.committed === 5),
      2000,
      "the 'end' commit",
    )
    m.child.kill('SIGKILL')
    await exited(m.child)
    await p.send(1, 'new', { partition: 0 })
    const c = twain.consumer<string>('t', { group: 'g', ...FAST })
    const got: string[] = []
    await until(
      () => {
        for (const x of c.pollMany(100)) {
          got.push(x.value)
          x.ack()
        }
        return got.length > 0
      },
      5000,
      'the new message',
    )
    await sleep(300) // nothing older arrives within 300 ms
    for (const x of c.pollMany(100)) got.push(x.value)
    expect(got).toEqual(['new'])
    await c.close()
  }, 40_000)
})

describe('a consumer and process exit', () => {
  const run = async (mode: string): Promise<{ code: number | string; lines: string[]; stderr: string }> => {
    const child = spawnChild('group-exit.ts', [tmp.dir, mode])
    children.push(child)
    const out = watch(child)
    const timer = setTimeout(() => child.kill('SIGKILL'), 12_000)
    const code = await exited(child)
    clearTimeout(timer)
    return { code, lines: out.lines, stderr: out.stderr() }
  }

  for (const mode of ['iterate-close', 'rx-close', 'twain-close-while-iterating']) {
    it(`a process whose consumer is closed (${mode}) exits by itself and leaves the group`, async () => {
      const r = await run(mode)
      expect(r.code, r.stderr).toBe(0)
      expect(r.lines.at(-1)).toBe('done')
      expect(r.lines[0]).toBe('got x')
      if (mode === 'twain-close-while-iterating') expect(r.lines).toContain('ended')
      const d = await twain.describeGroup('g')
      expect(d.members).toEqual([])
      expect(d.topics.find((t) => t.end > 0)?.committed).toBe(1)
    }, 20_000)
  }

  for (const mode of ['never-iterated', 'polled', 'break-no-close']) {
    it(`a process with a consumer that is never closed (${mode}) still exits by itself`, async () => {
      const t0 = Date.now()
      const r = await run(mode)
      expect(r.code, r.stderr).toBe(0)
      expect(r.lines.at(-1)).toBe('done')
      expect(Date.now() - t0).toBeLessThan(11_000)
      // the group forgets the member (dead pid / session timeout)
      await until(
        async () => (await twain.describeGroup('g')).members.length === 0,
        5000,
        'the dead member to be dropped',
      )
    }, 20_000)
  }

  it('a process stays alive while it iterates a consumer (and exits after it closes it)', async () => {
    const child = spawnChild('group-exit.ts', [tmp.dir, 'iterating-keeps-alive'])
    children.push(child)
    const out = watch(child)
    await until(() => out.lines.includes('got x'), 15_000, 'the first message')
    await sleep(1500) // the process does not exit within 1.5 s while it iterates
    expect(child.exitCode, out.stderr()).toBeNull()
    await twain.producer<string>('t').send(1, 'stop')
    const timer = setTimeout(() => child.kill('SIGKILL'), 8000)
    const code = await exited(child)
    clearTimeout(timer)
    expect(code, out.stderr()).toBe(0)
    expect(out.lines).toEqual(['got x', 'got stop', 'done'])
  }, 30_000)
})
