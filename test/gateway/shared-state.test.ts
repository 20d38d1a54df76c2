// Two gateways over one store, each on its own Twain (own caches and folds, as two processes
// would have): what one creates, appends, closes and deletes, the other sees; producer state and
// closure come from the log; a producer's retry through both at once is applied once; a live read
// on one is woken by an append through the other.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RedisServer } from '../helpers/redis-server.js'
import { tempDir } from '../helpers/tmp.js'
import { until } from '../helpers/wait.js'
import { readSse } from './http.js'
import { serve, type Served } from './serve.js'

describe.each(['file', 'redis'] as const)('two gateways over one store (%s)', (kind) => {
  let a: Served
  let b: Served
  let redis: RedisServer | undefined
  const dir = tempDir('twainmq-gw-two-')
  beforeAll(async () => {
    if (kind === 'redis') redis = await RedisServer.start()
    const target = redis ? redis.url : dir.dir
    a = await serve(target, { longPollMs: 20_000 })
    b = await serve(target, { longPollMs: 20_000 })
  })
  afterAll(async () => {
    await a?.stop()
    await b?.stop()
    await redis?.stop()
    dir.remove()
  })
  const on = (s: Served, name: string, query = ''): string => `${s.url}/v1/stream/${name}${query}`
  const producer = (id: string, epoch: number, seq: number) => ({
    'producer-id': id,
    'producer-epoch': String(epoch),
    'producer-seq': String(seq),
  })

  it('configuration, producer state and closure made through one are what the other enforces', async () => {
    const json = { 'content-type': 'application/json' }
    expect((await fetch(on(a, 's1'), { method: 'PUT', headers: { ...json, 'stream-ttl': '3600' } })).status).toBe(201)
    const head = await fetch(on(b, 's1'), { method: 'HEAD' })
    expect([head.status, head.headers.get('content-type'), head.headers.get('stream-ttl')]).toEqual([
      200,
      'application/json',
      '3600',
    ])
    expect((await fetch(on(b, 's1'), { method: 'PUT', headers: { ...json, 'stream-ttl': '60' } })).status).toBe(409)

    expect(
      (await fetch(on(a, 's1'), { method: 'POST', headers: { ...json, ...producer('p', 0, 0) }, body: '[1,2]' }))
        .status,
    ).toBe(200)
    const dup = await fetch(on(b, 's1'), {
      method: 'POST',
      headers: { ...json, ...producer('p', 0, 0) },
      body: '[1,2]',
    })
    expect([dup.status, dup.headers.get('producer-seq')]).toEqual([204, '0'])
    const gap = await fetch(on(b, 's1'), { method: 'POST', headers: { ...json, ...producer('p', 0, 5) }, body: '3' })
    expect([gap.status, gap.headers.get('producer-expected-seq')]).toEqual([409, '1'])
    expect(
      (await fetch(on(b, 's1'), { method: 'POST', headers: { ...json, ...producer('p', 0, 1) }, body: '3' })).status,
    ).toBe(200)

    expect((await fetch(on(b, 's1'), { method: 'POST', headers: { 'stream-closed': 'true' } })).status).toBe(204)
    const late = await fetch(on(a, 's1'), { method: 'POST', headers: json, body: '4' })
    expect([late.status, late.headers.get('stream-closed')]).toEqual([409, 'true'])
    const read = await fetch(on(a, 's1'))
    expect(await read.json()).toEqual([1, 2, 3])
    expect(read.headers.get('stream-closed')).toBe('true')

    expect((await fetch(on(b, 's1'), { method: 'DELETE' })).status).toBe(204)
    expect((await fetch(on(a, 's1'), { method: 'HEAD' })).status).toBe(404)
  })

  it('the same producer sequence posted through both at once is applied once (compare-and-append across stores)', async () => {
    const json = { 'content-type': 'application/json' }
    await fetch(on(a, 's3'), { method: 'PUT', headers: json })
    const statuses: number[][] = []
    for (let seq = 0; seq < 20; seq++) {
      const post = (s: Served) =>
        fetch(on(s, 's3'), {
          method: 'POST',
          headers: { ...json, ...producer('racer', 0, seq) },
          body: `[${seq}]`,
        }).then((r) => r.status)
      statuses.push((await Promise.all([post(a), post(b)])).sort())
    }
    expect(statuses).toEqual(Array.from({ length: 20 }, () => [200, 204]))
    expect(await (await fetch(on(b, 's3'))).json()).toEqual(Array.from({ length: 20 }, (_, i) => i))
  })

  it('a long-poll and an SSE reader on one gateway are woken by appends through the other', async () => {
    await fetch(on(a, 's2'), { method: 'PUT', headers: { 'content-type': 'text/plain' } })
    const sse = await fetch(on(a, 's2', '?offset=now&live=sse'))
    const text = readSse(sse, (t) => t.includes('"streamClosed":true'))
    const poll = fetch(on(a, 's2', '?offset=now&live=long-poll'))
    await until(() => a.watches() === 2, 5000, 'both reads waiting on gateway a')
    await fetch(on(b, 's2'), {
      method: 'POST',
      headers: { 'content-type': 'text/plain', 'stream-closed': 'true' },
      body: 'bye',
    })
    const lp = await poll
    expect([lp.status, await lp.text()]).toEqual([200, 'bye'])
    expect(await text).toMatch(/event: data\ndata:bye\n\nevent: control\ndata:\{[^}]*"streamClosed":true/)
  })
  it('reads through one renew the sliding TTL for the other; once reads stop, both see it expire', async () => {
    // A timed scenario (the TTL is the point): reads every 300 ms through `a` for three TTLs of 1 s.
    expect(
      (await fetch(on(a, 'ttl'), { method: 'PUT', headers: { 'content-type': 'text/plain', 'stream-ttl': '1' } }))
        .status,
    ).toBe(201)
    const until3s = Date.now() + 3000
    while (Date.now() < until3s) {
      expect((await fetch(on(a, 'ttl', '?offset=now'))).status).toBe(200)
      expect((await fetch(on(b, 'ttl'), { method: 'HEAD' })).status, 'the stream as the other gateway sees it').toBe(
        200,
      )
      await new Promise((r) => setTimeout(r, 300))
    }
    await until(
      async () => (await fetch(on(b, 'ttl'), { method: 'HEAD' })).status === 404,
      10_000,
      'the stream to expire once reads stop',
    )
    expect((await fetch(on(a, 'ttl'), { method: 'HEAD' })).status).toBe(404)
  })
})
