// Live reads and paging: SSE connections are ended by the server after sseMaxMs and resumed from the
// last control offset with no loss and no repeat; catch-up reads are paged by maxReadBytes; close()
// ends a waiting long-poll at once.
import { request } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { tempDir } from '../helpers/tmp.js'
import { until } from '../helpers/wait.js'
import { readSse } from './http.js'
import { serve, type Served } from './serve.js'

const controls = (text: string): { streamNextOffset: string; upToDate?: boolean }[] =>
  [...text.matchAll(/event: control\ndata:(\{[^\n]*\})/g)].map((m) => JSON.parse(m[1]!) as { streamNextOffset: string })
const dataLines = (text: string): string[] => [...text.matchAll(/event: data\ndata:([^\n]*)/g)].map((m) => m[1]!)

describe('gateway live reads (file store)', () => {
  let served: Served
  const dir = tempDir('twainmq-gw-live-')
  const url = (name: string, query = ''): string => `${served.url}/v1/stream/${name}${query}`
  beforeAll(async () => {
    served = await serve(dir.dir, { longPollMs: 30_000, sseMaxMs: 400, maxReadBytes: 15 })
  })
  afterAll(async () => {
    await served?.stop()
    dir.remove()
  })

  it('ends an SSE connection after sseMaxMs; resuming from the last control loses and repeats nothing', async () => {
    await fetch(url('rotate'), { method: 'PUT', headers: { 'content-type': 'text/plain' } })
    const producer = served.twain.producer('rotate')
    let offset = '-1'
    const got: string[] = []
    let connections = 0
    for (let n = 0; n < 6; n++) {
      await producer.send(0, `m${n};`)
      const res = await fetch(url('rotate', `?offset=${offset}&live=sse`))
      connections++
      const text = await readSse(res, () => false) // the server ends it (sseMaxMs)
      got.push(...dataLines(text))
      const last = controls(text).at(-1)
      expect(last, text).toBeDefined()
      offset = last!.streamNextOffset
    }
    expect(connections).toBe(6)
    expect(got.join('')).toBe('m0;m1;m2;m3;m4;m5;')
  })

  it('pages a catch-up read by maxReadBytes: only the last page is up to date', async () => {
    await fetch(url('pages'), { method: 'PUT', headers: { 'content-type': 'text/plain' } })
    for (const part of ['0123456789', 'abcdefghij', 'KLMNOPQRST']) {
      await fetch(url('pages'), { method: 'POST', headers: { 'content-type': 'text/plain' }, body: part })
    }
    let offset = '-1'
    const pages: string[] = []
    for (;;) {
      const res = await fetch(url('pages', `?offset=${offset}`))
      pages.push(await res.text())
      offset = res.headers.get('stream-next-offset')!
      if (res.headers.get('stream-up-to-date') === 'true') break
      expect(pages.length).toBeLessThan(10)
    }
    expect(pages).toEqual(['0123456789', 'abcdefghij', 'KLMNOPQRST'])
  })

  it('an SSE reader that stops reading (the server then waits for drain) later gets everything in order', async () => {
    const slow = await serve(dir.dir, { longPollMs: 30_000, maxReadBytes: 64 * 1024 })
    try {
      await fetch(`${slow.url}/v1/stream/bulk`, { method: 'PUT', headers: { 'content-type': 'text/plain' } })
      const parts = Array.from({ length: 64 }, (_, i) => `${String(i).padStart(4, '0')}${'x'.repeat(64 * 1024 - 4)}`)
      for (const p of parts)
        await fetch(`${slow.url}/v1/stream/bulk`, {
          method: 'POST',
          headers: { 'content-type': 'text/plain' },
          body: p,
        })
      const u = new URL(`${slow.url}/v1/stream/bulk?offset=-1&live=sse`)
      const chunks: Buffer[] = []
      const done = new Promise<void>((resolve, reject) => {
        const req = request({ host: u.hostname, port: u.port, path: `${u.pathname}${u.search}` }, (res) => {
          res.pause() // a reader that does not read
          void until(
            () => slow.responses.at(-1)?.writableNeedDrain === true,
            10_000,
            'the server waiting for the reader',
          ).then(() => {
            res.on('data', (c: Buffer) => {
              chunks.push(c)
              if (Buffer.concat(chunks).includes('"upToDate":true')) req.destroy()
            })
            res.resume()
          }, reject)
          res.on('close', resolve)
        })
        req.on('error', () => resolve())
        req.end()
      })
      await done
      const text = Buffer.concat(chunks).toString('utf8')
      expect(dataLines(text).join('')).toBe(parts.join(''))
    } finally {
      await slow.stop()
    }
  })

  it('close() answers a waiting long-poll at once and releases its watch', async () => {
    await fetch(url('waiting'), { method: 'PUT' })
    const pending = fetch(url('waiting', '?offset=now&live=long-poll'))
    await until(() => served.watches() === 1, 5000, 'the long-poll waiting')
    const t0 = Date.now()
    await served.gateway.close()
    const res = await pending
    expect(res.status).toBe(204)
    expect(Date.now() - t0).toBeLessThan(5000) // not the 30 s long-poll
    expect(served.watches()).toBe(0)
  })
})
