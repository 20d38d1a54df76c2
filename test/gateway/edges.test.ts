// The gateway's edges: hostile stream names, body limits, CORS, the Fetch handler, and live reads
// released at once by a client disconnect and ended by gateway.close().
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { getEventListeners } from 'node:events'
import { createGateway } from '../../src/gateway/index.js'
import { toFetch } from '../../src/gateway/transport/fetch-adapter.js'
import type { GwRequest } from '../../src/gateway/transport/http.js'
import { open } from '../../src/index.js'
import { tempDir } from '../helpers/tmp.js'
import { until } from '../helpers/wait.js'
import { raw, readSse } from './http.js'
import { serve, type Served } from './serve.js'

describe('gateway edges (file store)', () => {
  let served: Served
  const dir = tempDir('twainmq-gw-edge-')
  beforeAll(async () => {
    served = await serve(dir.dir, { longPollMs: 30_000, maxBodyBytes: 1000, cors: ['https://app.example'] })
    await served.twain.createTopic('__hidden_like', {}).catch(() => undefined)
  })
  afterAll(async () => {
    await served?.stop()
    dir.remove()
  })

  it.each([
    ['/v1/stream/..%2F..%2Fetc', 400, /encoded separator/],
    ['/v1/stream/a%5Cb', 400, /encoded separator/],
    ['/v1/stream/a%00b', 400, /encoded separator/],
    ['/v1/stream/%2e%2e', 400, /is invalid/],
    ['/v1/stream/a//b', 400, /is invalid/],
    ['/v1/stream/a/./b', 400, /is invalid/],
    ['/v1/stream/a/../b', 400, /is invalid/],
    ['/v1/stream/a/', 400, /is invalid/],
    ['/v1/stream/a+b', 400, /is invalid/],
    ['/v1/stream/a~1/b', 400, /is invalid/],
    [`/v1/stream/${'x'.repeat(100)}/${'y'.repeat(100)}`, 400, /is invalid/],
    ['/v1/stream/__x/y', 404, /internal/],
    ['/v1/stream/a%zz', 400, /percent-encoding/],
    [`/v1/stream/${'x'.repeat(201)}`, 400, /is invalid/],
    ['/v1/stream/__consumer_offsets', 404, /internal/],
    ['/v1/stream/', 404, /streams live at \/v1\/stream\/<name>/],
    ['/v1/other', 404, /streams live at/],
  ])('refuses %s with %i', async (path, status, body) => {
    for (const method of ['PUT', 'GET']) {
      const r = await raw(served.url, method, path)
      expect(r.status).toBe(status)
      expect(r.body).toMatch(body)
      expect(r.headers['x-content-type-options']).toBe('nosniff')
    }
  })

  it('refuses a body over maxBodyBytes with 413, and creates nothing', async () => {
    const r = await raw(served.url, 'PUT', '/v1/stream/big', { 'content-type': 'text/plain' }, Buffer.alloc(1001, 65))
    expect(r.status).toBe(413)
    expect((await raw(served.url, 'HEAD', '/v1/stream/big')).status).toBe(404)
    const chunked = await fetch(`${served.url}/v1/stream/big`, {
      method: 'PUT',
      headers: { 'content-type': 'text/plain' },
      body: new Blob([Buffer.alloc(5000, 66)]).stream(),
      duplex: 'half',
    } as RequestInit)
    expect(chunked.status).toBe(413)
  })

  it('sends CORS headers only to configured origins', async () => {
    await fetch(`${served.url}/v1/stream/cors`, { method: 'PUT' })
    const allowed = await fetch(`${served.url}/v1/stream/cors`, { headers: { origin: 'https://app.example' } })
    expect(allowed.headers.get('access-control-allow-origin')).toBe('https://app.example')
    expect(allowed.headers.get('access-control-expose-headers')).toMatch(/Stream-Next-Offset/)
    const other = await fetch(`${served.url}/v1/stream/cors`, { headers: { origin: 'https://evil.example' } })
    expect(other.headers.get('access-control-allow-origin')).toBeNull()
  })

  it('a client that goes away releases its watch at once', async () => {
    await fetch(`${served.url}/v1/stream/quiet`, { method: 'PUT' })
    for (const live of ['long-poll', 'sse']) {
      const abort = new AbortController()
      const pending = fetch(`${served.url}/v1/stream/quiet?offset=now&live=${live}`, { signal: abort.signal }).then(
        (r) => r.text(),
      )
      await until(() => served.watches() === 1, 5000, `the ${live} read waiting`)
      const t0 = Date.now()
      abort.abort()
      await pending.catch(() => undefined)
      await until(() => served.watches() === 0, 5000, 'the watch released')
      expect(Date.now() - t0).toBeLessThan(5000) // far below the 30 s long-poll
    }
  })
})

describe('gateway as a Fetch handler', () => {
  it('creates, appends, reads, and close() ends an open SSE response', async () => {
    const dir = tempDir('twainmq-gw-fetch-')
    const twain = await open(dir.dir)
    const gateway = createGateway(twain, { longPollMs: 30_000, sseMaxMs: 600_000 })
    try {
      const u = 'http://gw.test/v1/stream/f'
      expect(
        (await gateway.fetch(new Request(u, { method: 'PUT', headers: { 'content-type': 'text/plain' }, body: 'a' })))
          .status,
      ).toBe(201)
      expect(
        (await gateway.fetch(new Request(u, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'b' })))
          .status,
      ).toBe(204)
      const read = await gateway.fetch(new Request(u))
      expect(await read.text()).toBe('ab')
      expect(read.headers.get('stream-up-to-date')).toBe('true')
      const sse = await gateway.fetch(new Request(`${u}?offset=-1&live=sse`))
      let seen = ''
      const text = readSse(sse, (t) => {
        seen = t
        return false // read to the end of the response
      })
      await until(() => seen.includes('event: control'), 5000, 'the first control event')
      await gateway.close()
      expect(await text).toMatch(/^event: data\ndata:ab\n\nevent: control\n/)
      expect((await gateway.fetch(new Request(u))).status).toBe(503)
    } finally {
      await twain.close()
      dir.remove()
    }
  })
  it('a streamed response waiting for a slow reader adds no abort listener per wait', async () => {
    // The Fetch adapter's backpressure: a stream of 25 events, each waited for until the reader takes
    // it (the reader yields a task before each read, so every event finds no read pending).
    const listeners: number[] = []
    const req = { method: 'GET', signal: new AbortController().signal } as GwRequest
    let run: Promise<void> | undefined
    const res = toFetch(
      {
        status: 200,
        headers: {},
        stream: async (sink) => {
          for (let i = 0; i < 25; i++) {
            sink.write(`e${i}\n`)
            await sink.drained()
            listeners.push(getEventListeners(sink.signal, 'abort').length)
          }
        },
      },
      req,
      (p) => {
        run = p
      },
    )
    const reader = (res.body as ReadableStream<Uint8Array>).getReader()
    const decoder = new TextDecoder()
    let text = ''
    for (;;) {
      await new Promise<void>((r) => setImmediate(r))
      const { done, value } = await reader.read()
      if (done) break
      text += decoder.decode(value, { stream: true })
    }
    await run
    expect(text).toBe(Array.from({ length: 25 }, (_, i) => `e${i}\n`).join(''))
    expect(listeners).toEqual(listeners.map(() => listeners[0]))
  })
})
