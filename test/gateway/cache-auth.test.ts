// With auth, catch-up answers must not be reusable for another token: `private` + `Vary:
// Authorization` (merged with CORS's `Vary: Origin`). Without it Chromium's cache answered a token
// without access with the data another token had read (test/browser/chromium.test.ts found it).
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
    open = await serve(`${dir.dir}/open`)
    guarded = await serve(`${dir.dir}/guarded`, {
      cors: '*',
      auth: TokenAuth.from({ tokens: [{ token: TOKEN, read: ['*'], write: ['*'] }] }),
    })
    for (const s of [open, guarded]) await s.twain.createTopic('t')
  })
  afterAll(async () => {
    await open?.stop()
    await guarded?.stop()
    dir.remove()
  })

  it('without auth: public, as the protocol suggests', async () => {
    const res = await fetch(`${open.url}/v1/stream/t`)
    expect(res.headers.get('cache-control')).toBe('public, max-age=60, stale-while-revalidate=300')
    expect(res.headers.get('vary')).toBeNull()
  })

  it('with auth: private and varying by Authorization (and Origin, for CORS)', async () => {
    const res = await fetch(`${guarded.url}/v1/stream/t`, {
      headers: { authorization: `Bearer ${TOKEN}`, origin: 'http://page.local' },
    })
    expect(res.status).toBe(200)
    expect(res.headers.get('cache-control')).toBe('private, max-age=60, stale-while-revalidate=300')
    expect(res.headers.get('vary')).toBe('Authorization, Origin')
  })
})
