// The gateway with `metrics` (twainmq/prometheus): requests counted by route, method and status
// with durations (never a stream's name in a label), open live reads by mode, and GET /metrics
// with its access rules; without `metrics` there is no /metrics.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { createGateway, type Gateway, type GatewayOptions } from '../../src/gateway/index.js'
import { backendOf } from '../../src/facade/twain.js'
import { ClosedError, InvalidArgumentError, open, type Twain } from '../../src/index.js'
import { prometheusMetrics, type PrometheusMetrics } from '../../src/prometheus/index.js'
import { parseExposition, samplesOf, valueOf, type PromSample } from '../helpers/prom-text.js'
import { tempDir } from '../helpers/tmp.js'
import { until } from '../helpers/wait.js'

interface Up {
  url: string
  twain: Twain
  metrics: PrometheusMetrics
  gateway: Gateway
  stop(): Promise<void>
}

const running: Up[] = []
afterEach(async () => {
  for (const u of running.splice(0)) await u.stop()
})

async function up(options: Omit<GatewayOptions, 'metrics'> = {}): Promise<Up> {
  const tmp = tempDir('twainmq-gw-metrics-')
  const twain = await open(tmp.dir)
  const metrics = await prometheusMetrics(twain)
  const gateway = createGateway(twain, { ...options, metrics })
  const server: Server = createServer(gateway.node)
  server.keepAliveTimeout = 60_000
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const u: Up = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    twain,
    metrics,
    gateway,
    async stop() {
      await gateway.close()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      metrics.close()
      await twain.close()
      tmp.remove()
    },
  }
  running.push(u)
  return u
}

const scrape = async (u: Up): Promise<PromSample[]> => parseExposition(await u.metrics.metrics())
const requests = (s: PromSample[], route: string, method: string, status: number): number =>
  samplesOf(s, 'twainmq_gateway_requests_total', { route, method, status: String(status) }).reduce(
    (n, x) => n + x.value,
    0,
  )
const json = { 'content-type': 'application/json' }

describe('gateway request metrics', () => {
  it('count each request once by route, method and status, with its duration, and never name a stream', async () => {
    const u = await up({ longPollMs: 3_600_000, ui: false })
    const s0 = `${u.url}/v1/stream/orders-secret`
    expect((await fetch(s0, { method: 'PUT', headers: json })).status).toBe(201)
    expect((await fetch(s0, { method: 'POST', headers: json, body: '[{"n":1}]' })).status).toBe(204)
    expect((await fetch(`${s0}?offset=-1`)).status).toBe(200)
    expect((await fetch(`${u.url}/v1/stream/missing-secret?offset=-1`)).status).toBe(404)
    expect((await fetch(`${u.url}/v1/topics`)).status).toBe(200)
    expect((await fetch(s0, { method: 'OPTIONS' })).status).toBe(204)
    expect((await fetch(`${u.url}/elsewhere`)).status).toBe(404)
    // A long-poll at the tail, answered by an append.
    const head = await fetch(`${s0}?offset=-1`)
    const tail = head.headers.get('stream-next-offset') as string
    const waiting = fetch(`${s0}?offset=${tail}&live=long-poll`)
    await until(async () => valueOf(await scrape(u), 'twainmq_gateway_live_readers', { mode: 'long-poll' }) === 1)
    expect((await fetch(s0, { method: 'POST', headers: json, body: '[{"n":2}]' })).status).toBe(204)
    expect((await waiting).status).toBe(200)
    await until(async () => valueOf(await scrape(u), 'twainmq_gateway_live_readers', { mode: 'long-poll' }) === 0)

    const s = await scrape(u)
    expect(requests(s, 'stream', 'PUT', 201)).toBe(1)
    expect(requests(s, 'stream', 'POST', 204)).toBe(2)
    expect(requests(s, 'stream', 'GET', 200)).toBe(2)
    expect(requests(s, 'stream', 'GET', 404)).toBe(1)
    expect(requests(s, '/v1/topics', 'GET', 200)).toBe(1)
    expect(requests(s, 'preflight', 'OPTIONS', 204)).toBe(1)
    expect(requests(s, 'unmatched', 'GET', 404)).toBe(1)
    expect(requests(s, 'stream-long-poll', 'GET', 200)).toBe(1)
    // The histogram counts what the counter counts, and its sums are durations.
    for (const c of samplesOf(s, 'twainmq_gateway_requests_total')) {
      expect(valueOf(s, 'twainmq_gateway_request_duration_seconds_count', c.labels)).toBe(c.value)
      expect(valueOf(s, 'twainmq_gateway_request_duration_seconds_sum', c.labels)).toBeGreaterThan(0)
      expect(valueOf(s, 'twainmq_gateway_request_duration_seconds_bucket', { ...c.labels, le: '+Inf' })).toBe(c.value)
    }
    const labelValues = s.filter((x) => x.name.startsWith('twainmq_gateway_')).flatMap((x) => Object.values(x.labels))
    expect(labelValues.length).toBeGreaterThan(20)
    expect(labelValues.filter((v) => v.includes('secret'))).toEqual([])
  })

  it('an open SSE read shows as a live reader until the client leaves; then its request is counted', async () => {
    const u = await up()
    const s0 = `${u.url}/v1/stream/feed`
    expect((await fetch(s0, { method: 'PUT', headers: json })).status).toBe(201)
    const abort = new AbortController()
    const res = await fetch(`${s0}?offset=-1&live=sse`, { signal: abort.signal })
    expect(res.status).toBe(200)
    await until(async () => valueOf(await scrape(u), 'twainmq_gateway_live_readers', { mode: 'sse' }) === 1)
    expect(requests(await scrape(u), 'stream-sse', 'GET', 200)).toBe(0)
    abort.abort()
    await res.body?.cancel().catch(() => undefined)
    await until(async () => {
      const s = await scrape(u)
      return (
        valueOf(s, 'twainmq_gateway_live_readers', { mode: 'sse' }) === 0 && requests(s, 'stream-sse', 'GET', 200) === 1
      )
    })
  })
})

describe('GET /metrics on the gateway', () => {
  const ALL = 'all-token-0123456789abcdef'
  const SOME = 'some-token-0123456789abcd'
  const auth = {
    tokens: [
      { name: 'all', token: ALL, read: ['*'] },
      { name: 'some', token: SOME, read: ['orders*'] },
    ],
  }

  it('serves the exposition; with auth only to a token that reads every stream; read-only', async () => {
    const u = await up({ auth })
    const none = await fetch(`${u.url}/metrics`)
    expect(none.status).toBe(401)
    expect(none.headers.get('www-authenticate')).toBe('Bearer')
    const some = await fetch(`${u.url}/metrics`, { headers: { authorization: `Bearer ${SOME}` } })
    expect(some.status).toBe(403)
    expect(await some.text()).toMatch(/some may not read every stream/)
    const all = await fetch(`${u.url}/metrics`, { headers: { authorization: `Bearer ${ALL}` } })
    expect(all.status).toBe(200)
    expect(all.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8')
    expect(valueOf(parseExposition(await all.text()), 'twainmq_store_up')).toBe(1)
    const post = await fetch(`${u.url}/metrics`, { method: 'POST', headers: { authorization: `Bearer ${ALL}` } })
    expect(post.status).toBe(405)
  })

  it('asks an authorize hook with the name /metrics', async () => {
    const asked: string[] = []
    const u = await up({
      authorize: (_req, stream) => {
        asked.push(stream)
        return stream !== '/metrics'
      },
    })
    expect((await fetch(`${u.url}/metrics`)).status).toBe(403)
    expect(asked).toEqual(['/metrics'])
  })

  it('HEAD /v1/live answers the headers without holding a live read', async () => {
    const u = await up()
    const head = await fetch(`${u.url}/v1/live`, { method: 'HEAD' })
    expect(head.status).toBe(200)
    expect(head.headers.get('content-type')).toBe('text/event-stream')
    const s = await scrape(u)
    expect(valueOf(s, 'twainmq_gateway_live_readers', { mode: 'overview' })).toBe(0)
    expect(requests(s, '/v1/live', 'HEAD', 200)).toBe(1)
  })

  it('a long-poll whose watch cannot be made (the store closing) does not keep its live-reader slot', async () => {
    const u = await up({ longPollMs: 3_600_000 })
    const s0 = `${u.url}/v1/stream/gone`
    expect((await fetch(s0, { method: 'PUT', headers: json })).status).toBe(201)
    const tail = (await fetch(`${s0}?offset=-1`)).headers.get('stream-next-offset') as string
    // The store closes between the read of the stream's view and the watch: its watch throws.
    backendOf(u.twain).watch = () => {
      throw new ClosedError('the store is closed')
    }
    const res = await fetch(`${s0}?offset=${tail}&live=long-poll`)
    expect(res.status).toBe(500)
    expect(valueOf(await scrape(u), 'twainmq_gateway_live_readers', { mode: 'long-poll' })).toBe(0)
  })

  it('is not there without metrics, and a metrics option that is not one is refused naming it', async () => {
    const tmp = tempDir('twainmq-gw-metrics-')
    const twain = await open(tmp.dir)
    try {
      expect(() => createGateway(twain, { metrics: { observe: 1 } as never })).toThrow(InvalidArgumentError)
      expect(() => createGateway(twain, { metrics: { observe: 1 } as never })).toThrow(
        /metrics must be .*\["observe"\]/,
      )
      const sink = await prometheusMetrics(twain)
      expect(() => createGateway(twain, { metrics: sink, basePath: '/' })).toThrow(
        /metrics needs a basePath other than "\/": GET \/metrics would hide the stream named "metrics"/,
      )
      sink.close()
      const gateway = createGateway(twain)
      const res = await gateway.fetch(new Request('http://x/metrics'))
      expect(res.status).toBe(404)
      await gateway.close()
    } finally {
      await twain.close()
      tmp.remove()
    }
  })
})
