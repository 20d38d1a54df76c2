// The cap on live reads (SSE, long-poll) one client has open at once (`maxLivePerClient`): one more
// gets 429 with Retry-After; closing one frees its slot at once; catch-up reads are not counted;
// with `auth` each token has its own budget.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { tempDir } from '../helpers/tmp.js'
import { until } from '../helpers/wait.js'
import { serve, type Served } from './serve.js'

const A = 'token-a-0123456789abcdef'
const B = 'token-b-0123456789abcdef'

describe('maxLivePerClient', () => {
  const dir = tempDir('twainmq-gw-live-')
  let gw: Served
  let byToken: Served
  beforeAll(async () => {
    gw = await serve(dir.dir, { maxLivePerClient: 2 })
    byToken = await serve(dir.dir, {
      maxLivePerClient: 1,
      auth: {
        tokens: [
          { name: 'a', token: A, read: ['*'], write: ['*'] },
          { name: 'b', token: B, read: ['*'] },
        ],
      },
    })
    await fetch(`${gw.url}/v1/stream/s`, { method: 'PUT', headers: { 'content-type': 'text/plain' } })
  })
  afterAll(async () => {
    await gw?.stop()
    await byToken?.stop()
    dir.remove()
  })
  const sse = (s: Served, headers: Record<string, string> = {}) => {
    const ctrl = new AbortController()
    return { ctrl, res: fetch(`${s.url}/v1/stream/s?offset=now&live=sse`, { signal: ctrl.signal, headers }) }
  }

  it('a client past the cap gets 429; a closed read frees its slot; catch-up reads are not counted', async () => {
    const one = sse(gw)
    const two = sse(gw)
    expect((await one.res).status).toBe(200)
    expect((await two.res).status).toBe(200)
    const third = await fetch(`${gw.url}/v1/stream/s?offset=now&live=sse`)
    expect([third.status, third.headers.get('retry-after')]).toEqual([429, '1'])
    expect(await third.text()).toMatch(/at most 2 at once/)
    expect((await fetch(`${gw.url}/v1/stream/s?offset=now&live=long-poll`)).status).toBe(429)
    expect((await fetch(`${gw.url}/v1/stream/s?offset=-1`)).status).toBe(200)
    one.ctrl.abort()
    await until(() => gw.watches() === 1, 5000, 'the aborted read to end')
    const again = sse(gw)
    expect((await again.res).status).toBe(200)
    two.ctrl.abort()
    again.ctrl.abort()
    await until(() => gw.watches() === 0, 5000, 'every read to end')
  })

  it('with auth, each token has its own budget', async () => {
    const a = sse(byToken, { authorization: `Bearer ${A}` })
    expect((await a.res).status).toBe(200)
    expect(
      (await fetch(`${byToken.url}/v1/stream/s?offset=now&live=sse`, { headers: { authorization: `Bearer ${A}` } }))
        .status,
    ).toBe(429)
    const b = sse(byToken, { authorization: `Bearer ${B}` })
    expect((await b.res).status).toBe(200)
    a.ctrl.abort()
    b.ctrl.abort()
    await until(() => byToken.watches() === 0, 5000, 'every read to end')
  })
})
