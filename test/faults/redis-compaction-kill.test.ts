// A process compacting a topic killed with kill -9 in the middle of a pass: each script call of the
// pass is atomic, so what it leaves is a consistent log (the latest record of every key where it was,
// every record still stored the one sent at its offset), and the next pass, in another process,
// goes on from the cursor it left: the result is one record per key, and the stats count every
// record the two passes looked at, those the killed one removed included.
import { randomBytes } from 'node:crypto'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { backendOf } from '../../src/facade/twain.js'
import { open, type Twain } from '../../src/index.js'
import { topicMeta } from '../contract/fixture.js'
import { RedisServer } from '../helpers/redis-server.js'
import { exited, lines, spawnChild, until } from '../helpers/spawn.js'

const KEYS = 500
const ROUNDS = 80
/** Every value the same length, so every record is the same number of bytes. */
const valueOf = (round: number, key: number): string =>
  `v${String(round).padStart(3, '0')}-${String(key).padStart(4, '0')}`

/** The compacted log checked against what was sent: what is stored is what was sent at its offset, and every key's latest is there. */
async function check(twain: Twain, sent: Map<number, string>, latest: Map<string, number>): Promise<number> {
  const stored = new Map<number, string>()
  for await (const m of twain.history<string>('c')) {
    expect(m.value).toBe(sent.get(m.offset))
    stored.set(m.offset, m.value)
  }
  for (const [, offset] of latest) expect(stored.has(offset)).toBe(true)
  return stored.size
}

describe('compaction killed with kill -9 in the middle of a pass (Redis)', () => {
  let server: RedisServer
  let admin: Redis
  beforeAll(async () => {
    server = await RedisServer.start()
    admin = new Redis({ port: server.port, host: '127.0.0.1', protocol: 2 })
  })
  afterAll(async () => {
    admin?.disconnect()
    await server?.destroy()
  })

  it('leaves a consistent log; the next pass goes on from where it stopped and counts all', async () => {
    const prefix = `kc${randomBytes(4).toString('hex')}:`
    const twain = await open(server.url, { prefix })
    let child: ReturnType<typeof spawnChild> | undefined
    try {
      await backendOf(twain).createTopic(topicMeta('c', { keyType: 'string', compact: true }))
      const sent = new Map<number, string>()
      const latest = new Map<string, number>()
      const p = twain.producer<string>('c')
      for (let r = 0; r < ROUNDS; r++) {
        const batch = Array.from({ length: KEYS }, (_, k) => ({
          key: `k${String(k).padStart(4, '0')}`,
          value: valueOf(r, k),
        }))
        const base = r * KEYS
        await p.sendBatch(batch)
        batch.forEach((m, i) => {
          sent.set(base + i, m.value)
          latest.set(m.key, base + i)
        })
      }
      const total = KEYS * ROUNDS
      const state = `${prefix}{c:0}:cstate`
      child = spawnChild('compactor.ts', [server.url, prefix, 'c', '20'])
      const out = lines(child)
      // Killed once its first pass has looked at part of the log, not all.
      await until(
        async () => Number((await admin.hget(state, 'cur')) ?? 0) > total / 4,
        30_000,
        `the pass under way (${out.stderr()})`,
      )
      child.kill('SIGKILL')
      expect(await exited(child)).toBe('SIGKILL')
      expect(out.lines.filter((l) => l.startsWith('pass'))).toEqual([])
      const cur = Number(await admin.hget(state, 'cur'))
      expect(cur).toBeGreaterThan(0)
      expect(cur).toBeLessThan(total)
      // What the killed pass left: consistent, partly compacted.
      const left = await check(twain, sent, latest)
      expect(left).toBeLessThan(total)
      expect(left).toBeGreaterThan(KEYS)
      // Another process's pass finishes it.
      const stats = await backendOf(twain).compact('c')
      expect(await check(twain, sent, latest)).toBe(KEYS)
      expect(stats.before.records).toBe(total)
      expect(stats.after.records).toBe(KEYS)
      expect(stats.before.bytes).toBe(stats.after.bytes * ROUNDS)
      expect((await backendOf(twain).offsets('c'))[0]?.end).toBe(total)
    } finally {
      if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL') // by its PID
      await twain.close()
    }
  }, 120_000)
})
