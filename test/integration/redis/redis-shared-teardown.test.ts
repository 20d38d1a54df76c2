// Shared groups on Redis: prompt teardown of a blocked XREADGROUP (close, AbortSignal, RxJS),
// acknowledgements batched into few XACKs, connection kills, and processes that exit by themselves.
import { Redis } from 'ioredis'
import { firstValueFrom, from, take } from 'rxjs'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { AbortError, open, type GroupMessage, type Twain } from '../../../src/index.js'
import { RedisServer } from '../../helpers/redis-server.js'
import { exited, lines, spawnChild, until } from '../../helpers/spawn.js'
import { PROMPT_MS, sleep } from '../../helpers/wait.js'
import { blockedClients } from '../../helpers/waiting-reads.js'

/** Until at least one client is blocked in XREADGROUP (the member waits for entries). */
const blockedInRead = async (): Promise<void> =>
  until(async () => (await blockedClients(admin, 'xreadgroup')) >= 1, 5000, 'a member blocked in XREADGROUP')

let server: RedisServer
let admin: Redis
let n = 0
const opened: Twain[] = []

beforeAll(async () => {
  server = await RedisServer.start()
  admin = new Redis({ port: server.port, host: '127.0.0.1', protocol: 2 })
})
afterAll(async () => {
  admin.disconnect()
  await server.destroy()
})
afterEach(async () => {
  await Promise.all(opened.splice(0).map((t) => t.close().catch(() => undefined)))
})

async function fresh(): Promise<{ prefix: string; twain: Twain }> {
  const prefix = `st${n++}:`
  const twain = await open(server.url, { prefix })
  opened.push(twain)
  return { prefix, twain }
}

/** Connections of this server blocked in a shared group's read. */
async function sharedConnections(): Promise<number> {
  const list = String(await admin.client('LIST'))
  return list.split('\n').filter((l) => /name=twainmq:shared/.test(l)).length
}

/** Time for `fn` to settle, in ms. */
async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now()
  await fn()
  return performance.now() - t0
}

describe('teardown of a blocked XREADGROUP', () => {
  it('close() while blocked returns within 300 ms and disconnects the blocking connection', async () => {
    const { twain } = await fresh()
    await twain.createTopic('t', { partitions: 3 })
    const before = await sharedConnections()
    const c = twain.consumer<string>('t', { group: 'g', mode: 'shared' })
    const loop = (async () => {
      for await (const _ of c) throw new Error('unexpected message')
    })()
    await c.rebalance()
    await until(async () => String(await admin.client('LIST')).includes('cmd=xreadgroup'), 5000, 'a blocked XREADGROUP')
    expect(await sharedConnections()).toBe(before + 1)
    const ms = await timed(async () => {
      await c.close()
      await loop
    })
    expect(ms).toBeLessThan(PROMPT_MS)
    await until(async () => (await sharedConnections()) === before, 2000, 'the blocking connection to go')
  })

  it("aborting the consumer's signal ends a blocked iteration with AbortError at once and leaves the group", async () => {
    const { twain } = await fresh()
    await twain.createTopic('t')
    const ctrl = new AbortController()
    const c = twain.consumer<string>('t', { group: 'g', mode: 'shared', name: 'sig', signal: ctrl.signal })
    const it = c[Symbol.asyncIterator]()
    const pending = it.next()
    await c.rebalance()
    await blockedInRead()
    const t0 = performance.now()
    ctrl.abort()
    await expect(pending).rejects.toBeInstanceOf(AbortError)
    expect(performance.now() - t0).toBeLessThan(PROMPT_MS)
    await until(async () => (await twain.describeGroup('g')).members.length === 0, 2000, 'the member to leave')
    await until(async () => (await sharedConnections()) === 0, 2000, 'the blocking connection to go')
  })

  it('RxJS: unsubscribing while blocked ends the subscription at once; the member stays and a new view goes on', async () => {
    const { twain } = await fresh()
    await twain.createTopic('t')
    const c = twain.consumer<string>('t', { group: 'g', mode: 'shared' })
    let got = 0
    const sub = from(c).subscribe({ next: () => got++ })
    await c.rebalance()
    await blockedInRead()
    const ms = await timed(async () => sub.unsubscribe())
    expect(ms).toBeLessThan(PROMPT_MS)
    expect(c.assignments()).toEqual([{ topic: 't', partition: 0 }])
    await twain.producer<string>('t').send(1, 'after')
    const m = (await firstValueFrom(from(c).pipe(take(1)))) as GroupMessage<string>
    expect(m.value).toBe('after')
    expect(got).toBe(0)
    m.ack()
    const closing = timed(() => c.close())
    expect(await closing).toBeLessThan(PROMPT_MS)
  })

  it('twain.close() ends a blocked shared member promptly', async () => {
    const { prefix } = await fresh()
    const t = await open(server.url, { prefix })
    await t.createTopic('t')
    const c = t.consumer<string>('t', { group: 'g', mode: 'shared' })
    const loop = (async () => {
      for await (const _ of c) break
    })()
    await c.rebalance()
    await blockedInRead()
    expect(await timed(() => t.close())).toBeLessThan(PROMPT_MS)
    await loop
  })
})

describe('acknowledgements', () => {
  it('1000 acks go as at most a few XACK calls (counted with MONITOR)', async () => {
    const { twain } = await fresh()
    await twain.createTopic('t', { partitions: 2 })
    await twain
      .producer<string>('t')
      .sendBatch(Array.from({ length: 1000 }, (_, i) => ({ key: i, value: `v${i}`, partition: i % 2 })))
    const monitor = await new Redis({ port: server.port, host: '127.0.0.1', protocol: 2 }).monitor()
    let xacks = 0
    monitor.on('monitor', (_time: string, args: string[]) => {
      if (String(args[0]).toLowerCase() === 'xack') xacks++
    })
    try {
      const c = twain.consumer<string>('t', { group: 'g', mode: 'shared', commitIntervalMs: 60_000 })
      let got = 0
      for await (const m of c) {
        m.ack()
        if (++got === 1000) break
      }
      await c.commit()
      await sleep(100) // MONITOR reports arrive asynchronously: any further XACK would show within 100 ms
      expect(xacks).toBeGreaterThanOrEqual(1)
      expect(xacks).toBeLessThanOrEqual(4) // one per partition per batch of up to 1000
      expect((await twain.describeGroup('g')).topics.map((t) => t.pending)).toEqual([0, 0])
      await c.close()
    } finally {
      monitor.disconnect()
    }
  })

  it('acks made slowly are flushed every commitIntervalMs, not one XACK per message', async () => {
    const { twain } = await fresh()
    await twain.createTopic('t')
    await twain.producer<string>('t').sendBatch(Array.from({ length: 40 }, (_, i) => ({ key: i, value: `v${i}` })))
    const monitor = await new Redis({ port: server.port, host: '127.0.0.1', protocol: 2 }).monitor()
    let xacks = 0
    monitor.on('monitor', (_time: string, args: string[]) => {
      if (String(args[0]).toLowerCase() === 'xack') xacks++
    })
    try {
      const c = twain.consumer<string>('t', { group: 'g', mode: 'shared', commitIntervalMs: 200 })
      const commits: number[] = []
      c.on('commit', (x) => commits.push(...x.map((e) => e.offset)))
      let got = 0
      for await (const m of c) {
        await sleep(10) // ~40 acks over ~400+ ms
        m.ack()
        if (++got === 40) break
      }
      await c.commit()
      expect(xacks).toBeLessThanOrEqual(6)
      expect(commits.at(-1)).toBe(40)
      await c.close()
    } finally {
      monitor.disconnect()
    }
  })
})

describe('connection kills', () => {
  it('a member goes on through CLIENT KILLs of its connections: every message acked', async () => {
    const { twain, prefix } = await fresh()
    await twain.createTopic('t', { partitions: 2 })
    const c = twain.consumer<number>('t', { group: 'g', mode: 'shared', commitIntervalMs: 50, claimAfterMs: 1000 })
    c.on('error', () => undefined) // reads and flushes cut by a kill are retried
    const seen = new Set<number>()
    const loop = (async () => {
      for await (const m of c) {
        seen.add(m.value)
        m.ack()
      }
    })()
    const p = twain.producer<number>('t')
    for (let i = 0; i < 200; i++) {
      await p.send(i, i)
      if (i % 20 === 0) await admin.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes').catch(() => undefined)
      if (i % 10 === 0) await sleep(5)
    }
    await until(() => seen.size === 200, 15_000, `200 distinct messages (got ${seen.size})`)
    await until(
      async () => {
        await c.commit().catch(() => undefined)
        const rows = (await Promise.all([0, 1].map((part) => admin.xpending(`${prefix}{t:${part}}`, 'g')))) as Array<
          [number]
        >
        return rows.every((r) => Number(r[0]) === 0)
      },
      10_000,
      'every entry acknowledged',
    )
    await c.close()
    await loop
  }, 40_000)
})

describe('lost replies', () => {
  it("entries Redis counts as a member's that it never got are delivered once its read connection drops, not after claimAfterMs, their count kept", async () => {
    const { twain, prefix } = await fresh()
    await twain.createTopic('t', { partitions: 1 })
    const key = `${prefix}{t:0}`
    const c = twain.consumer<number>('t', { group: 'g', name: 'm', mode: 'shared', claimAfterMs: 60_000 })
    c.on('error', () => undefined) // the killed read is retried
    const p = twain.producer<number>('t')
    for (let i = 0; i < 3; i++) await p.send(i, i)
    // Another consumer name reads them (the group exists once the member joined), before the member reads.
    await until(
      async () => (await admin.exists(key)) === 1 && ((await admin.xinfo('GROUPS', key)) as unknown[]).length === 1,
      5000,
      'the group',
    )
    const taken = (await admin.call('XREADGROUP', 'GROUP', 'g', 'x', 'COUNT', '3', 'STREAMS', key, '>')) as Array<
      [string, Array<[string, string[]]>]
    >
    const ids = (taken[0]?.[1] ?? []).map(([id]) => id)
    expect(ids).toHaveLength(3)
    const got: Array<{ value: number; deliveryCount: number }> = []
    const loop = (async () => {
      for await (const m of c) {
        got.push({ value: m.value, deliveryCount: m.deliveryCount })
        m.ack()
      }
    })()
    await blockedInRead()
    // Now they are the member's in Redis (count kept, as a read whose reply was lost leaves them),
    // and its blocked read's connection drops.
    await admin.call('XCLAIM', key, 'g', 'm', '0', ...ids, 'JUSTID')
    await admin.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes')
    await until(() => got.length >= 3, 10_000, `the 3 entries (got ${got.length})`)
    expect(got.sort((a, b) => a.value - b.value)).toEqual([0, 1, 2].map((value) => ({ value, deliveryCount: 1 })))
    await c.close()
    await loop
  }, 30_000)
})

describe('process lifetime', () => {
  for (const mode of ['break-no-close', 'never-iterated', 'iterate-close']) {
    it(`a process with a shared member exits by itself (${mode})`, async () => {
      const { prefix } = await fresh()
      const child = spawnChild('shared-exit.ts', [server.url, prefix, mode])
      const out = lines(child)
      const code = await Promise.race([exited(child), sleep(15_000).then(() => 'timeout')])
      if (code === 'timeout') child.kill('SIGKILL')
      expect(code, out.stderr()).toBe(0)
      expect(out.lines.at(-1)).toBe('done')
    }, 20_000)
  }
})
