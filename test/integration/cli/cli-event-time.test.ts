// The CLI and event time: `produce --timestamp` / `--timestamp-field`, and `groups reset --to-time`.
import fs from 'node:fs'
import os from 'node:os'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { open } from '../../../src/index.js'
import { jsonLines, runCli as cli } from '../../helpers/cli.js'

const T0 = Date.UTC(2026, 0, 1)

describe('twainmq CLI: event time', { timeout: 120_000 }, () => {
  let dir: string

  beforeEach(() => {
    dir = fs.mkdtempSync(os.tmpdir() + '/twainmq-cli-time-')
  })
  afterEach(() => {
    fs.rmSync(dir, { recursive: true, force: true })
  })

  const history = async (...extra: string[]) => {
    const r = await cli(['--url', dir, 'history', 't', '--format', 'json', ...extra])
    expect(r.code, r.stderr).toBe(0)
    return jsonLines(r.stdout).map((m) => [m.offset, m.timestamp])
  }

  it('produce --timestamp stamps every message; --json --timestamp-field takes each line its own', async () => {
    expect((await cli(['--url', dir, 'topics', 'create', 't'])).code).toBe(0)
    const one = await cli(['--url', dir, 'produce', 't', '--timestamp', '2026-01-01T00:00:00.050Z'], 'a\nb\n')
    expect(one.code, one.stderr).toBe(0)
    const lines = [
      { ts: T0 + 90, v: 1 },
      { ts: '2026-01-01T00:00:00.020Z', v: 2 },
      { ts: T0 + 60, v: 3 },
    ]
    const many = await cli(
      ['--url', dir, 'produce', 't', '--json', '--timestamp-field', 'ts'],
      lines.map((l) => JSON.stringify(l)).join('\n') + '\n',
    )
    expect(many.code, many.stderr).toBe(0)
    expect(await history()).toEqual([
      [0, T0 + 50],
      [1, T0 + 50],
      [2, T0 + 90],
      [3, T0 + 20],
      [4, T0 + 60],
    ])
    // From a time: the first offset at or after it (offset 2 at T0 + 90 comes before offset 4 at T0 + 60).
    expect((await history('--from-time', String(T0 + 55))).map(([o]) => o)).toEqual([2, 3, 4])
  })

  it('produce refuses a line without a usable timestamp field, --timestamp-field without --json, and a bad --timestamp', async () => {
    expect((await cli(['--url', dir, 'topics', 'create', 't'])).code).toBe(0)
    const bad = await cli(['--url', dir, 'produce', 't', '--json', '--timestamp-field', 'ts'], '{"ts":1}\n{"v":2}\n')
    expect(bad.code).toBe(1)
    expect(bad.stderr).toContain('ERR_INVALID_ARGUMENT: line 2: --timestamp-field "ts"')
    expect(bad.stderr).toContain('got no such field')
    const negative = await cli(['--url', dir, 'produce', 't', '--json', '--timestamp-field', 'ts'], '{"ts":-3}\n')
    expect(negative.code).toBe(1)
    expect(negative.stderr).toMatch(/timestamp .*got -3/)
    const noJson = await cli(['--url', dir, 'produce', 't', '--timestamp-field', 'ts'], 'x\n')
    expect(noJson.code).toBe(2)
    expect(noJson.stderr).toContain('add --json')
    const badTime = await cli(['--url', dir, 'produce', 't', '--timestamp', 'yesterday'], 'x\n')
    expect(badTime.code).toBe(2)
    expect(await history()).toEqual([[0, 1]])
  })

  it('groups reset --to-time sets each partition to its first offset at or after an ISO or relative time', async () => {
    const twain = await open(dir)
    const now = Date.now()
    try {
      await twain.createTopic('t')
      const p = twain.producer<string>('t')
      await p.send(1, 'old', { timestamp: now - 3 * 3_600_000 })
      await p.send(1, 'recent', { timestamp: now - 10 * 60_000 })
      await p.send(1, 'older', { timestamp: now - 2 * 3_600_000 })
    } finally {
      await twain.close()
    }
    const committed = async () => {
      const r = await cli(['--url', dir, 'groups', 'describe', 'g', '--format', 'json'])
      expect(r.code, r.stderr).toBe(0)
      return (JSON.parse(r.stdout) as { topics: Array<{ committed: number }> }).topics.map((t) => t.committed)
    }
    const reset = async (to: string) => {
      const r = await cli(['--url', dir, 'groups', 'reset', 'g', 't', '--to-time', to])
      expect(r.code, r.stderr).toBe(0)
      return r.stdout
    }
    expect(await reset('-1h')).toContain('reset group g on topic t to the first offsets at or after')
    expect(await committed()).toEqual([1])
    await reset('-4h')
    expect(await committed()).toEqual([0])
    await reset(new Date(now + 60_000).toISOString())
    expect(await committed()).toEqual([3]) // past every timestamp: the end
    await reset(String(now - 150 * 60_000))
    expect(await committed()).toEqual([1])
    for (const args of [['--to-time', '-1y'], ['--to-time', 'soon'], ['--to', 'start', '--to-time', '-1h'], []]) {
      const r = await cli(['--url', dir, 'groups', 'reset', 'g', 't', ...args])
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2)
    }
  })
})
