// Compacted State Protocol streams (`Stream-Compaction: state`): each entity's latest change event
// is kept, deletes are tombstones served as the events they were, control events all stay, and what
// the gateway folds from the log (producers, Stream-Seq, the close) survives compaction and a new
// gateway process. `@durable-streams/state`'s StreamDB reads such a stream unchanged. Over a file
// store and over Redis.
import { createStateSchema, createStreamDB } from '@durable-streams/state/db'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { backendOf } from '../../src/facade/twain.js'
import { createGateway } from '../../src/gateway/index.js'
import { open } from '../../src/index.js'
import { tempRoot } from '../helpers/twainmq.js'
import { RedisServer } from '../helpers/redis-server.js'
import { tempDir } from '../helpers/tmp.js'
import { until } from '../helpers/wait.js'
import { serve, type Served } from './serve.js'

const kinds = ['file', 'redis'] as const

interface User {
  id: string
  name: string
  n: number
}

/** A Standard Schema validator that takes any object (StreamDB needs one per collection). */
const anyObject = {
  '~standard': {
    version: 1 as const,
    vendor: 'twainmq-test',
    validate: (value: unknown) => ({ value: value as User }),
  },
}
const schema = createStateSchema({ users: { schema: anyObject, type: 'user', primaryKey: 'id' } })

const upsert = (id: string, n: number, operation = 'update') => ({
  type: 'user',
  key: id,
  value: { id, name: `user ${id}`, n },
  headers: { operation },
})
const remove = (id: string) => ({ type: 'user', key: id, old_value: { id }, headers: { operation: 'delete' } })

/** Requests to the gateway `gateway()` gives (read when each request is made), and its store's passes. */
function api(gateway: () => Served) {
  const url = (name: string, query = ''): string => `${gateway().url}/v1/stream/${name}${query}`
  return {
    url,
    /** A PUT of a compacted state stream. */
    put: (name: string, headers: Record<string, string> = {}, body?: unknown) =>
      fetch(url(name), {
        method: 'PUT',
        headers: { 'content-type': 'application/json', 'stream-compaction': 'state', ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
    post: (name: string, body: unknown, headers: Record<string, string> = {}) =>
      fetch(url(name), {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      }),
    compact: (name: string) => backendOf(gateway().twain).compact(name),
    /** Two passes: Redis removes a tombstone a pass has seen before; a file pass, one written before it. */
    compactTwice: async (name: string) => {
      const store = backendOf(gateway().twain)
      await store.compact(name)
      await store.compact(name)
    },
  }
}

describe.each(kinds)('compacted state streams (%s)', (kind) => {
  let served: Served
  let redis: RedisServer | undefined
  const dir = tempDir('twainmq-gw-state-')
  const target = (): string => (redis ? redis.url : dir.dir)
  const { url, put, post, compact } = api(() => served)
  const read = async (name: string, query = ''): Promise<unknown[]> =>
    (await (await fetch(url(name, query))).json()) as unknown[]
  beforeAll(async () => {
    if (kind === 'redis') redis = await RedisServer.start()
    served = await serve(target())
  })
  afterAll(async () => {
    await served?.stop()
    await redis?.destroy()
    dir.remove()
  })

  it('is created with Stream-Compaction: state and says so; other uses of the header are refused', async () => {
    const created = await put('s-create')
    expect(created.status).toBe(201)
    expect(created.headers.get('stream-compaction')).toBe('state')
    expect((await fetch(url('s-create'), { method: 'HEAD' })).headers.get('stream-compaction')).toBe('state')
    expect((await put('s-create')).status).toBe(200)
    const plain = await fetch(url('s-create'), { method: 'PUT', headers: { 'content-type': 'application/json' } })
    expect(plain.status).toBe(409)
    const bytes = await put('s-bytes', { 'content-type': 'application/octet-stream' })
    expect(bytes.status).toBe(400)
    expect(await bytes.text()).toContain('application/octet-stream')
    const other = await put('s-other', { 'stream-compaction': 'key' })
    expect(other.status).toBe(400)
    expect(await other.text()).toContain('"key"')
    const fork = await put('s-fork', { 'stream-forked-from': '/v1/stream/s-create' })
    expect(fork.status).toBe(400)
    const forkOf = await fetch(url('s-fork'), {
      method: 'PUT',
      headers: { 'content-type': 'application/json', 'stream-forked-from': '/v1/stream/s-create' },
    })
    expect(forkOf.status).toBe(409)
    expect(await forkOf.text()).toContain('compacted')
  })

  it('keeps the latest event of each entity, every control event and the deletes, in log order', async () => {
    expect((await put('s-latest', {}, [upsert('a', 0, 'insert'), upsert('b', 0, 'insert')])).status).toBe(201)
    await post('s-latest', { headers: { control: 'snapshot-start' } })
    for (let n = 1; n <= 3; n++) await post('s-latest', [upsert('a', n), upsert('b', n), upsert('c', n, 'upsert')])
    await post('s-latest', [remove('b'), { headers: { control: 'snapshot-end' } }])
    // A delete is served as it was sent (before the explicit pass below; a background one keeps it too).
    expect(await read('s-latest')).toContainEqual(remove('b'))
    await compact('s-latest')
    expect(await read('s-latest')).toEqual([
      { headers: { control: 'snapshot-start' } },
      upsert('a', 3),
      upsert('c', 3, 'upsert'),
      remove('b'),
      { headers: { control: 'snapshot-end' } },
    ])
    // A live reader at the tail gets what comes next, a delete too.
    const tail = (await fetch(url('s-latest'))).headers.get('stream-next-offset') as string
    const poll = fetch(url('s-latest', `?offset=${tail}&live=long-poll`))
    await post('s-latest', remove('a'))
    expect(await (await poll).json()).toEqual([remove('a')])
  })

  it('refuses an append with an event that is not a State Protocol event, naming it, and stores none of it', async () => {
    await put('s-bad')
    const cases: Array<[unknown, string]> = [
      [[upsert('a', 1), 42], 'event 1 is not an object'],
      [{ type: 'user', key: 'a', value: {} }, 'no headers object'],
      [{ type: 'user', key: 'a', headers: { operation: 'merge' } }, 'neither headers.operation'],
      [{ key: 'a', headers: { operation: 'insert' } }, 'non-empty string type'],
      [{ type: 'user', key: 7, headers: { operation: 'insert' } }, 'non-empty string key'],
      [{ type: 'user', key: '', headers: { operation: 'delete' } }, 'non-empty string key'],
      [{ type: 'user', key: 'a', headers: { operation: 'update' } }, '(update) needs a value'],
      [{ headers: { control: 'rewind' } }, 'nor headers.control'],
      [{ type: 'user', key: 'k'.repeat(5000), value: {}, headers: { operation: 'insert' } }, 'longer than 4096 bytes'],
    ]
    for (const [body, says] of cases) {
      const r = await post('s-bad', body)
      expect(r.status).toBe(400)
      expect(await r.text()).toContain(says)
    }
    expect(await read('s-bad')).toEqual([])
    // A PUT whose body is refused makes no stream.
    expect((await put('s-bad-put', {}, [upsert('a', 0), { headers: {} }])).status).toBe(400)
    expect((await fetch(url('s-bad-put'), { method: 'HEAD' })).status).toBe(404)
  })

  it('deletes go once the tombstone retention has passed', async () => {
    const short = await serve(target(), { tombstoneRetentionMs: 0 })
    try {
      const s = api(() => short)
      await s.put('s-tomb', {}, [upsert('a', 1, 'insert'), upsert('b', 1, 'insert'), remove('a')])
      await s.compactTwice('s-tomb')
      expect(await (await fetch(s.url('s-tomb'))).json()).toEqual([upsert('b', 1, 'insert')])
    } finally {
      await short.stop()
    }
  })

  it("producers, Stream-Seq and the close survive compaction and a new gateway's fold", async () => {
    // With no tombstone retention, so that a close marker that looked like a tombstone would go.
    const gateways = [await serve(target(), { tombstoneRetentionMs: 0 })]
    const latest = api(() => gateways.at(-1) as Served)
    const at = () => latest.url('s-fold')
    const send = (body: unknown, headers: Record<string, string>) => latest.post('s-fold', body, headers)
    const compactTwice = () => latest.compactTwice('s-fold')
    const producer = (seq: number) => ({ 'producer-id': 'writer', 'producer-epoch': '0', 'producer-seq': String(seq) })
    try {
      await latest.put('s-fold')
      for (let seq = 0; seq < 5; seq++)
        expect((await send(upsert('a', seq), { ...producer(seq), 'stream-seq': `s${seq}` })).status).toBe(200)
      // Another writer's append of the same entity, so compaction removes the producer's records.
      await send([upsert('a', 99), upsert('b', 0)], {})
      await compactTwice()
      gateways.push(await serve(target()))
      // The retry of the producer's last append is a duplicate: not stored again.
      expect((await send(upsert('a', 4), producer(4))).status).toBe(204)
      expect((await send(upsert('a', 9), producer(6))).status).toBe(409) // a gap after seq 4
      expect((await send(upsert('a', 9), { 'stream-seq': 's3' })).status).toBe(409) // not after s4
      expect((await send(upsert('c', 5), { ...producer(5), 'stream-seq': 's5' })).status).toBe(200)
      const closing = { method: 'POST', headers: { 'stream-closed': 'true', ...producer(6) } }
      expect((await fetch(at(), closing)).status).toBe(204)
      await compactTwice()
      gateways.push(await serve(target()))
      // The retry of the closing append is a duplicate too: the close records who closed it.
      const again = await fetch(at(), closing)
      expect([again.status, again.headers.get('stream-closed')]).toEqual([204, 'true'])
      const head = await fetch(at(), { method: 'HEAD' })
      expect(head.headers.get('stream-closed')).toBe('true')
      expect(head.headers.get('stream-compaction')).toBe('state')
      expect(await (await fetch(at())).json()).toEqual([upsert('a', 99), upsert('b', 0), upsert('c', 5)])
    } finally {
      for (const g of gateways) await g.stop()
    }
  })

  it('a delete that ended the stream, gone with its retention, leaves the end where it was for a new gateway', async () => {
    const gateways = [await serve(target(), { tombstoneRetentionMs: 0 })]
    const at = (q = '') => `${gateways.at(-1)?.url}/v1/stream/s-end${q}`
    // Bounded, so that a gateway that lost the end fails the test instead of retrying the append forever.
    const request = (q: string, init: RequestInit = {}) =>
      fetch(at(q), { ...init, signal: AbortSignal.timeout(10_000) })
    const json = { 'content-type': 'application/json' }
    try {
      const made = await request('', {
        method: 'PUT',
        headers: { ...json, 'stream-compaction': 'state' },
        body: JSON.stringify([upsert('a', 0, 'insert'), remove('a')]),
      })
      expect(made.status).toBe(201)
      const appended = await request('', {
        method: 'POST',
        headers: json,
        body: JSON.stringify([upsert('c', 0, 'insert'), remove('c')]),
      })
      const end = appended.headers.get('stream-next-offset') as string
      await api(() => gateways[0] as Served).compactTwice('s-end')
      gateways.push(await serve(target()))
      expect((await request('', { method: 'HEAD' })).headers.get('stream-next-offset')).toBe(end)
      const atEnd = await request(`?offset=${end}`)
      expect([atEnd.status, await atEnd.json()]).toEqual([200, []])
      const next = await request('', { method: 'POST', headers: json, body: JSON.stringify(upsert('b', 0, 'insert')) })
      expect(next.status).toBe(204)
      expect(await (await request('')).json()).toEqual([upsert('b', 0, 'insert')])
    } finally {
      for (const g of gateways) await g.stop()
    }
  })

  it('a stream written through the gateway is compacted by it every compactEveryMs', async () => {
    const quick = await serve(target(), { compactEveryMs: 50 })
    try {
      const at = `${quick.url}/v1/stream/s-auto`
      await fetch(at, { method: 'PUT', headers: { 'content-type': 'application/json', 'stream-compaction': 'state' } })
      for (let n = 0; n < 20; n++)
        await fetch(at, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify([upsert('a', n), upsert('b', n)]),
        })
      await until(async () => ((await (await fetch(at)).json()) as unknown[]).length === 2)
      expect(await (await fetch(at)).json()).toEqual([upsert('a', 19), upsert('b', 19)])
    } finally {
      await quick.stop()
    }
  })

  it('StreamDB reads a compacted stream unchanged: the latest rows, then live changes', async () => {
    await put('s-db', {}, [upsert('a', 0, 'insert'), upsert('b', 0, 'insert'), upsert('c', 0, 'insert')])
    for (let n = 1; n <= 5; n++) await post('s-db', [upsert('a', n), upsert('b', n)])
    await post('s-db', remove('c'))
    await compact('s-db')
    // The compacted stream starts with updates whose inserts are gone.
    expect((await read('s-db')).length).toBe(3)
    const db = createStreamDB({ streamOptions: { url: url('s-db'), contentType: 'application/json' }, state: schema })
    try {
      await db.preload()
      const rows = () =>
        [...db.collections.users.values()].map((u) => ({ id: u.id, n: u.n })).sort((x, y) => x.id.localeCompare(y.id))
      expect(rows()).toEqual([
        { id: 'a', n: 5 },
        { id: 'b', n: 5 },
      ])
      await post('s-db', [upsert('d', 1, 'insert'), remove('a'), upsert('b', 6)])
      await until(() => rows().length === 2 && rows()[1]?.id === 'd')
      expect(rows()).toEqual([
        { id: 'b', n: 6 },
        { id: 'd', n: 1 },
      ])
    } finally {
      db.close()
    }
  })
})

describe('compacted state streams on a store without compacted topics', () => {
  it('a PUT with Stream-Compaction answers 501 on a Python TwainMQ root, and makes nothing', async () => {
    const root = tempRoot(false)
    const twain = await open(root.dir, { format: 'twainmq-v1' })
    const gateway = createGateway(twain)
    try {
      const made = await gateway.fetch(
        new Request('http://gateway.test/v1/stream/board', {
          method: 'PUT',
          headers: { 'content-type': 'application/json', 'stream-compaction': 'state' },
        }),
      )
      expect(made.status).toBe(501)
      expect(await made.text()).toContain('cannot hold compacted streams')
      const head = await gateway.fetch(new Request('http://gateway.test/v1/stream/board', { method: 'HEAD' }))
      expect(head.status).toBe(404)
    } finally {
      await gateway.close()
      await twain.close()
      root.remove()
    }
  })
})
