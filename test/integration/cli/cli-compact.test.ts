// `twainmq topics create --compact`, `topics compact` and what `topics describe` and `check` say of a
// compacted topic; `topics compact` of a topic that is not compacted exits 1 naming it.
import fs from 'node:fs'
import os from 'node:os'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { open } from '../../../src/index.js'
import { jsonLines, runCli } from '../../helpers/cli.js'

let dir: string
const cli = (args: string[]) => runCli(['--url', dir, ...args])

beforeEach(() => {
  dir = fs.mkdtempSync(os.tmpdir() + '/twainmq-cli-compact-')
})
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true })
})

describe('twainmq topics compact', { timeout: 120_000 }, () => {
  it('creates a compacted topic, compacts it now, and describe and check report it', async () => {
    const created = await cli(['topics', 'create', 'prices', '--key-type', 'string', '--compact'])
    expect(created).toMatchObject({ code: 0, stderr: '' })
    expect(created.stdout).toMatch(/created topic prices .*compacted/)
    const twain = await open(dir)
    try {
      const p = twain.producer<string, string>('prices')
      for (let r = 0; r < 20; r++) for (const k of ['a', 'b']) await p.send(k, `${k}${r}`)
      await p.close()
    } finally {
      await twain.close()
    }
    const text = await cli(['topics', 'compact', 'prices'])
    expect(text).toMatchObject({ code: 0, stderr: '' })
    expect(text.stdout).toMatch(/^compacted topic prices: \S+: 40 records \(\d+ bytes\) -> 2 records \(\d+ bytes\)\n$/)
    const json = jsonLines((await cli(['topics', 'compact', 'prices', '--format', 'json'])).stdout)[0]
    expect(json).toMatchObject({ before: { records: 2 }, after: { records: 2 } })

    const describe = await cli(['topics', 'describe', 'prices'])
    expect(describe.stdout).toMatch(/compacted: +yes \(tombstones kept 86400000 ms\)/)
    expect(describe.stdout).toMatch(/last compaction: +\S+: 2 records \(\d+ bytes\) -> 2 records/)
    const history = jsonLines((await cli(['history', 'prices', '--format', 'json'])).stdout)
    expect(history.map((m) => [m.offset, m.value])).toEqual([
      [38, 'a19'],
      [39, 'b19'],
    ])
    const check = await cli(['check', 'prices'])
    expect(check.code).toBe(0)
    expect(check.stdout).toMatch(/gaps? of removed offsets \(a compacted topic/)
  })

  it('exits 1 naming a topic that is not compacted', async () => {
    await cli(['topics', 'create', 'plain'])
    const r = await cli(['topics', 'compact', 'plain'])
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(/ERR_INVALID_ARGUMENT: Topic "plain" is not compacted/)
  })
})
