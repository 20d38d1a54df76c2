// The browser client (twainmq/browser) run in Node (global fetch) against an in-process gateway:
// order, resume tokens (exact and composite), history bounds, 'now', the producer, refused tokens
// and prompt teardown. The same code runs in Chromium in chromium.test.ts.
import { from, lastValueFrom, take, toArray } from 'rxjs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { connect, HttpError, InvalidArgumentError, type BrowserMessage } from '../../src/browser/index.js'
import { TokenAuth } from '../../src/gateway/index.js'
import { tempDir } from '../helpers/tmp.js'
import { until } from '../helpers/wait.js'
import { serve, type Served } from '../gateway/serve.js'

const READER = 'reader-token-0123456789'
const OUTSIDER = 'outsider-token-0123456789'
const WRITER = 'writer-token-0123456789'

async function collect<V>(it: AsyncIterable<BrowserMessage<V>>, n: number): Promise<BrowserMessage<V>[]> {
  const out: BrowserMessage<V>[] = []
  for await (const m of it) {
    out.push(m)
    if (out.length === n) break
  }
  return out
}

describe('twainmq/browser in Node against the gateway (file store)', () => {
  let served: Served
  const dir = tempDir('twainmq-browser-node-')
  const auth = TokenAuth.from({
    tokens: [
      { name: 'reader', token: READER, read: ['*'] },
      { name: 'outsider', token: OUTSIDER, read: ['other*'] },
      { name: 'writer', token: WRITER, read: ['*'], write: ['*'] },
    ],
  })
  beforeAll(async () => {
    served = await serve(dir.dir, { auth, sseMaxMs: 300 })
    await served.twain.createTopic('prices')
    await served.twain.producer('prices').sendBatch([1, 2, 3, 4, 5].map((n) => ({ key: 0, value: { n } })))
  })
  afterAll(async () => {
    await served?.stop()
    dir.remove()
  })

  it('tails values produced in Node in order; every resume token continues right after its message', async () => {
    const client = connect(served.url, { token: READER })
    const got = await collect(client.tail<{ n: number }>('prices'), 5)
    expect(got.map((m) => m.value.n)).toEqual([1, 2, 3, 4, 5])
    expect(got.every((m) => m.stream === 'prices')).toBe(true)
    for (let i = 0; i < got.length - 1; i++) {
      expect(got[i]!.resume).toBe(got[i + 1]!.offset)
      const rest = await collect(client.history<{ n: number }>('prices', { from: got[i]!.resume }), 10)
      expect(rest.map((m) => m.value.n)).toEqual([1, 2, 3, 4, 5].slice(i + 1))
      const again = await collect(client.history<{ n: number }>('prices', { from: got[i]!.offset }), 10)
      expect(again.map((m) => m.value.n)).toEqual([1, 2, 3, 4, 5].slice(i))
    }
  })

  it('resume tokens of messages inside one multi-message batch (a 3-item POST) continue right after them', async () => {
    const h = { authorization: `Bearer ${WRITER}`, 'content-type': 'application/json' }
    await fetch(`${served.url}/v1/stream/trio`, { method: 'PUT', headers: h, body: '[{"n":1}]' })
    await fetch(`${served.url}/v1/stream/trio`, { method: 'POST', headers: h, body: '[{"n":2},{"n":3},{"n":4}]' })
    const client = connect(served.url, { token: READER })
    const got = await collect(client.history<{ n: number }>('trio'), 10)
    expect(got.map((m) => m.value.n)).toEqual([1, 2, 3, 4])
    expect(got.map((m) => m.offset)).toEqual(expect.arrayContaining([expect.stringMatching(/^\d{16}_\d{16}$/)]))
    for (let i = 0; i < got.length; i++) {
      const rest = await collect(client.history<{ n: number }>('trio', { from: got[i]!.resume }), 10)
      expect(rest.map((m) => m.value.n)).toEqual([1, 2, 3, 4].slice(i + 1))
      const after = await collect(client.history<{ n: number }>('trio', { from: got[i]!.offset }), 10)
      expect(after[0]?.offset).toBe(got[i]!.offset)
      // a resumed read from the middle of a batch: its tokens are right too
      const next = after[1]
      if (next) expect(next.offset).toBe(got[i + 1]!.offset)
    }
  })

  it('keeps tailing across the server ending SSE responses (sseMaxMs 300): nothing lost or repeated', async () => {
    await served.twain.createTopic('ticks')
    const client = connect(`${served.url}/v1/stream/`, { token: READER })
    const producer = served.twain.producer('ticks')
    const seen: number[] = []
    const done = (async () => {
      for await (const m of client.tail<number>('ticks')) {
        seen.push(m.value)
        if (seen.length === 30) return
      }
    })()
    for (let n = 0; n < 30; n++) {
      await producer.send(0, n)
      if (n % 10 === 9) await until(() => seen.length === n + 1, 5000, `message ${n}`)
      if (n % 10 === 9) await new Promise((r) => setTimeout(r, 350)) // time is the subject: past sseMaxMs
    }
    await done
    expect(seen).toEqual(Array.from({ length: 30 }, (_, i) => i))
  })

  it('history stops at `to` and at `limit`; from: "now" sees only new messages', async () => {
    const client = connect(served.url, { token: READER })
    const all = await collect(client.history<{ n: number }>('prices'), 100)
    expect(all.map((m) => m.value.n)).toEqual([1, 2, 3, 4, 5])
    const upTo = await collect(client.history<{ n: number }>('prices', { to: all[3]!.offset }), 100)
    expect(upTo.map((m) => m.value.n)).toEqual([1, 2, 3])
    const limited = await collect(client.history<{ n: number }>('prices', { from: all[1]!.offset, limit: 2 }), 100)
    expect(limited.map((m) => m.value.n)).toEqual([2, 3])
    await served.twain.createTopic('fresh')
    await served.twain.producer('fresh').send(0, 'old')
    const tail = client.tail<string>('fresh', { from: 'now' })
    const first = collect(tail, 1)
    await until(() => served.watches() > 0, 5000, 'the live read')
    await served.twain.producer('fresh').send(0, 'new')
    expect((await first).map((m) => m.value)).toEqual(['new'])
  })

  it('the producer appends over HTTP and resolves with the tail offset; a tail sees it', async () => {
    await fetch(`${served.url}/v1/stream/chat`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${WRITER}`, 'content-type': 'application/json' },
    })
    const client = connect(served.url, { token: WRITER })
    const producer = client.producer<{ text: string }>('chat')
    const a = await producer.send({ text: 'hi' })
    const b = await producer.send({ text: 'there' })
    expect(b.offset > a.offset).toBe(true)
    const got = await collect(client.tail<{ text: string }>('chat'), 2)
    expect(got.map((m) => m.value.text)).toEqual(['hi', 'there'])
    expect(got[1]!.resume).toBe(b.offset)
    await producer.close()
    const refused = connect(served.url, { token: READER }).producer('chat').send({ text: 'no' })
    await expect(refused).rejects.toMatchObject({ name: 'HttpError', status: 403 })
  })

  it("sends the page's trace context on every request, a send's own instead, none with null; the records carry it", async () => {
    await fetch(`${served.url}/v1/stream/traced`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${WRITER}`, 'content-type': 'application/json' },
    })
    const PAGE = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'
    const OWN = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'
    const seen: Array<{ method: string; traceparent: string | null; tracestate: string | null }> = []
    const client = connect(served.url, {
      token: WRITER,
      traceContext: () => ({ traceparent: PAGE, tracestate: 'shop=1' }),
      fetch: (input, init) => {
        const h = new Headers(init?.headers)
        seen.push({ method: init?.method ?? 'GET', traceparent: h.get('traceparent'), tracestate: h.get('tracestate') })
        return fetch(input, init)
      },
    })
    const producer = client.producer<{ n: number }>('traced')
    await producer.send({ n: 1 })
    await producer.send({ n: 2 }, { traceContext: { traceparent: OWN } })
    await producer.send({ n: 3 }, { traceContext: null })
    await producer.close()
    expect(seen.filter((r) => r.method === 'POST')).toEqual([
      { method: 'POST', traceparent: PAGE, tracestate: 'shop=1' },
      { method: 'POST', traceparent: OWN, tracestate: null },
      { method: 'POST', traceparent: null, tracestate: null },
    ])
    const read = await collect(client.history<{ n: number }>('traced'), 3)
    expect(read.map((m) => m.value.n)).toEqual([1, 2, 3])
    expect(seen.filter((r) => r.method === 'GET').length).toBeGreaterThan(0)
    for (const r of seen.filter((x) => x.method === 'GET')) expect(r.traceparent).toBe(PAGE)
    // The gateway continues the request's trace: each record carries a context of the same trace;
    // one sent without any carries none (not an all-zero one). The first record is the stream's creation.
    const traces: Array<string | undefined> = []
    for await (const m of served.twain.history('traced')) traces.push(m.headers['traceparent']?.split('-')[1])
    expect(traces.slice(1)).toEqual(['0af7651916cd43dd8448eb211c80319c', '4bf92f3577b34da6a3ce929d0e0e4736', undefined])
  })

  it('a malformed trace context is refused naming it: a send rejects, a read ends at once (no retrying)', async () => {
    expect(() => connect(served.url, { traceContext: 'x' as never })).toThrow(/traceContext must be a function/)
    const bad = connect(served.url, { token: WRITER, traceContext: () => ({ traceparent: '00-zz-1-01' }) })
    await expect(bad.producer('traced').send({ n: 9 })).rejects.toThrow(
      new InvalidArgumentError(
        'connect() option traceContext: traceparent must be "00-<32 hex>-<16 hex>-<2 hex>" (lower case, ids not all zero), got "00-zz-1-01"',
      ),
    )
    const ok = connect(served.url, { token: WRITER })
    await expect(
      ok
        .producer('traced')
        .send({ n: 9 }, { traceContext: { traceparent: `00-${'0'.repeat(32)}-b7ad6b7169203331-01` } }),
    ).rejects.toThrow(/send\(\) option traceContext: traceparent must be/)
    const failure = await collect(bad.tail('traced'), 1).catch((e: unknown) => e)
    expect(failure).toBeInstanceOf(InvalidArgumentError)
  })

  it('replaces trace headers of the headers option whatever their case; refuses a tracestate fetch cannot send; a throwing traceContext is final', async () => {
    const PAGE = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'
    const seen: Array<[string, string][]> = []
    const recording = (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
      seen.push([...new Headers(init?.headers).entries()].filter(([k]) => k.startsWith('trace')))
      return fetch(input, init)
    }
    const headers = { Traceparent: '00-11111111111111111111111111111111-2222222222222222-01', TraceState: 'old=1' }
    const client = connect(served.url, {
      token: WRITER,
      headers,
      traceContext: () => ({ traceparent: PAGE }),
      fetch: recording,
    })
    await client.producer('traced').send({ n: 10 })
    const plain = connect(served.url, { token: WRITER, headers, fetch: recording })
    await plain.producer('traced').send({ n: 11 }, { traceContext: null })
    expect(seen).toEqual([[['traceparent', PAGE]], []])
    const euro = connect(served.url, { token: WRITER, traceContext: () => ({ traceparent: PAGE, tracestate: 'k=€' }) })
    await expect(euro.producer('traced').send({ n: 12 })).rejects.toThrow(
      /tracestate must be printable ASCII \(key=value,…\), got "k=€"/,
    )
    const throwing = connect(served.url, {
      token: WRITER,
      traceContext: () => {
        throw new Error('no context here')
      },
    })
    await expect(throwing.producer('traced').send({ n: 13 })).rejects.toThrow(
      /connect\(\) option traceContext threw: no context here/,
    )
    const failure = await collect(throwing.tail('traced'), 1).catch((e: unknown) => e)
    expect(failure).toBeInstanceOf(InvalidArgumentError)
  })

  it('a token without read access ends the iteration and the Observable with HttpError 403 (no empty stream)', async () => {
    const client = connect(served.url, { token: OUTSIDER })
    const failure = await collect(client.tail('prices'), 1).catch((e: unknown) => e)
    expect(failure).toBeInstanceOf(HttpError)
    expect((failure as HttpError).status).toBe(403)
    expect((failure as HttpError).message).toMatch(/403/)
    await expect(lastValueFrom(from(client.tail('prices')))).rejects.toMatchObject({ status: 403 })
    await expect(collect(connect(served.url).history('prices'), 1)).rejects.toMatchObject({ status: 401 })
  })

  it("an HttpError says the status and the URL once, then the server's words", async () => {
    const failure = (await collect(connect(served.url, { token: READER }).history('secret'), 1).catch(
      (e: unknown) => e,
    )) as HttpError
    expect(failure).toBeInstanceOf(HttpError)
    expect(failure.status).toBe(404)
    // Before: "HTTP 404 from …/secret: HTTP Error 404 at …/secret?offset=-1: Stream "secret" does not exist"
    expect(failure.message).toMatch(/^HTTP 404 from \S+\/secret: [^:]*"secret"/)
    // Counted without the gateway's origin: its port may contain "404" (it did, once in a dozen runs).
    const words = failure.message.replaceAll(served.url, '<gateway>')
    expect(words.match(/404/g)).toHaveLength(1)
    expect(words.match(/\/secret/g)).toHaveLength(1)
  })

  it('RxJS take() unsubscribes and the gateway sees its live read end at once', async () => {
    const client = connect(served.url, { token: READER })
    await until(() => served.watches() === 0, 5000, 'no live reads before')
    const values = await lastValueFrom(from(client.tail<{ n: number }>('prices')).pipe(take(5), toArray()))
    expect(values.map((m) => m.value.n)).toEqual([1, 2, 3, 4, 5])
    const stream = client.tail('prices', { from: 'now' })
    const sub = from(stream).subscribe()
    await until(() => served.watches() === 1, 5000, 'the live read')
    sub.unsubscribe()
    await until(() => served.watches() === 0, 2000, 'the live read to end')
  })

  it('aborting the signal ends the read with AbortError', async () => {
    const ac = new AbortController()
    const client = connect(served.url, { token: READER })
    const reading = collect(client.tail('prices', { from: 'now', signal: ac.signal }), 1)
    await until(() => served.watches() > 0, 5000, 'the live read')
    ac.abort()
    await expect(reading).rejects.toMatchObject({ name: 'AbortError' })
    await until(() => served.watches() === 0, 2000, 'the live read to end')
  })
})
