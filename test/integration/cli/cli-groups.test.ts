import fs from 'node:fs'
import os from 'node:os'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { open } from '../../../src/index.js'
import {
  finished,
  jsonLines,
  runCli as cli,
  startCli as start,
  waitFor as until,
  type CliChild as Child,
  type CliResult as Result,
} from '../../helpers/cli.js'
import { killChildren } from '../../helpers/spawn.js'
import { sleep } from '../../helpers/wait.js'

/** `partition@offset=value` of every printed message, sorted (partitions interleave in any order). */
const printed = (stdout: string): string[] =>
  jsonLines(stdout)
    .map((m) => `${String(m.partition)}@${String(m.offset)}=${String(m.value)}`)
    .sort()

interface GroupJson {
  group: string
  members: Array<{ id: string; name: string; assignments: Array<{ topic: string; partition: number }> }>
  topics: Array<{ topic: string; partition: number; committed: number; end: number; lag: number }>
}

describe('twainmq CLI: consumer groups', { timeout: 60_000 }, () => {
  let dir: string
  const children: Child[] = []

  beforeEach(() => {
    dir = fs.mkdtempSync(os.tmpdir() + '/twainmq-cli-groups-')
  })
  afterEach(async () => {
    await killChildren(children)
    fs.rmSync(dir, { recursive: true, force: true })
  })

  /** Send `values` with the library (key 1 → one partition, key 2 → usually another). */
  async function produce(values: Array<[number, string]>): Promise<void> {
    const twain = await open(dir)
    try {
      const p = twain.producer('orders')
      await Promise.all(values.map(([k, v]) => p.send(k, v)))
    } finally {
      await twain.close()
    }
  }

  /** Run `tail --group` until it printed `count` messages (and nothing more for a moment), then SIGTERM it. */
  async function tailGroup(group: string, count: number, extra: string[] = []): Promise<Result> {
    const tail = start(['--url', dir, 'tail', 'orders', '--group', group, '--format', 'json', ...extra])
    children.push(tail)
    const done = finished(tail)
    await until(`${count} messages`, () => tail.out.stdout.split('\n').length > count)
    await sleep(400) // nothing repeated or extra arrives late
    tail.kill('SIGTERM')
    const r = await done
    expect(r, r.stderr).toMatchObject({ code: 0, signal: null })
    expect(r.stderr).toMatch(new RegExp(`^tailing orders as a member of group ${group} `, 'm'))
    return r
  }

  async function describeJson(group: string): Promise<GroupJson> {
    const r = await cli(['--url', dir, 'groups', 'describe', group, '--format', 'json'])
    expect(r.code, r.stderr).toBe(0)
    return JSON.parse(r.stdout) as GroupJson
  }

  it('tail --group consumes, commits on SIGTERM, resumes after the commit; groups list/describe/reset/delete', async () => {
    expect((await cli(['--url', dir, 'topics', 'create', 'orders', '--partitions', '2'])).code).toBe(0)
    expect((await cli(['--url', dir, 'groups'])).stdout).toBe('')
    await produce([
      [1, 'a'],
      [1, 'b'],
      [1, 'c'],
      [2, 'd'],
      [2, 'e'],
    ])

    // A member while it runs: it owns both partitions.
    const tail = start(['--url', dir, 'tail', 'orders', '--group', 'billing', '--format', 'json'])
    children.push(tail)
    const done = finished(tail)
    await until('five messages', () => tail.out.stdout.split('\n').length > 5)
    const live = await describeJson('billing')
    expect(live.members).toHaveLength(1)
    expect(live.members[0]!.assignments.map((a) => `${a.topic}/${a.partition}`).sort()).toEqual([
      'orders/0',
      'orders/1',
    ])
    tail.kill('SIGTERM')
    const first = await done
    expect(first).toMatchObject({ code: 0, signal: null })
    const firstSeen = printed(first.stdout)
    expect(firstSeen.map((s) => s.split('=')[1]).sort()).toEqual(['a', 'b', 'c', 'd', 'e'])
    expect(jsonLines(first.stdout)[0]).toMatchObject({
      topic: 'orders',
      key: expect.any(Number),
      type: null,
      headers: {},
    })

    // Stopped: committed up to the end, lag 0, no members left.
    expect((await cli(['--url', dir, 'groups', 'list'])).stdout).toBe('billing\n')
    expect((await cli(['--url', dir, 'groups'])).stdout).toBe('billing\n')
    const after = await describeJson('billing')
    expect(after.group).toBe('billing')
    expect(after.members).toEqual([])
    expect(after.topics).toHaveLength(2)
    for (const t of after.topics) expect(t).toMatchObject({ topic: 'orders', committed: t.end, lag: 0 })
    expect(after.topics.reduce((n, t) => n + t.end, 0)).toBe(5)

    const text = await cli(['--url', dir, 'groups', 'describe', 'billing'])
    expect(text.code).toBe(0)
    const lines = text.stdout.split('\n')
    expect(lines).toContain('group:     billing')
    expect(lines).toContain('(no live members)')
    const head = lines.findIndex((l) => /^topic\s+partition\s+committed\s+end\s+lag\s+age$/.test(l))
    expect(head).toBeGreaterThan(0)
    const rows = lines.slice(head + 1, head + 3)
    for (const [i, row] of rows.entries()) {
      const t = after.topics[i]!
      expect(row.split(/\s+/)).toEqual(['orders', String(t.partition), String(t.committed), String(t.end), '0', '0s'])
      expect(row.length).toBe(lines[head]!.length) // right-aligned under the header
    }

    // Same group again: only what came after the commit.
    await produce([
      [1, 'f'],
      [2, 'g'],
    ])
    const second = await tailGroup('billing', 2)
    expect(
      printed(second.stdout)
        .map((s) => s.split('=')[1])
        .sort(),
    ).toEqual(['f', 'g'])
    expect(printed(second.stdout).filter((s) => firstSeen.includes(s))).toEqual([])

    // Back to the start: everything again.
    const reset = await cli(['--url', dir, 'groups', 'reset', 'billing', 'orders', '--to', 'start'])
    expect(reset.code, reset.stderr).toBe(0)
    expect((await describeJson('billing')).topics.map((t) => t.committed)).toEqual([0, 0])
    const third = await tailGroup('billing', 7)
    expect(
      printed(third.stdout)
        .map((s) => s.split('=')[1])
        .sort(),
    ).toEqual(['a', 'b', 'c', 'd', 'e', 'f', 'g'])

    // Per-partition offsets.
    const p0 = after.topics.find((t) => t.partition === 0)!
    const byOffset = await cli(['--url', dir, 'groups', 'reset', 'billing', 'orders', '--to', `0=${p0.end - 1},1=0`])
    expect(byOffset.code, byOffset.stderr).toBe(0)
    expect((await describeJson('billing')).topics.map((t) => t.committed)).toEqual([p0.end - 1, 0])
    expect(byOffset.stdout).not.toMatch(/below its start/)
    // Past the end: refused (exit 1); below a trimmed start: set to the start, and said so.
    const past = await cli(['--url', dir, 'groups', 'reset', 'billing', 'orders', '--to', `0=${p0.end + 40}`])
    expect(past.code).toBe(1)
    expect(past.stderr).toMatch(
      new RegExp(`^ERR_INVALID_ARGUMENT: Offset ${p0.end + 40} of partition 0 is past the end`, 'm'),
    )
    expect((await cli(['--url', dir, 'trim', 'orders', '--before', '0=1'])).code).toBe(0)
    const below = await cli(['--url', dir, 'groups', 'reset', 'billing', 'orders', '--to', '0=0'])
    expect(below.code, below.stderr).toBe(0)
    expect(below.stdout).toMatch(/^partition 0: 0 is below its start, set to 1$/m)

    // Delete: a wrong answer keeps the group, --yes deletes it.
    const wrong = await cli(['--url', dir, 'groups', 'delete', 'billing'], 'nope\n')
    expect(wrong.code).toBe(1)
    expect(wrong.stderr).toMatch(/^ERR_NOT_CONFIRMED: Group "billing" was not deleted: "nope" does not match/m)
    expect((await cli(['--url', dir, 'groups', 'list'])).stdout).toBe('billing\n')
    const deleted = await cli(['--url', dir, 'groups', 'delete', 'billing', '--yes'])
    expect(deleted).toMatchObject({ code: 0, stdout: 'deleted group billing\n' })
    expect((await cli(['--url', dir, 'groups', 'list'])).stdout).toBe('')
  })

  it('tail --group --from end skips what a new group finds; groups errors exit 1 or 2', async () => {
    await cli(['--url', dir, 'topics', 'create', 'orders'])
    await produce([[1, 'old']])
    const tail = start(['--url', dir, 'tail', 'orders', '--group', 'fresh', '--from', 'end', '--format', 'json'])
    children.push(tail)
    const done = finished(tail)
    await until('the notice', () => tail.out.stderr.includes('tailing orders as a member of group fresh'))
    await produce([[1, 'new']])
    await until('the new message', () => tail.out.stdout.includes('\n'))
    tail.kill('SIGINT')
    const r = await done
    expect(r.code).toBe(0)
    expect(printed(r.stdout)).toEqual(['0@1=new'])
    expect((await describeJson('fresh')).topics).toEqual([
      { topic: 'orders', partition: 0, committed: 2, end: 2, lag: 0, lagMs: 0 },
    ])

    for (const to of ['sideways', '0=', '0=1,', '0=1,0=2']) {
      const bad = await cli(['--url', dir, 'groups', 'reset', 'fresh', 'orders', '--to', to])
      expect(bad.code, to).toBe(2)
      expect(bad.stderr, to).toMatch(/^ERR_USAGE: /m)
    }
    expect((await cli(['--url', dir, 'groups', 'reset', 'fresh', 'orders'])).code).toBe(2)
    expect((await cli(['--url', dir, 'groups', 'frobnicate'])).code).toBe(2)
    expect((await cli(['--url', dir, 'tail', 'orders', '--group', 'fresh', '--from', '3'])).code).toBe(2)

    const unknown = await cli(['--url', dir, 'groups', 'describe', 'nope'])
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toMatch(/^ERR_[A-Z_]+: .*"nope"/m)
    expect(unknown.stdout).toBe('')
    const missingPartition = await cli(['--url', dir, 'groups', 'reset', 'fresh', 'orders', '--to', '5=0'])
    expect(missingPartition.code).toBe(1)
    expect(missingPartition.stderr).toMatch(/^ERR_INVALID_ARGUMENT: Partition 5 /m)
    const eof = await cli(['--url', dir, 'groups', 'delete', 'fresh'])
    expect(eof.code).toBe(1)
    expect(eof.stderr).toMatch(/ERR_NOT_CONFIRMED: .*no confirmation on stdin/)
    expect((await cli(['--url', dir, 'groups', 'list'])).stdout).toBe('fresh\n')
  })

  it("groups reset --state clears a processor group's state store; an unknown store is a runtime error", async () => {
    const twain = await open(dir)
    try {
      await twain.createTopic('views', { partitions: 2, keyType: 'string' })
      await twain.producer<string, string>('views').sendBatch([
        { key: 'ada', value: '/a' },
        { key: 'bob', value: '/b' },
      ])
      const p = twain.processor<string, string>('views', { group: 'counter', state: 'per-user', from: 'start' })
      let n = 0
      for await (const m of p) {
        m.state.set(m.key, 1)
        m.ack()
        if (++n === 2) break
      }
      await p.close()
    } finally {
      await twain.close()
    }
    const unknown = await cli(['--url', dir, 'groups', 'reset', 'counter', 'views', '--to', 'start', '--state', 'typo'])
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toMatch(/^ERR_INVALID_ARGUMENT: Group "counter" has no state store "typo"/m)
    const partial = await cli([
      '--url',
      dir,
      'groups',
      'reset',
      'counter',
      'views',
      '--to',
      '0=0',
      '--state',
      'per-user',
    ])
    expect(partial.code).toBe(1)
    expect(partial.stderr).toMatch(/must set every partition .*partition\(s\) 1 not given/)
    const r = await cli(['--url', dir, 'groups', 'reset', 'counter', 'views', '--to', 'start', '--state', 'per-user'])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/^reset group counter on topic views to start\nstate store per-user cleared\n/)
    const topics = await cli(['--url', dir, 'topics', 'list'])
    expect(topics.stdout).not.toContain('counter-per-user-changelog')
    expect(topics.stdout).toContain('views')
  })
})
