// With auth, catch-up answers must not be reusable for another token: `private` + `Vary:
// Authorization` (merged with CORS's `Vary: Origin`). Without it Chromium's cache answered a token
// without access with the data another token had read (test/browser/chromium.test.ts found it).
// A page that reaches the tail of an open stream changes with the next append: `no-cache` (kept,
// but asked again each time), or a browser answers a read after a write with the page before it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TokenAuth } from '../../src/gateway/index.js'
import { tempDir } from '../helpers/tmp.js'
import { serve, type Served } from './serve.js'

const TOKEN = 'cache-token-0123456789'

describe('catch-up cache headers', () => {
  const dir = tempDir('twainmq-gw-cache-')
  let open: Served
  let guarded: Served
  beforeAll(async () => {
    // Small pages: a topic of three records gives full pages before the last one.
    open = await serve(`${dir.dir}/open`, { maxReadBytes: 8 })
    guarded = await serve(`${dir.dir}/guarded`, {
      maxReadBytes: 8,
      cors: '*',
      auth: TokenAuth.from({ tokens: [{ token: TOKEN, read: ['*'], write: ['*'] }] }),
    })
    for (const s of [open, guarded]) {
      await s.twain.createTopic('t')
      await s.twain.producer<string>('t').sendBatch(['a', 'b', 'c'].map((value) => ({ key: 0, value })))
    }
  })
  afterAll(async () => {
    await open?.stop()
    await guarded?.stop()
    dir.remove()
  })

  /** The first page and the page at the tail of `t`. */
  async function pages(s: Served, headers: Record<string, string> = {}): Promise<[Response, Response]> {
    const first = await fetch(`${s.url}/v1/stream/t`, { headers })
    expect(first.status).toBe(200)
    expect(first.headers.get('stream-up-to-date')).toBeNull()
    let next = first.headers.get('stream-next-offset')!
    for (;;) {
      const res = await fetch(`${s.url}/v1/stream/t?offset=${next}`, { headers })
      expect(res.status).toBe(200)
      if (res.headers.get('stream-up-to-date') === 'true') return [first, res]
      next = res.headers.get('stream-next-offset')!
    }
  }

  it('without auth: full pages public, as the protocol suggests; the page at the tail asked again', async () => {
    const [full, tail] = await pages(open)
    expect(full.headers.get('cache-control')).toBe('public, max-age=60, stale-while-revalidate=300')
    expect(full.headers.get('vary')).toBeNull()
    expect(tail.headers.get('cache-control')).toBe('public, no-cache')
    expect(tail.headers.get('etag')).not.toBeNull()
  })

  it('with auth: private and varying by Authorization (and Origin, for CORS)', async () => {
    const [full, tail] = await pages(guarded, { authorization: `Bearer ${TOKEN}`, origin: 'http://page.local' })
    expect(full.headers.get('cache-control')).toBe('private, max-age=60, stale-while-revalidate=300')
    expect(full.headers.get('vary')).toBe('Authorization, Origin')
    expect(tail.headers.get('cache-control')).toBe('private, no-cache')
    expect(tail.headers.get('vary')).toBe('Authorization, Origin')
  })

  it('the last page of a closed stream never changes: cached as full pages are', async () => {
    await fetch(`${open.url}/v1/stream/done`, { method: 'PUT', headers: { 'content-type': 'application/json' } })
    await fetch(`${open.url}/v1/stream/done`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'stream-closed': 'true' },
      body: JSON.stringify(['x']),
    })
    const res = await fetch(`${open.url}/v1/stream/done?offset=-1`)
    expect(res.headers.get('stream-closed')).toBe('true')
    expect(res.headers.get('cache-control')).toBe('public, max-age=60, stale-while-revalidate=300')
  })
})
