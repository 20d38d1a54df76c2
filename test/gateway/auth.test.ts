// Access control in the gateway's handler: bearer tokens (the `auth` option) and the `authorize`
// hook. 401 without a valid token (with WWW-Authenticate), 403 outside the token's grants or when
// the hook refuses, a fork needs read on its source, CORS preflights need no token.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { InvalidArgumentError } from '../../src/index.js'
import { createGateway, TokenAuth } from '../../src/gateway/index.js'
import { tempDir } from '../helpers/tmp.js'
import { serve, type Served } from './serve.js'

const UI = 'ui-token-0123456789abcdef'
const INGEST = 'ingest-token-0123456789ab'

describe('gateway access control', () => {
  const dir = tempDir('twainmq-gw-auth-')
  let gw: Served
  const refused: string[] = []
  beforeAll(async () => {
    gw = await serve(dir.dir, {
      cors: '*',
      auth: {
        tokens: [
          { name: 'ui', token: UI, read: ['prices*', 'audit'] },
          { name: 'ingest', token: INGEST, read: ['prices*'], write: ['prices*', 'audit'] },
        ],
      },
      authorize: (req, stream, op) => {
        if (stream === 'audit' && op === 'delete') {
          refused.push(`${req.method} ${stream}`)
          return false
        }
        return true
      },
    })
  })
  afterAll(async () => {
    await gw?.stop()
    dir.remove()
  })
  const url = (name: string, q = '') => `${gw.url}/v1/stream/${name}${q}`
  const as = (token: string | undefined, init: RequestInit = {}): RequestInit => ({
    ...init,
    headers: { ...(init.headers as Record<string, string>), ...(token ? { authorization: `Bearer ${token}` } : {}) },
  })
  const status = async (u: string, init: RequestInit) => (await fetch(u, init)).status

  it('401 without a valid token, 403 outside its grants, the granted operations through', async () => {
    const text = { 'content-type': 'text/plain' }
    const anon = await fetch(url('prices'), as(undefined, { method: 'PUT', headers: text }))
    expect([anon.status, anon.headers.get('www-authenticate')]).toEqual([401, 'Bearer'])
    expect(await anon.text()).toMatch(/bearer token is required/)
    expect(await status(url('prices'), as('not-a-valid-token-at-all', { method: 'PUT', headers: text }))).toBe(401)
    expect(await status(url('prices'), as(UI, { method: 'PUT', headers: text }))).toBe(403)
    expect(await status(url('prices'), as(INGEST, { method: 'PUT', headers: text }))).toBe(201)
    expect(await status(url('prices'), as(INGEST, { method: 'POST', headers: text, body: 'a' }))).toBe(204)
    expect(await status(url('prices'), as(UI, { method: 'POST', headers: text, body: 'b' }))).toBe(403)
    const read = await fetch(url('prices', '?offset=-1'), as(UI))
    expect([read.status, await read.text()]).toEqual([200, 'a'])
    expect(await status(url('prices', '?offset=-1'), as(undefined))).toBe(401)
    expect(await status(url('prices'), as(UI, { method: 'HEAD' }))).toBe(200)
    expect(await status(url('other'), as(UI, { method: 'HEAD' }))).toBe(403) // not found is not told to who may not read
    expect(await status(url('prices'), as(UI, { method: 'DELETE' }))).toBe(403)
  })

  it('the authorize hook can refuse what a token grants; a fork needs read on its source', async () => {
    const text = { 'content-type': 'text/plain' }
    expect(await status(url('audit'), as(INGEST, { method: 'PUT', headers: text }))).toBe(201)
    expect(await status(url('audit'), as(INGEST, { method: 'DELETE' }))).toBe(403)
    expect(refused).toEqual(['DELETE audit'])
    // ingest may write "prices-copy" but may not read "audit": the fork of audit is refused.
    expect(
      await status(
        url('prices-copy'),
        as(INGEST, { method: 'PUT', headers: { ...text, 'stream-forked-from': '/v1/stream/audit' } }),
      ),
    ).toBe(403)
    expect(
      await status(
        url('prices-copy'),
        as(INGEST, { method: 'PUT', headers: { ...text, 'stream-forked-from': '/v1/stream/prices' } }),
      ),
    ).toBe(201)
  })

  it('a CORS preflight needs no token', async () => {
    const pre = await fetch(url('prices'), {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-headers': 'authorization' },
    })
    expect(pre.status).toBe(204)
    expect(pre.headers.get('access-control-allow-headers')).toBe('authorization')
  })

  it('refuses a bad auth option or hook at createGateway', () => {
    const t = gw.twain
    expect(() => createGateway(t, { auth: { tokens: [] } })).toThrow(InvalidArgumentError)
    expect(() => createGateway(t, { authorize: 'yes' as never })).toThrow(/authorize must be a function, got string/)
    expect(TokenAuth.from({ tokens: [{ token: UI, read: ['*'] }] })).toBeInstanceOf(TokenAuth)
  })
})
