// Retention on Redis (DESIGN §6, §8 aether): nothing is trimmed that nobody asked for — no default
// MAXLEN — and `consumed` never removes what a group has not committed; `maxMessages` and
// `maxAgeMs` are the user's explicit limits.
import { Redis } from 'ioredis'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { open, type Twain } from '../../../src/index.js'
import { RedisServer } from '../../helpers/redis-server.js'
import { until } from '../../helpers/spawn.js'
import { sleep } from '../../helpers/wait.js'
import { backendOf } from '../../../src/facade/twain.js'

let server: RedisServer
let admin: Redis
let twain: Twain
let prefix: string
let n = 0
const FAST = { sessionTimeoutMs: 2000, heartbeatIntervalMs: 100, commitIntervalMs: 50 }

beforeAll(async () => {
  server = await RedisServer.start()
  admin = new Redis({ port: server.port, host: '127.0.0.1', protocol: 2 })
})
afterAll(async () => {
  admin.disconnect()
  await server.destroy()
})
beforeEach(async () => {
  prefix = `ret${n++}:`
  twain = await open(server.url, { prefix })
})
afterEach(async () => {
  await twain.close()
})

const fill = (topic: string, count: number, from = 0) =>
  twain
    .producer<number>(topic)
    .sendBatch(Array.from({ length: count }, (_, i) => ({ key: (from + i) % 65536, value: from + i })))

describe('no silent trimming', () => {
  it('a topic without retention keeps every entry (no default MAXLEN), whatever its size', async () => {
    await twain.createTopic('t')
    for (let i = 0; i < 5; i++) await fill('t', 5000, i * 5000)
    expect(await twain.length('t')).toBe(25_000)
    expect(await admin.xlen(`${prefix}{t:0}`)).toBe(25_000)
    await backendOf(twain).applyRetention('t')
    expect(await admin.xlen(`${prefix}{t:0}`)).toBe(25_000)
  })

  it('consumed retention never drops what a lagging group has not committed', async () => {
    await twain.createTopic('t', { retention: { consumed: true } })
    await fill('t', 100)
    const fast = twain.consumer<number>('t', { group: 'fast', ...FAST })
    const slow = twain.consumer<number>('t', { group: 'slow', ...FAST, maxInFlight: 10 })
    let slowSeen = 0
    const slowLoop = (async () => {
      for await (const m of slow) {
        if (m.offset >= 30) break // stops acking at 30: the group's commit stays at 30
        m.ack()
        slowSeen++
      }
    })()
    const fastLoop = (async () => {
      let k = 0
      for await (const m of fast) {
        m.ack()
        if (++k === 100) break
      }
    })()
    await Promise.all([slowLoop, fastLoop])
    await fast.commit()
    await slow.commit()
    expect(slowSeen).toBe(30)
    await backendOf(twain).applyRetention('t')
    const o = (await twain.describeTopic('t')).offsets[0]
    expect(o).toEqual({ partition: 0, start: 30, end: 100 })
    expect(await admin.xlen(`${prefix}{t:0}`)).toBe(70)
    // commits drive the clean-up by themselves as the slow group catches up
    await slow.close()
    const again = twain.consumer<number>('t', { group: 'slow', ...FAST })
    let k = 0
    for await (const m of again) {
      m.ack()
      if (++k === 70) break
    }
    await again.commit()
    await until(
      async () => (await twain.describeTopic('t')).offsets[0]?.start === 100,
      5000,
      'consumed clean-up after the commits',
    )
    await again.close()
    await fast.close()
  })

  it('a group that has joined but committed nothing holds everything', async () => {
    await twain.createTopic('t', { retention: { consumed: true } })
    await fill('t', 20)
    await twain.resetGroup('idle', 't', { 0: 0 }) // a group consuming the topic, at offset 0
    const done = twain.consumer<number>('t', { group: 'done', ...FAST })
    let k = 0
    for await (const m of done) {
      m.ack()
      if (++k === 20) break
    }
    await done.commit()
    await backendOf(twain).applyRetention('t')
    expect(await twain.length('t')).toBe(20)
    await done.close()
  })
})

describe('explicit limits', () => {
  it('maxMessages is exact after every write (an explicit MAXLEN the user asked for)', async () => {
    await twain.createTopic('t', { retention: { maxMessages: 1000 } })
    for (let i = 0; i < 7; i++) {
      await fill('t', 333, i * 333)
      expect(await admin.xlen(`${prefix}{t:0}`)).toBe(Math.min(1000, (i + 1) * 333))
    }
    expect((await twain.describeTopic('t')).offsets[0]).toEqual({ partition: 0, start: 1331, end: 2331 })
    const first: number[] = []
    for await (const m of twain.history<number>('t', { limit: 1 })) first.push(m.value)
    expect(first).toEqual([1331])
  })

  it('maxAgeMs removes entries older than the limit, on later writes and on applyRetention()', async () => {
    await twain.createTopic('t', { retention: { maxAgeMs: 400 } })
    await fill('t', 50)
    await sleep(500) // time is the subject: the first 50 become older than maxAgeMs
    await fill('t', 10, 50)
    await backendOf(twain).applyRetention('t')
    expect((await twain.describeTopic('t')).offsets[0]).toEqual({ partition: 0, start: 50, end: 60 })
    await sleep(1100) // past the per-topic throttle of automatic retention
    await fill('t', 1, 60) // this write applies it
    await until(async () => (await twain.describeTopic('t')).offsets[0]?.start === 60, 3000, 'automatic age retention')
  })
})
