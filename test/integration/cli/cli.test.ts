import fs from 'node:fs'
import os from 'node:os'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { open } from '../../../src/index.js'
import { finished, jsonLines, runCli as cli, startCli as start, waitFor as until } from '../../helpers/cli.js'

// Every test spawns the CLI a few times through tsx (~0.5 s each); leave room for a loaded machine.
describe('twainmq CLI', { timeout: 60_000 }, () => {
  let dir: string

  beforeEach(() => {
    dir = fs.mkdtempSync(os.tmpdir() + '/twainmq-cli-')
  })
  afterEach(() => {
    fs.rmSync(dir, { recursive: true, force: true })
  })

  it('creates, lists and describes topics (--url before or after the command, or TWAINMQ_URL)', async () => {
    const created = await cli(['--url', dir, 'topics', 'create', 'orders', '--partitions', '3', '--key-type', 'u32'])
    expect(created).toMatchObject({ code: 0, stdout: 'created topic orders (3 partitions, key type u32)\n' })
    expect((await cli(['topics', 'create', 'logs', '--url', dir])).code).toBe(0)

    const listed = await cli(['topics', 'list', '--url', dir])
    expect(listed.code).toBe(0)
    expect(listed.stdout).toBe('logs\norders\n')
    expect((await cli(['topics', 'list'], '', { TWAINMQ_URL: dir })).stdout).toBe('logs\norders\n')

    const text = await cli(['--url', dir, 'topics', 'describe', 'orders'])
    expect(text.code).toBe(0)
    expect(text.stdout).toMatch(/^partitions: +3$/m)
    expect(text.stdout).toMatch(/^key type: +u32$/m)
    expect(text.stdout).toMatch(/^retention: +keep everything$/m)
    expect(text.stdout).toMatch(/^2 +0 +0 +0$/m)

    const json = await cli(['topics', 'describe', 'logs', '--format', 'json', '--url', dir])
    const info = JSON.parse(json.stdout) as {
      partitions: number
      keyType: string
      offsets: unknown[]
      messageTypes: unknown[]
    }
    expect(info).toMatchObject({
      name: 'logs',
      partitions: 1,
      keyType: 'u16',
      messageTypes: [],
      offsets: [{ partition: 0, start: 0, end: 0 }],
    })

    const again = await cli(['--url', dir, 'topics', 'create', 'orders'])
    expect(again.code).toBe(1)
    expect(again.stderr).toMatch(/^ERR_TOPIC_EXISTS: /m)
  })

  it('produces stdin lines and prints history as JSON (u64 keys as strings, bytes as base64) and text', async () => {
    await cli(['--url', dir, 'topics', 'create', 'events', '--key-type', 'u64'])
    const produced = await cli(
      ['produce', 'events', '--url', dir, '--json', '--key', '18446744073709551615', '-H', 'src=cli'],
      '{"n":1}\n"two"\n\n3\n',
    )
    expect(produced.code).toBe(0)
    expect(produced.stderr).toContain('produced 3 messages')

    const twain = await open(dir)
    try {
      await twain.producer('events').send(5n, Buffer.from([0, 1, 2, 255]))
    } finally {
      await twain.close()
    }

    const json = await cli(['history', 'events', '--format', 'json', '--url', dir])
    expect(json.code).toBe(0)
    const rows = jsonLines(json.stdout)
    expect(rows.map((r) => r.value)).toEqual([{ n: 1 }, 'two', 3, { base64: 'AAEC/w==' }])
    expect(rows.map((r) => r.key)).toEqual([
      '18446744073709551615',
      '18446744073709551615',
      '18446744073709551615',
      '5',
    ])
    expect(rows.map((r) => r.offset)).toEqual([0, 1, 2, 3])
    expect(rows[0]).toMatchObject({ topic: 'events', partition: 0, type: null, headers: { src: 'cli' } })
    expect(rows[3]!.headers).toEqual({})
    expect(typeof rows[0]!.timestamp).toBe('number')
    expect(Object.keys(rows[0]!).sort()).toEqual([
      'headers',
      'key',
      'offset',
      'partition',
      'timestamp',
      'topic',
      'type',
      'value',
    ])

    const text = await cli(['--url', dir, 'history', 'events'])
    expect(text.code).toBe(0)
    expect(text.stdout.split('\n')).toEqual([
      'events/0@0 key=18446744073709551615 headers={"src":"cli"} {"n":1}',
      'events/0@1 key=18446744073709551615 headers={"src":"cli"} two',
      'events/0@2 key=18446744073709551615 headers={"src":"cli"} 3',
      'events/0@3 key=5 <4 bytes base64:AAEC/w==>',
      '',
    ])
  })

  it('parses keys by key type: strings for char/string topics, 0 or "" without --key', async () => {
    await cli(['--url', dir, 'topics', 'create', 'users', '--key-type', 'char16', '--partitions', '4'])
    expect((await cli(['--url', dir, 'produce', 'users', '--key', 'user-1'], 'hello\n')).code).toBe(0)
    expect((await cli(['--url', dir, 'produce', 'users'], 'anon\n')).code).toBe(0)
    const rows = jsonLines((await cli(['--url', dir, 'history', 'users', '-f', 'json'])).stdout)
    expect(rows.map((r) => [r.key, r.value]).sort()).toEqual([
      ['', 'anon'],
      ['user-1', 'hello'],
    ])
    // "user-1" lands in partition 3 of 4 (TwainMQ's hash64).
    expect(rows.find((r) => r.key === 'user-1')!.partition).toBe(3)

    await cli(['--url', dir, 'topics', 'create', 'nums'])
    const bad = await cli(['--url', dir, 'produce', 'nums', '--key', 'abc'], 'x\n')
    expect(bad.code).toBe(1) // valid or not by the topic's key type: a runtime error
    expect(bad.stderr).toMatch(/^ERR_INVALID_KEY: --key "abc" is not valid for key type/m)
    const tooBig = await cli(['--url', dir, 'produce', 'nums', '--key', '70000'], 'x\n')
    expect(tooBig.code).toBe(1)
    expect(tooBig.stderr).toMatch(/^ERR_INVALID_KEY: /m)
  })

  it('stops at an invalid --json line, keeping the lines before it', async () => {
    await cli(['--url', dir, 'topics', 'create', 't'])
    const r = await cli(['--url', dir, 'produce', 't', '--json'], '1\n2\n{oops\n4\n')
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(/^ERR_INVALID_JSON: line 3: not valid JSON /m)
    expect(r.stderr).toContain('produced 2 messages')
    const rows = jsonLines((await cli(['--url', dir, 'history', 't', '-f', 'json'])).stdout)
    expect(rows.map((x) => x.value)).toEqual([1, 2])
  })

  it('history --reverse --limit gives the newest first; --partition reads one partition', async () => {
    await cli(['--url', dir, 'topics', 'create', 'seq', '--partitions', '2'])
    expect((await cli(['--url', dir, 'produce', 'seq', '--partition', '1'], 'a\nb\nc\nd\ne\n')).code).toBe(0)
    expect((await cli(['--url', dir, 'produce', 'seq', '--partition', '0'], 'zero\n')).code).toBe(0)

    const newest = jsonLines(
      (await cli(['--url', dir, 'history', 'seq', '--partition', '1', '--reverse', '--limit', '2', '--format', 'json']))
        .stdout,
    )
    expect(newest.map((r) => [r.partition, r.offset, r.value])).toEqual([
      [1, 4, 'e'],
      [1, 3, 'd'],
    ])
    const first = await cli(['--url', dir, 'history', 'seq', '--limit', '2'])
    expect(first.stdout).toBe('seq/0@0 key=0 zero\nseq/1@0 key=0 a\n')
    const p0 = await cli(['--url', dir, 'history', 'seq', '-p', '0'])
    expect(p0.stdout).toBe('seq/0@0 key=0 zero\n')
  })

  it('tail prints messages produced after it started, then exits 0 on SIGTERM', async () => {
    await cli(['--url', dir, 'topics', 'create', 'live'])
    await cli(['--url', dir, 'produce', 'live'], 'old\n')
    const tail = start(['tail', 'live', '--url', dir, '--format', 'json'])
    const done = finished(tail)
    try {
      await until('the tail to start', () => tail.out.stderr.includes('tailing live'))
      const twain = await open(dir)
      try {
        await twain.producer('live').send(7, { hello: 'world' }, { headers: { h: '1' } })
      } finally {
        await twain.close()
      }
      await until('the tailed message', () => tail.out.stdout.includes('\n'))
      tail.kill('SIGTERM')
      const r = await done
      expect(r).toMatchObject({ code: 0, signal: null })
      expect(jsonLines(r.stdout)).toEqual([
        {
          topic: 'live',
          partition: 0,
          offset: 1,
          key: 7,
          timestamp: expect.any(Number),
          type: null,
          headers: { h: '1' },
          value: { hello: 'world' },
        },
      ])
    } finally {
      if (tail.exitCode === null && tail.signalCode === null) tail.kill('SIGKILL')
    }
  })

  it('tail --from start prints retained messages; SIGINT also ends it with exit 0', async () => {
    await cli(['--url', dir, 'topics', 'create', 'live'])
    await cli(['--url', dir, 'produce', 'live', '--key', '3'], 'one\ntwo\n')
    const tail = start(['--url', dir, 'tail', 'live', '--from', 'start'])
    const done = finished(tail)
    try {
      await until('two messages', () => tail.out.stdout.split('\n').length >= 3)
      tail.kill('SIGINT')
      const r = await done
      expect(r.code).toBe(0)
      expect(r.stdout).toBe('live/0@0 key=3 one\nlive/0@1 key=3 two\n')
    } finally {
      if (tail.exitCode === null && tail.signalCode === null) tail.kill('SIGKILL')
    }
  })

  it('tail --group refuses an offset --from and --partition as usage errors (the group decides)', async () => {
    await cli(['--url', dir, 'topics', 'create', 'live'])
    const offset = await cli(['--url', dir, 'tail', 'live', '--group', 'g', '--from', '5'])
    expect(offset.code).toBe(2)
    expect(offset.stderr).toMatch(/^ERR_USAGE: --from 5: with --group, --from takes 'start' or 'end'/m)
    const partition = await cli(['--url', dir, 'tail', 'live', '--group', 'g', '--partition', '0'])
    expect(partition.code).toBe(2)
    expect(partition.stderr).toMatch(/^ERR_USAGE: --partition cannot be used with --group/m)
  })

  it('topics delete --yes deletes without asking', async () => {
    await cli(['--url', dir, 'topics', 'create', 'gone'])
    const r = await cli(['--url', dir, 'topics', 'delete', 'gone', '--yes'])
    expect(r).toMatchObject({ code: 0, stdout: 'deleted topic gone\n' })
    expect((await cli(['--url', dir, 'topics', 'list'])).stdout).toBe('')
    const twain = await open(dir)
    try {
      expect(await twain.topicExists('gone')).toBe(false)
    } finally {
      await twain.close()
    }
  })

  it('topics delete without --yes needs the topic name typed on stdin', async () => {
    await cli(['--url', dir, 'topics', 'create', 'keep'])
    const wrong = await cli(['--url', dir, 'topics', 'delete', 'keep'], 'nope\n')
    expect(wrong.code).toBe(1)
    expect(wrong.stderr).toMatch(/^ERR_NOT_CONFIRMED: Topic "keep" was not deleted: "nope" does not match/m)

    const eof = await cli(['--url', dir, 'topics', 'delete', 'keep'], '')
    expect(eof.code).toBe(1)
    expect(eof.stderr).toMatch(/ERR_NOT_CONFIRMED: .*no confirmation on stdin/)
    expect((await cli(['--url', dir, 'topics', 'list'])).stdout).toBe('keep\n')

    const right = await cli(['--url', dir, 'topics', 'delete', 'keep'], 'keep\n')
    expect(right.code).toBe(0)
    expect((await cli(['--url', dir, 'topics', 'list'])).stdout).toBe('')
  })

  it('usage errors exit 2 with ERR_USAGE', async () => {
    const unknown = await cli(['--url', dir, 'frobnicate'])
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toMatch(/^ERR_USAGE: unknown command 'frobnicate'/m)

    const badOption = await cli(['--url', dir, 'topics', 'list', '--bogus'])
    expect(badOption.code).toBe(2)
    expect(badOption.stderr).toMatch(/^ERR_USAGE: unknown option '--bogus'/m)

    const badNumber = await cli(['--url', dir, 'topics', 'create', 'x', '--partitions', 'many'])
    expect(badNumber.code).toBe(2)
    expect(badNumber.stderr).toMatch(/^ERR_USAGE: .*'many' is invalid/m)

    const missing = await cli(['--url', dir, 'topics', 'create'])
    expect(missing.code).toBe(2)
    expect(missing.stderr).toMatch(/^ERR_USAGE: missing required argument 'name'/m)

    expect((await cli(['--url', dir, 'history', 'x', '--format', 'xml'])).code).toBe(2)
    expect((await cli([])).code).toBe(2)
    const help = await cli(['--help'])
    expect(help.code).toBe(0)
    expect(help.stdout).toContain('Usage: twainmq')
    // Nothing was created by the refused commands.
    expect(fs.readdirSync(dir).filter((f) => f === 'x')).toEqual([])
  })

  it('a missing topic is a runtime error: exit 1 with ERR_TOPIC_NOT_FOUND', async () => {
    const history = await cli(['--url', dir, 'history', 'nope'])
    expect(history.code).toBe(1)
    expect(history.stderr).toMatch(/^ERR_TOPIC_NOT_FOUND: Topic "nope" does not exist/m)
    expect(history.stdout).toBe('')

    for (const args of [
      ['topics', 'describe', 'nope'],
      ['topics', 'delete', 'nope', '--yes'],
      ['tail', 'nope'],
      ['produce', 'nope'],
    ]) {
      const r = await cli(['--url', dir, ...args], 'x\n')
      expect(r.code, args.join(' ')).toBe(1)
      expect(r.stderr, args.join(' ')).toMatch(/^ERR_TOPIC_NOT_FOUND: /m)
    }
  })
})
