// `npm run bench -- peers`, `floors`, `scale`, `ids` and `processor` at tiny sizes: each runs to the end, prints
// its table with a value in every cell, and leaves no temp directory or server behind (the bench
// runs with TMPDIR set to a directory of its own, which must be empty at the end).
import { spawn } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { canConnect } from '../../helpers/net.js'
import { repoRoot } from '../../helpers/spawn.js'
import { tempDir } from '../../helpers/tmp.js'

interface Run {
  code: number | null
  stdout: string
  stderr: string
}

function bench(tmp: string, args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ['--import', 'tsx', 'bench/run.ts', ...args], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, TMPDIR: tmp },
    })
    let stdout = ''
    let stderr = ''
    proc.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')))
    proc.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')))
    proc.once('error', reject)
    proc.once('exit', (code) => resolve({ code, stdout, stderr }))
  })
}

/** What a bench run left in its TMPDIR (tsx's compile cache, which it keeps there, aside). */
const leftovers = (dir: string): string[] => readdirSync(dir).filter((n) => !n.startsWith('tsx-'))

/** The rows of the table that starts with a line beginning with `header`. */
function tableRows(stdout: string, header: string): string[] {
  const lines = stdout.split('\n')
  const start = lines.findIndex((l) => l.startsWith(header))
  expect(start, `no table starting with ${header}`).toBeGreaterThanOrEqual(0)
  const end = lines.findIndex((l, i) => i > start + 1 && l.trim() === '')
  return lines.slice(start + 2, end < 0 ? undefined : end)
}

describe('bench suites', () => {
  it('peers: JetStream, file and Redis rows with a ratio, a goal and a verdict each; servers stopped', async () => {
    const tmp = tempDir()
    const r = await bench(tmp.dir, ['peers', '--messages', '2000', '--repeat', '2', '--tail-messages', '20'])
    expect(r.code, r.stderr).toBe(0)
    const ports = /nats-server: v\S+ -js on 127\.0\.0\.1:(\d+).*redis-server \S+ on 127\.0\.0\.1:(\d+)/.exec(r.stdout)
    expect(ports, r.stdout).not.toBeNull()
    expect(r.stdout).toMatch(/^durable: JetStream .*fsync every 2 min/m)
    const rows = tableRows(r.stdout, 'row ')
    expect(rows).toHaveLength(19)
    for (const row of rows) expect(row).toMatch(/ [0-9.]+× +[≤≥].* (MET|MISS)$/)
    for (const phase of [
      'produce: file sendBatch / JetStream publish',
      'read: Redis history / JetStream ordered consumer',
      'consume+ack: Redis shared / JetStream AckPolicy.All',
      'tail p99: Redis / JetStream',
    ]) {
      expect(
        rows.some((row) => row.startsWith(phase)),
        phase,
      ).toBe(true)
    }
    expect(tableRows(r.stdout, 'send → other process')).toHaveLength(4)
    expect(await canConnect(Number(ports?.[1]))).toBe(false)
    expect(await canConnect(Number(ports?.[2]))).toBe(false)
    expect(leftovers(tmp.dir)).toEqual([])
    tmp.remove()
  }, 180_000)

  it('floors: send, shared and tail rows with a value each, ratios against their baselines; servers stopped', async () => {
    const tmp = tempDir()
    const r = await bench(tmp.dir, ['floors', '--messages', '2000', '--repeat', '1', '--tail-messages', '20'])
    expect(r.code, r.stderr).toBe(0)
    const ports =
      /servers: private nats-server: v\S+ -js on 127\.0\.0\.1:(\d+); private redis-server \S+ on 127\.0\.0\.1:(\d+)/.exec(
        r.stdout,
      )
    expect(ports, r.stdout).not.toBeNull()
    const rows = tableRows(r.stdout, 'row ')
    expect(rows).toHaveLength(19)
    // A baseline row has a value; every other row a ratio (and, where a goal applies, the goal).
    for (const row of rows)
      expect(row).toMatch(
        /^(send|shared|tail p50|tail p99): \S.*( [0-9][0-9,]*| [0-9.]+ ms| [0-9.]+×( +[≤≥] [0-9.]+×)?)$/,
      )
    for (const phase of [
      'send: floor (plain log + a promise per send, Promise.all)',
      'shared: raw ioredis, two reads in flight',
      'shared: ioredis reply decoder alone',
      'tail p50: raw ioredis XADD → XREAD BLOCK',
      'tail p99: twainmq Redis tail',
    ]) {
      expect(
        rows.some((row) => row.startsWith(phase)),
        phase,
      ).toBe(true)
    }
    expect(await canConnect(Number(ports?.[1]))).toBe(false)
    expect(await canConnect(Number(ports?.[2]))).toBe(false)
    expect(leftovers(tmp.dir)).toEqual([])
    tmp.remove()
  }, 180_000)

  it('scale: a column per size, every measure, growth and flags; temp directories removed', async () => {
    const tmp = tempDir()
    const r = await bench(tmp.dir, ['scale', '--min', '500', '--max', '5000', '--redis-max', '5000'])
    expect(r.code, r.stderr).toBe(0)
    for (const backend of ['file', 'redis']) {
      const at = r.stdout.indexOf(`\n${backend}:\n`)
      expect(at, backend).toBeGreaterThan(0)
      const rows = tableRows(r.stdout.slice(at + backend.length + 3), 'measure')
      expect(rows).toHaveLength(10)
      for (const row of rows) expect(row).toMatch(/^\S.* +[0-9.]+ +[0-9.]+ +[0-9.]+× *(FLAG)?$/)
    }
    expect(r.stdout).toMatch(/^measure +500 msgs +5,000 msgs +growth 500 → 5,000 +flag \(> 20%\)$/m)
    expect(leftovers(tmp.dir)).toEqual([])
    tmp.remove()
  }, 180_000)

  it('ids: a row per backend with both ratios; every id sent again found (0 stored); temp directory and server gone', async () => {
    const tmp = tempDir()
    const r = await bench(tmp.dir, ['ids', '--messages', '3000', '--repeat', '2'])
    expect(r.code, r.stderr).toBe(0)
    const rows = tableRows(r.stdout, 'backend ')
    expect(rows.map((row) => row.split(/ +/)[0])).toEqual(['file', 'redis'])
    for (const row of rows) expect(row).toMatch(/^\S+( +[0-9,]+ +[0-9,]+ +[0-9.]+×) +[0-9,]+ +[0-9.]+×$/)
    for (const backend of ['file', 'redis'])
      expect(r.stdout).toMatch(
        new RegExp(
          `${backend}: ids sent again stored 0 times, all reported duplicate +PASS +0 stored, 6,000 of 6,000 duplicate \\(first sends: 0\\)`,
        ),
      )
    expect(leftovers(tmp.dir)).toEqual([])
    tmp.remove()
  }, 120_000)
  it('processor: a row per backend, pipeline and idiom with its ratios; every output stored once; temp directory and server gone', async () => {
    const tmp = tempDir()
    const r = await bench(tmp.dir, ['processor', '--messages', '1500', '--repeat', '1'])
    expect(r.code, r.stderr).toBe(0)
    const port = /redis: +private redis-server on 127\.0\.0\.1:(\d+)/.exec(r.stdout)
    expect(port, r.stdout).not.toBeNull()
    const rows = tableRows(r.stdout, 'backend ')
    expect(rows.map((row) => row.split(/ +/).slice(0, 3).join(' '))).toEqual(
      ['file', 'redis'].flatMap((b) =>
        ['map each', 'map batch', 'enrich each', 'enrich batch'].map((p) => `${b} ${p}`),
      ),
    )
    // Pipeline d (a promise per output) runs in the batch idiom only: its two cells are dashes in the `for await` rows.
    for (const row of rows)
      expect(row).toMatch(
        row.split(/ +/)[2] === 'batch'
          ? /^\S+ +\S+ +\S+ +[0-9,]+ +[0-9,]+ +[0-9.]+× +[0-9,]+ +[0-9.]+× +[0-9,]+ +[0-9.]+×$/
          : /^\S+ +\S+ +\S+ +[0-9,]+ +[0-9,]+ +[0-9.]+× +[0-9,]+ +[0-9.]+× +— +—$/,
      )
    // map: one output per input; enrich: 0, 1 or 3 by input offset (per partition), about 4/3 per input.
    for (const backend of ['file', 'redis'])
      for (const idiom of ['each', 'batch']) {
        expect(r.stdout).toMatch(
          new RegExp(`${backend} map ${idiom}: every output stored once by each pipeline +PASS +1,500 outputs each`),
        )
        expect(r.stdout).toMatch(
          new RegExp(
            `${backend} enrich ${idiom}: every output stored once by each pipeline +PASS +1,9[0-9]{2} outputs each`,
          ),
        )
      }
    expect(await canConnect(Number(port?.[1]))).toBe(false)
    expect(leftovers(tmp.dir)).toEqual([])
    tmp.remove()
  }, 120_000)
})
