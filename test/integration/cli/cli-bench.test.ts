// `twainmq bench`: measures a file store (a temporary directory, or --url) and a real redis-server,
// prints every phase with positive figures, and leaves nothing behind (the temporary topic, the
// group and the temporary directory are removed).
import { readdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { open } from '../../../src/index.js'
import { RedisServer } from '../../helpers/redis-server.js'
import { runCli as cli } from '../../helpers/cli.js'
import { tempDir } from '../../helpers/tmp.js'

interface Report {
  store: string
  results: Array<{ phase: string; messages: number; rate: number; p50Ms?: number; p99Ms?: number; maxMs?: number }>
}

function checkReport(stdout: string, messages: number, tailMessages: number): Report {
  const r = JSON.parse(stdout) as Report
  expect(r.results.map((p) => p.phase)).toEqual(['produce', 'read', 'consume+ack', 'tail latency'])
  for (const p of r.results) {
    expect(p.messages).toBe(p.phase === 'tail latency' ? tailMessages : messages)
    expect(p.rate).toBeGreaterThan(0)
  }
  const tail = r.results[3] as Report['results'][number]
  expect(tail.p50Ms).toBeGreaterThan(0)
  expect(tail.p99Ms).toBeGreaterThanOrEqual(tail.p50Ms as number)
  expect(tail.maxMs).toBeGreaterThanOrEqual(tail.p99Ms as number)
  return r
}

const benchDirs = () => readdirSync(tmpdir()).filter((n) => n.startsWith('twainmq-bench-'))

describe('twainmq bench', () => {
  let server: RedisServer
  beforeAll(async () => {
    server = await RedisServer.start()
  })
  afterAll(async () => {
    await server.destroy()
  })

  it('file, in a temporary directory: a table with every phase, the directory removed', async () => {
    const before = benchDirs()
    const r = await cli([
      'bench',
      'file',
      '--messages',
      '3000',
      '--size',
      '64',
      '--partitions',
      '3',
      '--tail-messages',
      '50',
    ])
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(
      /^twainmq bench: file .*twainmq-bench-.* \(temporary\), 3,000 messages of 64 bytes, 3 partitions\n/,
    )
    for (const phase of ['produce', 'read', 'consume\\+ack', 'tail latency'])
      expect(r.stdout).toMatch(new RegExp(`\\n${phase} +[0-9,]+ +[0-9.]+ +[0-9,]+`))
    expect(benchDirs()).toEqual(before)
  }, 60_000)

  it('file at --url, as JSON: the store keeps no topic or group', async () => {
    const tmp = tempDir()
    try {
      const r = await cli([
        'bench',
        '--url',
        tmp.dir,
        '--messages',
        '2000',
        '--tail-messages',
        '40',
        '--format',
        'json',
      ])
      expect(r.code, r.stderr).toBe(0)
      checkReport(r.stdout, 2000, 40)
      const twain = await open(tmp.dir)
      expect(await twain.listTopics()).toEqual([])
      expect(await twain.listGroups()).toEqual([])
      await twain.close()
    } finally {
      tmp.remove()
    }
  }, 60_000)

  it('redis, on a private redis-server: every phase, no key left', async () => {
    const r = await cli([
      'bench',
      'redis',
      '--url',
      server.url,
      '--messages',
      '2000',
      '--tail-messages',
      '40',
      '--format',
      'json',
    ])
    expect(r.code, r.stderr).toBe(0)
    expect(checkReport(r.stdout, 2000, 40).store).toBe(`redis ${server.url}`)
    const twain = await open(server.url)
    expect(await twain.listTopics()).toEqual([])
    expect(await twain.listGroups()).toEqual([])
    await twain.close()
  }, 60_000)

  it('usage errors: redis without --url, a kind that does not match --url, a bad count', async () => {
    for (const [args, text] of [
      [['bench', 'redis'], /bench redis needs --url/],
      [['bench', 'redis', '--url', '/tmp/somewhere'], /bench redis but --url "\/tmp\/somewhere" is a file store/],
      [['bench', 'nats'], /'nats' is invalid for argument 'kind'. Allowed choices are file, redis, cluster/],
      [['bench', '--messages', '0'], /--messages/],
    ] as const) {
      const r = await cli([...args])
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2)
      expect(r.stderr).toMatch(text)
    }
  }, 60_000)
})
