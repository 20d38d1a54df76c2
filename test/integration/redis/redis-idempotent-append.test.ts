// Redis specifics of idempotent appends (append-ids-7.lua): a reply lost after the script ran is
// answered by the re-sent call as the first time, nothing stored twice; ids are forgotten past
// their window and past the most a partition remembers, the earliest to expire first; and the id
// keys exist from the topic's creation and go with deleteTopic.
import { createServer, connect, type Server, type Socket } from 'node:net'
import { Redis } from 'ioredis'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { ID_HEADER, type RecordInput } from '../../../src/backends/record.js'
import { packIds } from '../../../src/backends/redis/append-parts.js'
import { RedisKeys } from '../../../src/backends/redis/keys.js'
import { RedisBackend } from '../../../src/backends/redis/redis-backend.js'
import { Scripts } from '../../../src/backends/redis/scripts.js'
import { readAll, records, topicMeta } from '../../contract/fixture.js'
import { RedisServer } from '../../helpers/redis-server.js'
import { sleep } from '../../helpers/wait.js'

const WINDOW = 60_000

let server: RedisServer
let admin: Redis
let prefix: string
let n = 0
const opened: RedisBackend[] = []

beforeAll(async () => {
  server = await RedisServer.start()
  admin = new Redis({ port: server.port, host: '127.0.0.1', protocol: 2 })
})
afterAll(async () => {
  admin.disconnect()
  await server.destroy()
})
beforeEach(() => {
  prefix = `ri${n++}:`
})
afterEach(async () => {
  await Promise.all(opened.splice(0).map((b) => b.close()))
})

const connectTo = async (url: string, clientId = 'me'): Promise<RedisBackend> => {
  const b = await RedisBackend.connect({ url, cluster: false }, { prefix, clientId })
  opened.push(b)
  return b
}

const meta = topicMeta('t')
/** Records with values and, where given, ids. */
const withIds = (specs: Array<[string, string | undefined]>) =>
  records(
    meta,
    specs.map(([value, id]) => (id === undefined ? { value } : { value, headers: { [ID_HEADER]: id } })),
  )

/**
 * A TCP proxy in front of the server. Once armed with a marker, the first command carrying it goes
 * to the server, its reply is swallowed, and then both sides of that connection are closed: the
 * script ran, the client never hears of it.
 */
async function lossyProxy(port: number): Promise<{
  url: string
  arm: (marker: string) => void
  swallowed: () => number
  connections: () => number
  close: () => Promise<void>
}> {
  let marker: Buffer | undefined
  let swallowed = 0
  let connections = 0
  const sockets = new Set<Socket>()
  const proxy: Server = createServer((client) => {
    connections++
    const upstream = connect({ host: '127.0.0.1', port })
    sockets.add(client).add(upstream)
    let cut = false
    client.on('data', (d: Buffer) => {
      if (marker && d.includes(marker)) {
        marker = undefined
        cut = true
      }
      upstream.write(d)
    })
    upstream.on('data', (d: Buffer) => {
      if (!cut) {
        client.write(d)
        return
      }
      // The marked command's reply (the only one outstanding: appends to a partition go one at a time).
      swallowed++
      client.destroy()
      upstream.destroy()
    })
    const end = () => {
      client.destroy()
      upstream.destroy()
      sockets.delete(client)
      sockets.delete(upstream)
    }
    client.on('close', end).on('error', end)
    upstream.on('close', end).on('error', end)
  })
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve))
  const addr = proxy.address()
  const proxyPort = typeof addr === 'object' && addr ? addr.port : 0
  return {
    url: `redis://127.0.0.1:${proxyPort}`,
    arm: (m) => (marker = Buffer.from(m)),
    swallowed: () => swallowed,
    connections: () => connections,
    close: async () => {
      for (const s of sockets) s.destroy()
      await new Promise<void>((resolve) => proxy.close(() => resolve()))
    },
  }
}

describe('a reply lost after the script ran', () => {
  it('the re-sent call stores nothing twice and resolves with the original offsets', async () => {
    const proxy = await lossyProxy(server.port)
    try {
      const b = await connectTo(proxy.url)
      await b.createTopic(meta)
      await b.append('t', 0, records(meta, ['x']), 'p')
      expect(await b.appendIdempotent('t', 0, withIds([['a', 'id-a']]), 'p', WINDOW)).toEqual([
        { offset: 1, duplicate: false },
      ])
      const before = proxy.connections()
      proxy.arm('id-lost')
      // A duplicate of an earlier call, a new id, a record without an id, a duplicate within the call.
      const got = await b.appendIdempotent(
        't',
        0,
        withIds([
          ['a again', 'id-a'],
          ['lost', 'id-lost'],
          ['plain', undefined],
          ['lost again', 'id-lost'],
        ]),
        'p',
        WINDOW,
      )
      expect(proxy.swallowed()).toBe(1)
      expect(proxy.connections()).toBeGreaterThan(before) // the call went again on a new connection
      // As the first (lost) answer was: the call's own records stored, not duplicates of themselves.
      expect(got).toEqual([
        { offset: 1, duplicate: true },
        { offset: 2, duplicate: false },
        { offset: 3, duplicate: false },
        { offset: 2, duplicate: true },
      ])
      const all = await readAll(b, 't')
      expect(all.map((m) => m.value)).toEqual(['x', 'a', 'lost', 'plain'])
      // The next append takes the next offset: the end moved once.
      expect(await b.append('t', 0, records(meta, ['y']), 'p')).toBe(4)
    } finally {
      await proxy.close()
    }
  }, 30_000)
})

describe('forgetting ids', () => {
  const rec = (s: string) => {
    const body = Buffer.from(s)
    const len = Buffer.alloc(4)
    len.writeUInt32LE(body.length)
    return Buffer.concat([len, body])
  }
  let seq = 0
  /** One script call as the appender makes it, with the most ids remembered set to `max`. */
  const call = async (scripts: Scripts, keys: string[], ids: string[], windowMs: number, max: number) =>
    scripts.run('append-ids', keys, [
      'inst',
      ++seq,
      'one',
      0,
      'me',
      Date.now(),
      Buffer.concat(ids.map((id) => rec(`v-${id}`))),
      windowMs,
      max,
      packIds(
        ids.map((id) => ({ headers: { [ID_HEADER]: id } }) as unknown as RecordInput),
        0,
        ids.length,
      ),
    ]) as Promise<number[]>
  const partition = (keys: RedisKeys) => [
    keys.stream('t', 0),
    keys.end('t', 0),
    keys.start('t', 0),
    keys.producers('t', 0),
    keys.reservation('t', 0),
    keys.ids('t', 0),
    keys.idsBefore('t', 0),
  ]

  it('keeps ids in two generations: a new one past the longest window or once full, the older dropped', async () => {
    const b = await connectTo(server.url)
    await b.createTopic(meta)
    const keys = new RedisKeys(prefix)
    const k = partition(keys)
    const client = new Redis({ port: server.port, host: '127.0.0.1', protocol: 2 })
    try {
      const scripts = new Scripts(client)
      const fields = async (key: string) =>
        Object.keys(await admin.hgetall(key))
          .filter((f) => f !== '')
          .sort()
      // A generation holds 2 ids (ARGV[9]): the call after it is full starts a new generation.
      expect(await call(scripts, k, ['a', 'b'], WINDOW, 2)).toEqual([0, 0])
      expect(await call(scripts, k, ['c'], WINDOW, 2)).toEqual([2, 0])
      expect(await fields(keys.ids('t', 0))).toEqual(['c'])
      expect(await fields(keys.idsBefore('t', 0))).toEqual(['a', 'b'])
      // Both generations are looked up: a remembered id is a duplicate (listed: index, its offset).
      expect(await call(scripts, k, ['a', 'd', 'c'], WINDOW, 2)).toEqual([3, 0, 1, 0, 3, 2])
      expect(await fields(keys.ids('t', 0))).toEqual(['c', 'd'])
      // The next generation drops the oldest one whole: a and b are forgotten, stored again.
      expect(await call(scripts, k, ['e', 'a'], WINDOW, 2)).toEqual([4, 0])
      expect(await fields(keys.idsBefore('t', 0))).toEqual(['c', 'd'])
      expect(await fields(keys.ids('t', 0))).toEqual(['a', 'e'])

      expect(await admin.xlen(keys.stream('t', 0))).toBe(6)

      // A partition without id keys (created before id appends existed) gets them with placeholders.
      await admin.del(keys.ids('t', 0), keys.idsBefore('t', 0))
      expect(await call(scripts, k, ['g'], 1, 100)).toEqual([6, 0])
      expect(await admin.hgetall(keys.ids('t', 0))).toEqual({
        '': expect.stringMatching(/^\d+ 1$/),
        g: expect.stringMatching(/^6 \d+$/),
      })
      expect(await admin.hexists(keys.idsBefore('t', 0), '')).toBe(1)
      // With only a 1 ms window asked for, each call a few ms later starts a new generation.
      await sleep(5)
      expect(await call(scripts, k, ['h'], 1, 100)).toEqual([7, 0])
      await sleep(5)
      expect(await call(scripts, k, ['i'], 1, 100)).toEqual([8, 0])
      expect(await fields(keys.idsBefore('t', 0))).toEqual(['h'])
      expect(await fields(keys.ids('t', 0))).toEqual(['i'])
    } finally {
      client.disconnect()
    }
  })

  it('windowMs must be a positive integer', async () => {
    const b = await connectTo(server.url)
    await b.createTopic(meta)
    for (const bad of [0, -5, 1.5, Number.NaN])
      await expect(b.appendIdempotent('t', 0, withIds([['a', 'id-a']]), 'p', bad)).rejects.toThrow(
        new RegExp(`windowMs .*got ${String(bad)}$`),
      )
  })
})

describe('a call larger than one script call', () => {
  it('goes as several parts; an id of an earlier part is a duplicate in a later one', async () => {
    const b = await connectTo(server.url)
    await b.createTopic(meta)
    const specs = Array.from({ length: 4500 }, (_, i): [string, string | undefined] => [
      `v${i}`,
      i % 7 === 0 ? undefined : `id-${i % 3000}`,
    ])
    const got = await b.appendIdempotent('t', 0, withIds(specs), 'p', WINDOW)
    let next = 0
    const firstAt = new Map<string, number>()
    const expected = specs.map(([, id]) => {
      const at = id === undefined ? undefined : firstAt.get(id)
      if (at !== undefined) return { offset: at, duplicate: true }
      if (id !== undefined) firstAt.set(id, next)
      return { offset: next++, duplicate: false }
    })
    expect(got).toEqual(expected)
    expect(await b.append('t', 0, records(meta, ['after']), 'p')).toBe(next)
  })
})

describe('id keys', () => {
  it('a plain append leaves the ids alone; deleteTopic removes them with the partition', async () => {
    const b = await connectTo(server.url)
    await b.createTopic(meta)
    const keys = new RedisKeys(prefix)
    await b.appendIdempotent('t', 0, withIds([['a', 'id-a']]), 'p', WINDOW)
    await b.append('t', 0, records(meta, ['plain']), 'p')
    expect(await admin.hget(keys.ids('t', 0), 'id-a')).toMatch(/^0 \d+$/)
    expect(await b.appendIdempotent('t', 0, withIds([['a', 'id-a']]), 'p', WINDOW)).toEqual([
      { offset: 0, duplicate: true },
    ])
    await b.deleteTopic('t')
    expect(await admin.exists(keys.ids('t', 0), keys.idsBefore('t', 0))).toBe(0)
    expect((await admin.keys(`${prefix}*`)).filter((k) => k.includes('{t:') || k.endsWith('t:meta'))).toEqual([])
    // Created again: a new log, with no ids remembered.
    await b.createTopic(meta)
    expect(await b.appendIdempotent('t', 0, withIds([['a', 'id-a']]), 'p', WINDOW)).toEqual([
      { offset: 0, duplicate: false },
    ])
  })
})
