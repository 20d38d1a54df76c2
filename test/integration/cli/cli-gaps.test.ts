// CLI gaps of issue 10: a closed stdout ends tail/history, produce stops at (or skips) a bad line with
// its number, one exit-code rule for every command, member names, history/tail ranges and times,
// topics create options, trim, produce --type.
import fs from 'node:fs'
import os from 'node:os'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { open } from '../../../src/index.js'
import {
  finished,
  jsonLines,
  runCli,
  startCli,
  startCliInShell,
  waitFor,
  type CliChild,
  type CliResult,
} from '../../helpers/cli.js'
import { RedisServer } from '../../helpers/redis-server.js'
import { killChildren } from '../../helpers/spawn.js'

let dir: string
const children: CliChild[] = []
const cli = (args: string[], input = '') => runCli(['--url', dir, ...args], input)
const start = (args: string[]) => {
  const c = startCli(['--url', dir, ...args])
  children.push(c)
  return c
}

/** `done`, or a rejection when the child is still running `ms` after it was asked to stop. */
async function within(done: Promise<CliResult>, ms: number, what: string): Promise<CliResult> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>(
    (_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: still running after ${ms} ms`)), ms)),
  )
  try {
    return await Promise.race([done, late])
  } finally {
    clearTimeout(timer)
  }
}

async function library<T>(url: string, fn: (t: Awaited<ReturnType<typeof open>>) => Promise<T>): Promise<T> {
  const twain = await open(url)
  try {
    return await fn(twain)
  } finally {
    await twain.close()
  }
}

const values = (r: CliResult) => jsonLines(r.stdout).map((m) => m.value)

beforeEach(() => {
  dir = fs.mkdtempSync(os.tmpdir() + '/twainmq-cli-gaps-')
})
afterEach(async () => {
  await killChildren(children)
  fs.rmSync(dir, { recursive: true, force: true })
})

describe('a closed stdout ends the command at once, with exit 0', { timeout: 120_000 }, () => {
  beforeEach(() =>
    library(dir, async (t) => {
      await t.createTopic('t')
      await t.producer('t').sendBatch([
        { key: 1, value: 'a' },
        { key: 1, value: 'b' },
      ])
    }),
  )

  it('tail: its stdout socket destroyed after two lines, no further message needed', async () => {
    const tail = start(['tail', 't', '--from', 'start'])
    const done = finished(tail)
    await waitFor('two lines', () => tail.out.stdout.split('\n').length > 2)
    tail.stdout!.destroy()
    expect(await within(done, 8000, 'tail')).toMatchObject({ code: 0, signal: null })
  })

  it('tail | head -n 2 through a real shell pipe', async () => {
    const sh = startCliInShell(['--url', dir, 'tail', 't', '--from', 'start'], 'head -n 2')
    children.push(sh)
    const r = await within(finished(sh), 8000, 'tail | head -n 2')
    expect(r.stdout).toBe('t/0@0 key=1 a\nt/0@1 key=1 b\n')
    expect(r.stderr).toContain('cli exit code 0')
  })

  it('history | head -n 2 through a real shell pipe', async () => {
    await library(dir, (t) =>
      t.producer('t').sendBatch(Array.from({ length: 5000 }, (_, i) => ({ key: 1, value: `m${i}` }))),
    )
    const r = await within(
      finished(startCliInShell(['--url', dir, 'history', 't'], 'head -n 2')),
      20_000,
      'history | head -n 2',
    )
    expect(r.stdout).toBe('t/0@0 key=1 a\nt/0@1 key=1 b\n')
    expect(r.stderr).toContain('cli exit code 0')
    expect(r.stderr).not.toMatch(/ERR_/)
  })

  it('tail --group: commits what it printed and leaves the group', async () => {
    const tail = start(['tail', 't', '--group', 'g', '--quiet'])
    const done = finished(tail)
    await waitFor('two lines', () => tail.out.stdout.split('\n').length > 2)
    tail.stdout!.destroy()
    expect(await within(done, 8000, 'tail --group')).toMatchObject({ code: 0, signal: null })
    const d = JSON.parse((await cli(['groups', 'describe', 'g', '-f', 'json'])).stdout) as {
      members: unknown[]
      topics: Array<{ committed: number }>
    }
    expect(d.members).toEqual([])
    expect(d.topics.map((x) => x.committed)).toEqual([2])
  })
})

describe('produce: a bad line', { timeout: 120_000 }, () => {
  beforeEach(() => library(dir, (t) => t.createTopic('t', { maxMessageBytes: 100 })))
  const big = 'x'.repeat(200)

  it('stops produce at its line number; the lines before it are written, none after it', async () => {
    const r = await cli(['produce', 't'], `a\nb\n${big}\nc\n`)
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(/^ERR_MESSAGE_TOO_LARGE: line 3: .*200/m)
    expect(r.stderr).toContain('produced 2 messages')
    expect(values(await cli(['history', 't', '-f', 'json']))).toEqual(['a', 'b'])
  })

  it('--skip-bad reports each bad line with its number and code, sends the rest in order, exits 1', async () => {
    const lines = Array.from({ length: 4500 }, (_, i) =>
      i === 2499 ? JSON.stringify(big) : i === 4000 ? '{oops' : String(i + 1),
    )
    const r = await cli(['produce', 't', '--json', '--skip-bad'], lines.join('\n') + '\n')
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(/^ERR_MESSAGE_TOO_LARGE: line 2500: /m)
    expect(r.stderr).toMatch(/^ERR_INVALID_JSON: line 4001: /m)
    expect(r.stderr).toMatch(/^ERR_LINES_SKIPPED: 2 bad lines were skipped \(lines 2500, 4001\)/m)
    expect(r.stderr).toContain('produced 4498 messages')
    const want = lines.map((_, i) => i + 1).filter((n) => n !== 2500 && n !== 4001)
    expect(values(await cli(['history', 't', '-f', 'json']))).toEqual(want)
  })

  it('--type sends each line as JSON, as a message of that type; the topic must take it', async () => {
    await library(dir, (t) => t.createTopic('o', { messageTypes: ['Order', 'Refund'] }))
    const sent = await cli(['produce', 'o', '--type', 'Order', '--key', '4'], '{"id":1}\n{"id":2}\n')
    expect(sent.code, sent.stderr).toBe(0)
    const rows = jsonLines((await cli(['history', 'o', '-f', 'json'])).stdout)
    expect(rows.map((m) => [m.type, m.key, m.value])).toEqual([
      ['Order', 4, { id: 1 }],
      ['Order', 4, { id: 2 }],
    ])
    const notJson = await cli(['produce', 'o', '--type', 'Order'], 'plain\n')
    expect(notJson.code).toBe(1)
    expect(notJson.stderr).toMatch(/^ERR_INVALID_JSON: line 1: /m)
    const any = await cli(['produce', 't', '--type', 'Anything'], '{"a":1}\n')
    expect(any.code, any.stderr).toBe(0)
    expect(jsonLines((await cli(['history', 't', '-f', 'json'])).stdout).map((m) => m.type)).toEqual(['Anything'])
  })
})

describe(
  'exit codes: 2 (ERR_USAGE) for how the CLI was called, 1 for what failed when it ran',
  { timeout: 180_000 },
  () => {
    const cases: Array<[string[], number, RegExp]> = [
      [['frobnicate'], 2, /^ERR_USAGE: unknown command 'frobnicate'/m],
      [['topics', 'list', '--bogus'], 2, /^ERR_USAGE: unknown option '--bogus'/m],
      [['topics', 'create'], 2, /^ERR_USAGE: missing required argument 'name'/m],
      [['topics', 'create', 'x', '--partitions', 'many'], 2, /^ERR_USAGE: .*'many' is invalid/m],
      [['topics', 'create', '__x'], 2, /^ERR_USAGE: .*"__x" is invalid/m],
      [['topics', 'create', 'x', '--key-type', 'bogus'], 2, /^ERR_USAGE: .*"bogus" is invalid/m],
      [['topics', 'create', 'x', '--max-message-bytes', '999999999999'], 2, /^ERR_USAGE: .*'999999999999' is invalid/m],
      [['topics', 'create', 'x', '--retention-max-age', '5x'], 2, /^ERR_USAGE: .*'5x' is invalid/m],
      [['topics', 'create', 'x', '--message-types', 'A,,B'], 2, /^ERR_USAGE: .*'A,,B' is invalid/m],
      [['topics', 'create', 'x', '--message-types', 'A,A'], 2, /^ERR_USAGE: .*"A" is given twice/m],
      [['groups', 'describe', 'bad/name'], 2, /^ERR_USAGE: .*"bad\/name" is invalid/m],
      [['history', 't', '--format', 'xml'], 2, /^ERR_USAGE: .*'xml' is invalid/m],
      [['history', 't', '--from-time', 'yesterday'], 2, /^ERR_USAGE: .*'yesterday' is invalid/m],
      [['history', 't', '--from', '3', '--to', '1'], 2, /^ERR_USAGE: --to 1 is below --from 3/m],
      [['history', 't', '--from', '2026-12-01T10:00:00Z'], 2, /^ERR_USAGE: .*--from-time/m],
      [
        ['history', 't', '--from', '1', '--from-time', '5'],
        2,
        /^ERR_USAGE: --from and --from-time cannot be used together/m,
      ],
      [['history', 't', '--from-time', '2026-02-30'], 2, /^ERR_USAGE: .*'2026-02-30' is invalid. not a real date/m],
      [['tail', 't', '--from', '2026-12-01T10:00'], 2, /^ERR_USAGE: .*'2026-12-01T10:00' is invalid.*time zone/m],
      [['tail', 't', '--from', 'time:abc'], 2, /^ERR_USAGE: .*'time:abc' is invalid/m],
      [
        ['tail', 't', '--group', 'g', '--from', '2026-12-01T10:00:00Z'],
        2,
        /^ERR_USAGE: --from 2026-12-01T10:00:00(\.000)?Z: with --group/m,
      ],
      [['tail', 't', '--name', 'x'], 2, /^ERR_USAGE: --name needs --group/m],
      [['tail', 't', '--group', 'g', '--name', 'bad name'], 2, /^ERR_USAGE: .*"bad name" is invalid/m],
      [['trim', 't'], 2, /^ERR_USAGE: trim needs --max-messages or --before/m],
      [['trim', 't', '--max-messages', '1', '--before', '0=1'], 2, /^ERR_USAGE: .*not both/m],
      [['trim', 't', '--before', '0=x'], 2, /^ERR_USAGE: .*"0=x"/m],
      [['produce', 't', '--type', 'a b'], 2, /^ERR_USAGE: .*"a b" is invalid/m],
      [['produce', 't', '--key', 'abc'], 1, /^ERR_INVALID_KEY: --key "abc" is not valid for key type u16/m],
      [['--prefix', 'a{b', 'topics', 'list'], 2, /^ERR_USAGE: .*"a\{b" has a \{ or \}/m],
      [['--url', 'redis:/x', 'topics', 'list'], 2, /^ERR_USAGE: .*"redis:\/x" is not a Redis URL/m],
      [['--url', 'redis://127.0.0.1:1', 'check', 't'], 2, /^ERR_USAGE: check works on a directory store/m],
      [['history', 'nope'], 1, /^ERR_TOPIC_NOT_FOUND: /m],
      [['history', 't', '--partition', '5'], 1, /^ERR_INVALID_ARGUMENT: Partition 5 /m],
      [['produce', 't', '--key', '99999'], 1, /^ERR_INVALID_KEY: .*99999/m],
      [
        ['produce', 'big', '--key', '18446744073709551616'],
        1,
        /^ERR_INVALID_KEY: --key 18446744073709551616 is out of range for key type u64: use an integer 0\.\.18446744073709551615$/m,
      ],
      [['topics'], 0, /^$/],
      [
        ['--url', 'mailto:x', 'topics', 'list'],
        2,
        /^ERR_USAGE: --url: open\(\) target "mailto:x" has an unsupported scheme/m,
      ],
      [['produce', 't', '--partition', '7'], 1, /^ERR_INVALID_ARGUMENT: Partition 7 /m],
      [['produce', 'typed', '--type', 'Other'], 1, /^ERR_UNKNOWN_MESSAGE_TYPE: .*"Other"/m],
      [['groups', 'describe', 'nope'], 1, /^ERR_GROUP_NOT_FOUND: /m],
      [['trim', 't', '--before', '9=1'], 1, /^ERR_INVALID_ARGUMENT: Partition 9 /m],
      [['topics', 'create', 't'], 1, /^ERR_TOPIC_EXISTS: /m],
      [['topics', 'delete', 't'], 1, /^ERR_NOT_CONFIRMED: /m],
    ]

    it('every command follows the rule', async () => {
      await library(dir, async (t) => {
        await t.createTopic('t', { partitions: 2 })
        await t.createTopic('typed', { messageTypes: ['Order'] })
        await t.createTopic('big', { keyType: 'u64' })
      })
      const results: Array<[string, number | null, string]> = []
      for (let i = 0; i < cases.length; i += 4) {
        const batch = cases.slice(i, i + 4)
        const got = await Promise.all(
          batch.map(([args]) => runCli(args[0] === '--url' ? args : ['--url', dir, ...args], '')),
        )
        got.forEach((r, j) => results.push([batch[j]![0].join(' '), r.code, r.stderr]))
      }
      const wrong = results.filter(([, code, stderr], i) => code !== cases[i]![1] || !cases[i]![2].test(stderr))
      expect(wrong.map(([args, code, stderr]) => `${args} → exit ${code}: ${stderr.trim()}`)).toEqual([])
    })
  },
)

describe.each(['file', 'redis'] as const)('member names and trim (%s)', (backend) => {
  let redis: RedisServer | undefined
  let url: string
  beforeAll(async () => {
    if (backend === 'redis') redis = await RedisServer.start()
  })
  afterAll(async () => {
    await redis?.destroy()
  })
  beforeEach(async () => {
    url = redis ? redis.url : dir
    await library(url, (t) => t.createTopic('orders', { partitions: 2 }))
  })
  afterEach(async () => {
    if (redis) await library(url, (t) => t.deleteTopic('orders'))
  })

  it(
    'tail --group --name sets the member name; describe shows id, name and partitions',
    { timeout: 120_000 },
    async () => {
      const tail = startCli(['--url', url, 'tail', 'orders', '--group', 'billing', '--name', 'alice'])
      children.push(tail)
      const done = finished(tail)
      await waitFor('the member to join', () => tail.out.stderr.includes('tailing orders as a member of group billing'))
      const json = await runCli(['--url', url, 'groups', 'describe', 'billing', '--format', 'json'])
      const d = JSON.parse(json.stdout) as {
        members: Array<{ id: string; name: string; assignments: Array<{ partition: number }> }>
      }
      for (const m of d.members) m.assignments.sort((a, b) => a.partition - b.partition)
      expect(d.members).toEqual([
        {
          id: expect.stringMatching(/^alice-/),
          name: 'alice',
          kind: 'consumer',
          assignments: [
            { topic: 'orders', partition: 0 },
            { topic: 'orders', partition: 1 },
          ],
        },
      ])
      const text = await runCli(['--url', url, 'groups', 'describe', 'billing'])
      expect(text.stdout).toMatch(new RegExp(`^${d.members[0]!.id} +alice +consumer +orders/0 orders/1$`, 'm'))
      tail.kill('SIGTERM')
      expect((await done).code).toBe(0)
      await runCli(['--url', url, 'groups', 'delete', 'billing', '--yes'])
    },
  )

  it('describe marks the members of twain.processor() as processors', { timeout: 60_000 }, async () => {
    const twain = await open(url)
    try {
      const fast = { group: 'etl', sessionTimeoutMs: 2000, heartbeatIntervalMs: 200 }
      const proc = twain.processor('orders', { ...fast, name: 'enricher' })
      const plain = twain.consumer('orders', { ...fast, name: 'auditor' })
      await waitFor(
        'both members to own a partition',
        () => proc.assignments().length === 1 && plain.assignments().length === 1,
      )
      const json = await runCli(['--url', url, 'groups', 'describe', 'etl', '--format', 'json'])
      expect(json.code, json.stderr).toBe(0)
      const d = JSON.parse(json.stdout) as { members: Array<{ id: string; name: string; kind: string }> }
      expect(d.members.map((m) => [m.name, m.kind]).sort()).toEqual([
        ['auditor', 'consumer'],
        ['enricher', 'processor'],
      ])
      const text = await runCli(['--url', url, 'groups', 'describe', 'etl'])
      expect(text.stdout).toMatch(/^member +name +kind +assignments$/m)
      expect(text.stdout).toMatch(/^enricher-\S+ +enricher +processor +orders\/\d$/m)
      expect(text.stdout).toMatch(/^auditor-\S+ +auditor +consumer +orders\/\d$/m)
      await Promise.all([proc.close(), plain.close()])
    } finally {
      await twain.close()
    }
    await runCli(['--url', url, 'groups', 'delete', 'etl', '--yes'])
  })

  it('trim --max-messages and --before print how many were removed', { timeout: 60_000 }, async () => {
    await library(url, (t) =>
      t.producer('orders').sendBatch(Array.from({ length: 10 }, (_, i) => ({ key: 0, value: i, partition: i % 2 }))),
    )
    const kept = await runCli(['--url', url, 'trim', 'orders', '--max-messages', '3'])
    expect(kept).toMatchObject({ code: 0, stdout: 'removed 4 messages from topic orders\n' })
    const before = await runCli(['--url', url, 'trim', 'orders', '--before', '0=4,1:3'])
    expect(before).toMatchObject({ code: 0, stdout: 'removed 3 messages from topic orders\n' })
    const info = JSON.parse((await runCli(['--url', url, 'topics', 'describe', 'orders', '-f', 'json'])).stdout) as {
      offsets: unknown[]
    }
    expect(info.offsets).toEqual([
      { partition: 0, start: 4, end: 5 },
      { partition: 1, start: 3, end: 5 },
    ])
  })
})

describe('new options', { timeout: 120_000 }, () => {
  it('history --from/--to/--from-time and tail --from <ISO date> or time:<ms>', async () => {
    const t0 = await library(dir, async (t) => {
      await t.createTopic('t')
      await t.producer('t').sendBatch(['a', 'b'].map((value) => ({ key: 1, value })))
      const seen = Date.now()
      await waitFor('the clock to move on', () => Date.now() > seen)
      await t.producer('t').sendBatch(['c', 'd'].map((value) => ({ key: 1, value })))
      for await (const c of t.history('t', { from: 2, limit: 1 })) return c.timestamp
      throw new Error('no message at offset 2')
    })
    expect(values(await cli(['history', 't', '--from', '1', '--to', '3', '-f', 'json']))).toEqual(['b', 'c'])
    expect(values(await cli(['history', 't', '--from-time', new Date(t0).toISOString(), '-f', 'json']))).toEqual([
      'c',
      'd',
    ])
    expect(values(await cli(['history', 't', '--from-time', String(t0), '--to', '3', '-f', 'json']))).toEqual(['c'])
    for (const from of [new Date(t0).toISOString(), `time:${t0}`]) {
      const tail = start(['tail', 't', '--from', from, '-f', 'json'])
      const done = finished(tail)
      await waitFor('two messages', () => tail.out.stdout.split('\n').length > 2)
      tail.kill('SIGTERM')
      const r = await done
      expect(values(r)).toEqual(['c', 'd'])
      expect(r.stderr).toContain(`tailing t from ${new Date(t0).toISOString()}`)
    }
  })

  it('topics create --retention-* --message-types --max-message-bytes', async () => {
    const created = await cli([
      'topics',
      'create',
      'o',
      '--retention-max-messages',
      '100',
      '--retention-max-age',
      '7d',
      '--retention-max-bytes',
      '1000000',
      '--retention-consumed',
      '--message-types',
      'Order,Refund',
      '--max-message-bytes',
      '5000',
    ])
    expect(created.code, created.stderr).toBe(0)
    expect(created.stdout).toBe(
      'created topic o (1 partition, key type u16, message types Order, Refund, retention maxMessages=100, maxAgeMs=604800000, maxBytes=1000000, consumed=true)\n',
    )
    const info = JSON.parse((await cli(['topics', 'describe', 'o', '-f', 'json'])).stdout) as Record<string, unknown>
    expect(info).toMatchObject({
      messageTypes: ['Order', 'Refund'],
      maxMessageBytes: 5000,
      retention: { maxMessages: 100, maxAgeMs: 604_800_000, maxBytes: 1_000_000, consumed: true },
    })
    for (const [age, ms] of [
      ['1500', 1500],
      ['30m', 1_800_000],
      ['1h', 3_600_000],
    ] as const) {
      expect((await cli(['topics', 'create', `a${ms}`, '--retention-max-age', age])).code).toBe(0)
      expect(JSON.parse((await cli(['topics', 'describe', `a${ms}`, '-f', 'json'])).stdout)).toMatchObject({
        retention: { maxAgeMs: ms },
      })
    }
  })
})
