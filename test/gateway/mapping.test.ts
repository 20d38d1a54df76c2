// The gateway's mapping onto twainmq, both directions: Node producers to HTTP readers (live), HTTP
// appends to Node consumer groups, multi-partition topics per partition, and offsets of a stream
// deleted and created again. Over a file store and over Redis.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { GroupMessage } from '../../src/index.js'
import { RedisServer } from '../helpers/redis-server.js'
import { until } from '../helpers/wait.js'
import { tempDir } from '../helpers/tmp.js'
import { readSse } from './http.js'
import { serve, type Served } from './serve.js'

const kinds = ['file', 'redis'] as const

describe.each(kinds)('gateway mapping (%s)', (kind) => {
  let served: Served
  let redis: RedisServer | undefined
  const dir = tempDir('twainmq-gw-map-')
  const url = (name: string, query = ''): string => `${served.url}/v1/stream/${name}${query}`
  beforeAll(async () => {
    if (kind === 'redis') redis = await RedisServer.start()
    served = await serve(redis ? redis.url : dir.dir, { longPollMs: 20_000 })
  })
  afterAll(async () => {
    await served?.stop()
    await redis?.stop()
    dir.remove()
  })

  it('a Node producer’s message wakes an HTTP long-poll and an SSE reader at once', async () => {
    await served.twain.createTopic('events')
    const sse = await fetch(url('events', '?offset=now&live=sse'))
    expect(sse.headers.get('content-type')).toBe('text/event-stream')
    const poll = fetch(url('events', '?offset=now&live=long-poll'))
    const started = Date.now()
    const firstControl = readSse(sse, (t) => t.includes('"v":1'))
    await until(() => served.watches() === 2, 5000, 'the SSE and long-poll reads waiting') // both at the tail
    await served.twain.producer('events').send(1, { v: 1 })
    const lp = await poll
    expect(lp.status).toBe(200)
    expect(await lp.json()).toEqual([{ v: 1 }])
    expect(Date.now() - started).toBeLessThan(10_000) // woken by the append, not by the 20 s timeout
    expect(await firstControl).toMatch(/event: data\ndata:\[\{"v":1\}\]\n\nevent: control\ndata:\{"streamNextOffset"/)
  })

  it('a nested stream path is the topic of its segments joined by +, both ways', async () => {
    const put = await fetch(url('events/eu/orders'), { method: 'PUT', headers: { 'content-type': 'application/json' } })
    expect(put.status).toBe(201)
    await fetch(url('events/eu/orders'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '[{"n":1}]',
    })
    expect(await served.twain.listTopics()).toContain('events+eu+orders')
    await served.twain.producer('events+eu+orders').send(0, { n: 2 })
    const got = await fetch(url('events/eu/orders', '?offset=-1'))
    expect(await got.json()).toEqual([{ n: 1 }, { n: 2 }])
    // Segments are percent-decoded one by one; the separators stay separators.
    const encoded = await fetch(url('events/%65u/orders', '?offset=-1'))
    expect(await encoded.json()).toEqual([{ n: 1 }, { n: 2 }])
    // Per-partition streams of a nested topic take ~<p> on the last segment.
    await served.twain.createTopic('logs+app', { partitions: 2 })
    await served.twain.producer('logs+app').send(0, 'x', { partition: 1 })
    expect(await (await fetch(url('logs/app~1', '?offset=-1'))).text()).toContain('x')
    expect((await fetch(url('events/eu'), { method: 'HEAD' })).status).toBe(404)
    // The overview (the dashboard's source) names them by path, which the streams URL takes.
    const overview = (await (await fetch(`${served.url}/v1/topics`)).json()) as {
      topics: Array<{ topic: string; partitions: Array<{ stream: string }> }>
    }
    const streams = overview.topics.flatMap((t) => t.partitions.map((p) => p.stream))
    expect(streams).toEqual(expect.arrayContaining(['events/eu/orders', 'logs/app~0', 'logs/app~1']))
  })

  it('HTTP appends are read by a Node consumer group: JSON items, text and bytes as values', async () => {
    const put = await fetch(url('orders'), { method: 'PUT', headers: { 'content-type': 'application/json' } })
    expect(put.status).toBe(201)
    const post = await fetch(url('orders'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '[{"n":1},{"n":2}]',
    })
    expect(post.status).toBe(204)
    await fetch(url('notes'), { method: 'PUT', headers: { 'content-type': 'text/plain' }, body: 'héllo' })
    await fetch(url('blobs'), {
      method: 'PUT',
      headers: { 'content-type': 'application/octet-stream' },
      body: new Uint8Array([0, 255, 7]),
    })
    const group = served.twain.consumer(['orders', 'notes', 'blobs'], { group: 'http-readers', commitIntervalMs: 10 })
    const seen: GroupMessage[] = []
    for await (const m of group) {
      if (m.type === undefined) seen.push(m) // ds.* control records (config, close) are visible to Node readers
      m.ack()
      if (seen.length === 4) break
    }
    await group.close()
    const byTopic = (t: string) => seen.filter((m) => m.topic === t).map((m) => m.value)
    expect(byTopic('orders')).toEqual([{ n: 1 }, { n: 2 }])
    expect(byTopic('notes')).toEqual(['héllo'])
    expect(byTopic('blobs')).toEqual([Buffer.from([0, 255, 7])])
  })

  it('a multi-partition topic reads as one read-only stream per partition: <topic>~<p>', async () => {
    await served.twain.createTopic('multi', { partitions: 3 })
    const producer = served.twain.producer('multi')
    const sent = await Promise.all([0, 1, 2, 3, 4, 5, 6, 7, 8].map((k) => producer.send(k, { k })))
    const all: unknown[] = []
    for (const p of [0, 1, 2]) {
      const res = await fetch(url(`multi~${p}`))
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toBe('application/json')
      const values = (await res.json()) as { k: number }[]
      expect(values).toEqual(
        sent
          .map((s, k) => ({ s, k }))
          .filter((x) => x.s.partition === p)
          .map((x) => ({ k: x.k })),
      )
      all.push(...values)
    }
    expect(all).toHaveLength(9)
    const whole = await fetch(url('multi'))
    expect(whole.status).toBe(404)
    expect(await whole.text()).toMatch(/3 partitions: read them as streams multi~0 \.\. multi~2/)
    expect((await fetch(url('multi~3'))).status).toBe(404)
    const post = await fetch(url('multi~0'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '1',
    })
    expect(post.status).toBe(405)
  })

  it('answers 410 for an offset that retention trimmed away (a Node topic), and reads the rest from -1', async () => {
    await served.twain.createTopic('trimmed')
    const producer = served.twain.producer('trimmed')
    for (const n of [0, 1, 2, 3, 4]) await producer.send(0, n)
    const tail = (await fetch(url('trimmed'))).headers.get('stream-next-offset')!
    const second = `${tail.split('_')[0]}_${'1'.padStart(16, '0')}` // documented format: incarnation_offset
    expect(await (await fetch(url('trimmed', `?offset=${second}`))).json()).toEqual([1, 2, 3, 4])
    await served.twain.trim('trimmed', { maxMessages: 2 })
    const gone = await fetch(url('trimmed', `?offset=${second}`))
    expect(gone.status).toBe(410)
    expect(await gone.text()).toMatch(/retention trimmed it/)
    expect(await (await fetch(url('trimmed', '?offset=-1'))).json()).toEqual([3, 4])
  })

  it('refuses a JSON body nested deeper than 1000 levels with 400 naming the limit, as send() does', async () => {
    await fetch(url('deep'), { method: 'PUT', headers: { 'content-type': 'application/json' } })
    const post = (body: string) =>
      fetch(url('deep'), { method: 'POST', headers: { 'content-type': 'application/json' }, body })
    const nested = (n: number) => '['.repeat(n) + ']'.repeat(n)
    for (const levels of [1001, 5000, 100_000]) {
      // As one value in an object (not flattened), and as an array body whose one item nests that deep.
      for (const body of [`{"v":${nested(levels - 1)}}`, `[${nested(levels)}]`]) {
        const res = await post(body)
        expect(res.status).toBe(400)
        expect(await res.text()).toMatch(
          /nests arrays and objects \d+ levels deep; twainmq stores JSON values up to 1000 levels/,
        )
      }
    }
    expect((await post(`[${nested(1000)}]`)).status).toBe(204) // an array body: its items are the values
    expect((await post(`{"v":${nested(999)}}`)).status).toBe(204)
    expect(await (await fetch(url('deep', '?offset=-1'))).json()).toEqual([
      JSON.parse(nested(1000)),
      { v: JSON.parse(nested(999)) },
    ])
  })

  it('refuses the offsets of a stream that was deleted and created again', async () => {
    await fetch(url('again'), { method: 'PUT', headers: { 'content-type': 'text/plain' }, body: 'one' })
    const old = (await fetch(url('again'))).headers.get('stream-next-offset')!
    expect((await fetch(url('again'), { method: 'DELETE' })).status).toBe(204)
    await fetch(url('again'), { method: 'PUT', headers: { 'content-type': 'text/plain' }, body: 'two' })
    const res = await fetch(url('again', `?offset=${old}`))
    expect(res.status).toBe(400)
    expect(await res.text()).toMatch(/not an offset of stream "again"/)
    expect(await (await fetch(url('again'))).text()).toBe('two')
  })
})
