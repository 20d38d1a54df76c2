// Redis backend specifics: key layout, idempotent and multi-part appends, prefixes, connection
// errors, prompt teardown of blocked reads, and the built package finding its Lua scripts.
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { RedisKeys } from '../../../src/backends/redis/keys.js'
import { Scripts } from '../../../src/backends/redis/scripts.js'
import { AbortError, ConnectionError, open, type Twain } from '../../../src/index.js'
import { RedisServer } from '../../helpers/redis-server.js'
import { repoRoot } from '../../helpers/spawn.js'
import { PROMPT_MS, until, within } from '../../helpers/wait.js'
import { blockedClients } from '../../helpers/waiting-reads.js'
import { backendOf } from '../../../src/facade/twain.js'

let server: RedisServer
let admin: Redis
let twain: Twain
let prefix: string
let n = 0

beforeAll(async () => {
  server = await RedisServer.start()
  admin = new Redis({ port: server.port, host: '127.0.0.1', protocol: 2 })
})
afterAll(async () => {
  admin.disconnect()
  await server.destroy()
})
beforeEach(async () => {
  prefix = `rb${n++}:`
  twain = await open(server.url, { prefix, clientId: 'me' })
})
afterEach(async () => {
  await twain.close()
})

describe('key layout', () => {
  it('one stream per partition under a hash tag, entry IDs <offset>-1, fields r and p, partition keys beside it', async () => {
    await twain.createTopic('orders', { partitions: 2, keyType: 'string' })
    await twain.producer<string>('orders').sendBatch([
      { key: 'a', value: 'x', partition: 1 },
      { key: 'b', value: 'y', partition: 1 },
    ])
    const keys = (await admin.keys(`${prefix}*`)).sort()
    expect(keys).toEqual(
      [
        `${prefix}orders:meta`,
        `${prefix}topics`,
        // Every key a script names exists from the start (a Cluster slot migration: no TRYAGAIN for absent keys);
        // the producers hash holds the partition's incarnations (decision 112) from its creation on.
        ...[0, 1].flatMap((p) => [
          `${prefix}{orders:${p}}`,
          `${prefix}{orders:${p}}:end`,
          `${prefix}{orders:${p}}:start`,
          `${prefix}{orders:${p}}:producers`,
          `${prefix}{orders:${p}}:resv`,
          `${prefix}{orders:${p}}:ids`,
          `${prefix}{orders:${p}}:ids0`,
        ]),
      ].sort(),
    )
    expect(await admin.xlen(`${prefix}{orders:0}`)).toBe(0)
    expect(await admin.hget(`${prefix}{orders:0}:producers`, '~inc')).toMatch(/^t[0-9a-f]{16}:0$/)
    expect(await admin.get(`${prefix}{orders:1}:resv`)).toBe('-')
    // The idempotency ids: only their placeholders until a send with an id.
    expect(await admin.hgetall(`${prefix}{orders:1}:ids`)).toEqual({ '': '0 0' })
    expect(await admin.hgetall(`${prefix}{orders:1}:ids0`)).toEqual({ '': '-' })
    expect(await admin.type(`${prefix}{orders:1}`)).toBe('stream')
    const entries = await admin.xrange(`${prefix}{orders:1}`, '-', '+')
    expect(entries.map(([id, f]) => [id, f[0], f[2], f[3]])).toEqual([
      ['0-1', 'r', 'p', 'me'],
      ['1-1', 'r', 'p', 'me'],
    ])
    expect(await admin.get(`${prefix}{orders:1}:end`)).toBe('2')
    // The creation's incarnation, then the server's (12 hex digits of its run_id) from offset 0.
    expect(await admin.hget(`${prefix}{orders:1}:producers`, '~inc')).toMatch(/^t[0-9a-f]{16}:0 [0-9a-f]{12}:0$/)
    expect(await admin.hget(`${prefix}orders:meta`, 'state')).toBe('ready')
    // every key of a partition hashes to the same slot
    const slots = await Promise.all(
      [`${prefix}{orders:1}`, `${prefix}{orders:1}:end`, `${prefix}{orders:1}:producers`].map((k) =>
        admin.call('CLUSTER', 'KEYSLOT', k).catch(() => null),
      ),
    )
    if (slots[0] !== null) expect(new Set(slots).size).toBe(1)
  })

  it('group state lives beside each partition; membership under the group', async () => {
    await twain.createTopic('t', { partitions: 2 })
    const c = twain.consumer('t', { group: 'billing', sessionTimeoutMs: 2000, heartbeatIntervalMs: 100 })
    await c.rebalance()
    await c.commit()
    const keys = (await admin.keys(`${prefix}*`)).sort()
    expect(keys).toEqual(
      expect.arrayContaining([
        `${prefix}groups`,
        `${prefix}group:{billing}:members`,
        `${prefix}group:{billing}:alive`,
        `${prefix}group:{billing}:topics`,
        `${prefix}{t:0}:g:billing`,
        `${prefix}{t:1}:g:billing`,
      ]),
    )
    expect(await admin.hgetall(`${prefix}{t:0}:g:billing`)).toMatchObject({
      owner: c.memberId,
      epoch: expect.stringMatching(/^\d+$/),
      committed: '0',
    })
    await c.close()
    expect(await admin.hget(`${prefix}{t:0}:g:billing`, 'owner')).toBeNull()
  })

  it('deleteTopic removes every key of the topic, group state included', async () => {
    await twain.createTopic('t', { partitions: 3 })
    await twain.producer('t').send(1, 'x', { partition: 2 })
    const c = twain.consumer('t', { group: 'g', sessionTimeoutMs: 2000, heartbeatIntervalMs: 100 })
    await c.rebalance()
    await c.close()
    await twain.deleteTopic('t')
    expect((await admin.keys(`${prefix}*t*`)).filter((k) => k.includes('{t:') || k.endsWith('t:meta'))).toEqual([])
  })

  it('prefixes isolate stores on one server', async () => {
    await twain.createTopic('shared-name')
    const other = await open(server.url, { prefix: `${prefix}other:` })
    try {
      expect(await other.listTopics()).toEqual([])
      await other.createTopic('shared-name', { partitions: 2 })
      expect((await twain.describeTopic('shared-name')).partitions).toBe(1)
    } finally {
      await other.close()
    }
  })
})

describe('appends', () => {
  it('a re-sent batch (same producer instance and sequence number) is not written twice', async () => {
    await twain.createTopic('t')
    const keys = new RedisKeys(prefix)
    const client = new Redis({ port: server.port, host: '127.0.0.1', protocol: 2 })
    try {
      const scripts = new Scripts(client)
      const k = [
        keys.stream('t', 0),
        keys.end('t', 0),
        keys.start('t', 0),
        keys.producers('t', 0),
        keys.reservation('t', 0),
      ]
      // records as the script sees them: each starts with its u32 little-endian length
      const rec = Buffer.concat([Buffer.from([13, 0, 0, 0]), Buffer.from('not-a-record!')])
      const two = Buffer.concat([rec, rec])
      expect(await scripts.run('append', k, ['inst-1', 1, 'one', 0, 'me', 0, two])).toEqual([0, 0])
      expect(await scripts.run('append', k, ['inst-2', 1, 'one', 0, 'me', 0, rec])).toEqual([2, 0])
      expect(await scripts.run('append', k, ['inst-1', 1, 'one', 0, 'me', 0, two])).toEqual([0, 1]) // the duplicate
      expect(await scripts.run('append', k, ['inst-1', 2, 'one', 0, 'me', 0, rec])).toEqual([3, 0])
      expect(await admin.xlen(keys.stream('t', 0))).toBe(4)
      expect((await admin.xrangeBuffer(keys.stream('t', 0), '0-1', '0-1'))[0]?.[1][1]).toEqual(rec)
      await expect(scripts.run('append', k, ['inst-1', 5, 'next', 0, 'me', 0, rec])).rejects.toThrow(/SEQGAP/)
      await expect(
        scripts.run(
          'append',
          [
            keys.stream('nope', 0),
            keys.end('nope', 0),
            keys.start('nope', 0),
            keys.producers('nope', 0),
            keys.reservation('nope', 0),
          ],
          ['inst-1', 1, 'one', 0, 'me', 0, rec],
        ),
      ).rejects.toThrow(/NOTOPIC/)
    } finally {
      client.disconnect()
    }
  })

  it('a batch larger than one script call stays contiguous while another instance appends to the partition', async () => {
    await twain.createTopic('t')
    const other = await open(server.url, { prefix, clientId: 'other' })
    try {
      const big = Array.from({ length: 7000 }, (_, i) => ({ key: i % 65536, value: `big-${i}` }))
      const small = other.producer<string>('t')
      const racing = (async () => {
        const offs: number[] = []
        for (let i = 0; i < 50; i++) offs.push((await small.send(1, `small-${i}`)).offset)
        return offs
      })()
      const res = await twain.producer<string>('t').sendBatch(big)
      const smallOffs = await racing
      const base = res[0]!.offset
      expect(res.map((r) => r.offset)).toEqual(big.map((_, i) => base + i))
      for (const o of smallOffs) expect(o < base || o >= base + 7000).toBe(true)
      const values: string[] = []
      for await (const m of twain.history<string>('t')) values.push(m.value)
      expect(values).toHaveLength(7050)
      expect(values.slice(base, base + 7000)).toEqual(big.map((b) => b.value))
    } finally {
      await other.close()
    }
  })
})

describe('reads', () => {
  it('long reads come in order with read-ahead; entries deleted by hand are skipped with the right offsets', async () => {
    await twain.createTopic('t')
    await twain.producer<number>('t').sendBatch(Array.from({ length: 5000 }, (_, i) => ({ key: i % 65536, value: i })))
    const all: number[] = []
    for await (const m of twain.history<number>('t')) all.push(m.offset)
    expect(all).toEqual(Array.from({ length: 5000 }, (_, i) => i))
    await admin.xdel(`${prefix}{t:0}`, '10-1', '11-1', '4000-1') // not something twainmq does
    const got: Array<[number, number]> = []
    for await (const m of twain.history<number>('t', { from: 5, limit: 20 })) got.push([m.offset, m.value])
    expect(got).toEqual(
      Array.from({ length: 22 }, (_, i) => i + 5)
        .filter((o) => o !== 10 && o !== 11)
        .map((o) => [o, o]),
    )
    let n = 0
    for await (const m of twain.history<number>('t')) {
      expect(m.value).toBe(m.offset)
      n++
    }
    expect(n).toBe(4997)
  })
})

describe('connections', () => {
  it('open() of an unreachable Redis rejects with ConnectionError naming the target', async () => {
    const e = await open('redis://127.0.0.1:1', { prefix: 'x:' }).catch((x: unknown) => x)
    expect(e).toBeInstanceOf(ConnectionError)
    expect((e as Error).message).toContain('127.0.0.1:1')
  })

  it('a blocked 4-partition tail waits on one connection, is aborted at once and its connection is closed', async () => {
    await twain.createTopic('t', { partitions: 4 })
    const count = async () =>
      String(await admin.call('CLIENT', 'LIST'))
        .split('\n')
        .filter((l) => l.includes('name=twainmq:tail')).length
    const ctrl = new AbortController()
    const it = twain.tail('t', { signal: ctrl.signal })[Symbol.asyncIterator]()
    const pending = it.next()
    await until(async () => (await blockedClients(admin, 'xread')) === 1, 5000, 'one blocked read')
    expect(await count()).toBe(1)
    const t0 = performance.now()
    ctrl.abort()
    await expect(pending).rejects.toBeInstanceOf(AbortError)
    expect(performance.now() - t0).toBeLessThan(PROMPT_MS)
    await until(async () => (await count()) === 0, 5000, 'the tail connections to close')
  })

  it('a tail joining a waiting read is served at once (the read is re-issued), also after its connection was killed', async () => {
    await twain.createTopic('a')
    await twain.createTopic('b')
    await twain.createTopic('c')
    // Sends from another instance: a send of this instance would wake its own tails directly.
    const other = await open(server.url, { prefix })
    const first = twain.tail<number>('a')[Symbol.asyncIterator]()
    const pendingA = first.next()
    await until(async () => (await blockedClients(admin, 'xread')) === 1, 5000, 'the first tail blocked')
    // Joining: the blocked XREAD (BLOCK 5 s) is ended and re-issued with b's stream.
    const second = twain.tail<number>('b')[Symbol.asyncIterator]()
    const pendingB = second.next()
    const t0 = performance.now()
    await other.producer<number>('b').send(1, 2)
    // Bounded, so a tail that is never served says which (BLOCK is 5 s: a read not unblocked ends by then).
    expect((await within(pendingB, 8000, "tail b's message")).value.value).toBe(2)
    expect(performance.now() - t0).toBeLessThan(2500)
    // The tail connection is killed: ioredis reconnects and re-sends the read under a new client id.
    await admin.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes')
    await until(async () => (await blockedClients(admin, 'xread')) === 1, 5000, 'the read re-sent')
    const third = twain.tail<number>('c')[Symbol.asyncIterator]()
    const pendingC = third.next()
    const t1 = performance.now()
    await other.producer<number>('c').send(1, 3)
    expect((await within(pendingC, 8000, "tail c's message, after the kill")).value.value).toBe(3)
    expect(performance.now() - t1).toBeLessThan(2500)
    await other.producer<number>('a').send(1, 1)
    expect((await within(pendingA, 8000, "tail a's message")).value.value).toBe(1)
    await Promise.all([first.return?.(), second.return?.(), third.return?.()])
    await other.close()
  })

  it('ping() reports the server; close() is idempotent', async () => {
    expect(await twain.ping()).toBe(true)
    await twain.close()
    await twain.close()
    expect(await twain.ping()).toBe(false)
    expect(backendOf(twain).kind).toBe('redis')
  })
})

describe('the built package', () => {
  it('dist/ carries the Lua scripts and opens a Redis target', () => {
    const dir = join(repoRoot, 'dist', 'backends', 'redis', 'scripts')
    expect(existsSync(dir), 'dist/ is built by npm test (npm run build)').toBe(true)
    expect(readdirSync(join(repoRoot, 'src', 'backends', 'redis', 'scripts')).sort()).toEqual(readdirSync(dir).sort())
    const code = `const { open } = await import('./dist/index.js')
      const t = await open(${JSON.stringify(server.url)}, { prefix: 'dist:' })
      await t.createTopic('d').catch(() => {})
      const r = await t.producer('d').send(1, 'hi')
      const out = []
      for await (const m of t.history('d')) out.push(m.value)
      await t.close()
      console.log(JSON.stringify({ r, out }))`
    const res = spawnSync(process.execPath, ['--input-type=module', '-e', code], {
      cwd: repoRoot,
      encoding: 'utf8',
      timeout: 20_000,
    })
    expect(res.stderr).toBe('')
    expect(JSON.parse(res.stdout.trim())).toEqual({ r: { partition: 0, offset: 0 }, out: ['hi'] })
  })
})
