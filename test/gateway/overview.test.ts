// The gateway's read-only store overview: GET /v1/topics and /v1/groups (shapes, offsets, lag),
// their access control (401 without a valid token, 403 for a token that may read nothing, only
// readable topics/partitions/groups shown), and the live SSE /v1/live (a snapshot at once, another
// when offsets change, rates; the sampler runs only while a viewer is connected), file and Redis.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { GroupOverview, StoreOverview, TopicOverview } from '../../src/gateway/overview/overview.js'
import { StatsHub } from '../../src/gateway/overview/stats-hub.js'
import { backendOf } from '../../src/facade/twain.js'
import { RedisServer } from '../helpers/redis-server.js'
import { tempDir } from '../helpers/tmp.js'
import { serve, type Served } from './serve.js'

const ALL = 'all-token-0123456789abcdef'
const ORDERS1 = 'orders1-token-0123456789ab'
const WRITER = 'writer-token-0123456789abc'
const auth = {
  tokens: [
    { name: 'all', token: ALL, read: ['*'] },
    { name: 'orders1', token: ORDERS1, read: ['orders~1'] },
    { name: 'writer', token: WRITER, write: ['*'] },
  ],
}
const bearer = (t: string) => ({ authorization: `Bearer ${t}` })

/** Read SSE `snapshot` events of /v1/live until `done(events)` holds. */
async function liveUntil(
  url: string,
  token: string,
  done: (events: StoreOverview[]) => boolean,
  after?: (n: number) => Promise<void>,
): Promise<StoreOverview[]> {
  const abort = new AbortController()
  const res = await fetch(`${url}/v1/live`, { headers: bearer(token), signal: abort.signal })
  expect(res.status).toBe(200)
  expect(res.headers.get('content-type')).toBe('text/event-stream')
  const reader = res.body!.getReader()
  const decoder = new TextDecoder()
  const events: StoreOverview[] = []
  let text = ''
  try {
    while (!done(events)) {
      const { done: end, value } = await reader.read()
      if (end) throw new Error('the live stream ended')
      text += decoder.decode(value, { stream: true })
      let i: number
      while ((i = text.indexOf('\n\n')) >= 0) {
        const block = text.slice(0, i)
        text = text.slice(i + 2)
        const m = /^event: snapshot\ndata:(.*)$/s.exec(block)
        if (m) {
          events.push(JSON.parse(m[1] as string) as StoreOverview)
          await after?.(events.length)
        }
      }
    }
  } finally {
    abort.abort()
  }
  return events
}

describe.each(['file', 'redis'] as const)('gateway store overview over %s', (kind) => {
  const dir = tempDir('twainmq-gw-overview-')
  let redis: RedisServer | undefined
  let gw: Served
  beforeAll(async () => {
    redis = kind === 'redis' ? await RedisServer.start() : undefined
    gw = await serve(redis ? redis.url : dir.dir, { auth, statsIntervalMs: 50 })
    await gw.twain.createTopic('orders', { partitions: 2 })
    await gw.twain.createTopic('audit')
    const p = gw.twain.producer('orders', { lingerMs: 0 })
    for (let i = 0; i < 5; i++) await p.send(i, { i }, { partition: 0 })
    for (let i = 0; i < 3; i++) await p.send(i, { i }, { partition: 1 })
    await p.close()
    await gw.twain.producer('audit', { lingerMs: 0 }).send(1, 'x')
    await gw.twain.resetGroup('billing', 'orders', { 0: 2, 1: 3 })
    await gw.twain.resetGroup('auditors', 'audit', 'start')
  })
  afterAll(async () => {
    await gw?.stop()
    await redis?.stop()
    dir.remove()
  })

  it('lists topics with partitions, their streams and offsets', async () => {
    const res = await fetch(`${gw.url}/v1/topics`, { headers: bearer(ALL) })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8')
    const body = (await res.json()) as { at: number; topics: TopicOverview[] }
    expect(typeof body.at).toBe('number')
    expect(body.topics.map((t) => t.topic)).toEqual(['audit', 'orders'])
    const orders = body.topics[1]!
    expect(orders).toMatchObject({ topic: 'orders', partitionCount: 2 })
    expect(orders.partitions).toEqual([
      {
        partition: 0,
        stream: 'orders~0',
        start: 0,
        end: 5,
        rate: expect.toSatisfy((r: unknown) => r === null || typeof r === 'number'),
      },
      {
        partition: 1,
        stream: 'orders~1',
        start: 0,
        end: 3,
        rate: expect.toSatisfy((r: unknown) => r === null || typeof r === 'number'),
      },
    ])
    expect(body.topics[0]!.partitions).toMatchObject([{ partition: 0, stream: 'audit', start: 0, end: 1 }])
  })

  it('lists groups with members, committed offsets and lag per partition', async () => {
    const res = await fetch(`${gw.url}/v1/groups`, { headers: bearer(ALL) })
    expect(res.status).toBe(200)
    const body = (await res.json()) as { groups: GroupOverview[] }
    const billing = body.groups.find((g) => g.group === 'billing')
    const before = Date.now()
    const ages = new Map<number, number>()
    for await (const m of gw.twain.history('orders', { partition: 0, from: 2, limit: 1 }))
      ages.set(m.partition, before - m.timestamp)
    expect(billing).toEqual({
      group: 'billing',
      members: [],
      lag: 3,
      lagMs: billing?.partitions[0]?.lagMs,
      partitions: [
        { topic: 'orders', partition: 0, stream: 'orders~0', committed: 2, end: 5, lag: 3, lagMs: expect.any(Number) },
        { topic: 'orders', partition: 1, stream: 'orders~1', committed: 3, end: 3, lag: 0, lagMs: 0 },
      ],
    })
    // The age of the oldest message not committed (offset 2), as its timestamp says (the request came first).
    expect(billing!.partitions[0]!.lagMs).toBeLessThanOrEqual((ages.get(0) as number) + 1000)
    expect(billing!.partitions[0]!.lagMs).toBeGreaterThanOrEqual(0)
    expect(body.groups.map((g) => g.group).sort()).toEqual(['auditors', 'billing'])
  })

  it('shows a token only the streams it may read', async () => {
    const topics = (await (await fetch(`${gw.url}/v1/topics`, { headers: bearer(ORDERS1) })).json()) as {
      topics: TopicOverview[]
    }
    expect(topics.topics).toEqual([
      expect.objectContaining({
        topic: 'orders',
        partitions: [expect.objectContaining({ stream: 'orders~1', end: 3 })],
      }),
    ])
    const groups = (await (await fetch(`${gw.url}/v1/groups`, { headers: bearer(ORDERS1) })).json()) as {
      groups: GroupOverview[]
    }
    expect(groups.groups).toEqual([
      expect.objectContaining({
        group: 'billing',
        lag: 0,
        partitions: [expect.objectContaining({ stream: 'orders~1' })],
      }),
    ])
  })

  it('answers 401 without a valid token and 403 to a token that may read nothing, on every endpoint', async () => {
    for (const path of ['/v1/topics', '/v1/groups', '/v1/live']) {
      const none = await fetch(`${gw.url}${path}`)
      expect(none.status).toBe(401)
      expect(none.headers.get('www-authenticate')).toBe('Bearer')
      expect(await none.text()).toMatch(/bearer token is required/)
      expect((await fetch(`${gw.url}${path}`, { headers: bearer('not-a-token-0123456789') })).status).toBe(401)
      const writer = await fetch(`${gw.url}${path}`, { headers: bearer(WRITER) })
      expect(writer.status).toBe(403)
      expect(await writer.text()).toMatch(/writer may not read any stream/)
    }
    const post = await fetch(`${gw.url}/v1/topics`, { method: 'POST', headers: bearer(ALL), body: '{}' })
    expect(post.status).toBe(405)
    await post.text()
  })

  it('pushes a snapshot at once and another when offsets change, with rates', async () => {
    const p = gw.twain.producer('orders', { lingerMs: 0 })
    const events = await liveUntil(
      gw.url,
      ALL,
      (ev) => ev.some((e) => (e.topics.find((t) => t.topic === 'orders')?.partitions[0]?.end ?? 0) >= 7),
      async (n) => {
        if (n === 1) {
          await p.send(1, { more: 1 }, { partition: 0 })
          await p.send(2, { more: 2 }, { partition: 0 })
        }
      },
    )
    await p.close()
    const first = events[0]!
    expect(first.groups.find((g) => g.group === 'billing')!.lag).toBeGreaterThanOrEqual(3)
    const last = events[events.length - 1]!
    const orders = last.topics.find((t) => t.topic === 'orders')!
    expect(orders.partitions[0]!.end).toBe(7)
    expect(last.groups.find((g) => g.group === 'billing')!.partitions[0]).toMatchObject({
      committed: 2,
      end: 7,
      lag: 5,
    })
    expect(typeof orders.rate).toBe('number')
    expect(orders.rate).toBeGreaterThan(0)
  })

  it('serves no dashboard unless the ui option is on', async () => {
    const res = await fetch(`${gw.url}/`)
    expect(res.status).toBe(404)
    expect(await res.text()).toMatch(/No stream at "\/"/)
  })

  it('samples only while a viewer is connected', async () => {
    const hub = new StatsHub(backendOf(gw.twain), 20)
    expect(hub.running).toBe(false)
    const seen: unknown[] = []
    let got: () => void = () => undefined
    const twoSamples = new Promise<void>((resolve) => (got = resolve))
    const off = hub.subscribe((s) => {
      seen.push(s)
      if (seen.length === 2) got()
    })
    const off2 = hub.subscribe(() => undefined)
    expect(hub.running).toBe(true)
    await twoSamples
    off()
    expect(hub.running).toBe(true)
    off2()
    expect(hub.running).toBe(false)
  })
})
