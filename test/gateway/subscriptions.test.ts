// The gateway's `__ds` subscriptions beyond the conformance suite's six cases (which run in
// conformance-file and conformance-serve): appends by a Node producer wake a subscription, a
// failing webhook is retried, a lease that runs out gives a new generation and fences the old
// token, subscriptions and their acks survive a restart of the gateway over the same store, and
// every refusal names its code. Over a file store and over Redis.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createGateway } from '../../src/gateway/index.js'
import { RedisServer } from '../helpers/redis-server.js'
import { tempDir } from '../helpers/tmp.js'
import { sleep, until } from '../helpers/wait.js'
import { serve, type Served } from './serve.js'
import { startReceiver, type Receiver } from './webhook-receiver.js'

const kinds = ['file', 'redis'] as const

describe.each(kinds)('gateway subscriptions (%s)', (kind) => {
  let served: Served
  let redis: RedisServer | undefined
  const dir = tempDir('twainmq-gw-subs-')
  const target = (): string => (redis ? redis.url : dir.dir)
  const url = (path: string): string => `${served.url}/v1/stream/${path}`
  const sub = (id: string): string => url(`__ds/subscriptions/${id}`)
  const json = (method: string, body: unknown, headers: Record<string, string> = {}): RequestInit => ({
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  })
  const receivers: Receiver[] = []
  const receiver = async (answer?: Receiver['answer']): Promise<Receiver> => {
    const r = await startReceiver(answer)
    receivers.push(r)
    return r
  }
  const view = async (id: string) =>
    (await (await fetch(sub(id))).json()) as {
      status: string
      streams: Array<{ path: string; acked_offset: string; link_type: string }>
    }
  beforeAll(async () => {
    if (kind === 'redis') redis = await RedisServer.start()
    served = await serve(target(), { subscriptions: true })
  })
  afterAll(async () => {
    for (const r of receivers) await r.close()
    await served?.stop()
    await redis?.destroy()
    dir.remove()
  })

  it('appends by a Node producer wake a webhook subscription; { done: true } acks the snapshot', async () => {
    await fetch(url('orders/eu'), json('PUT', [{ n: 0 }]))
    const r = await receiver(() => ({ status: 200, body: { done: true } }))
    expect(
      (await fetch(sub('node-appends'), json('PUT', { type: 'webhook', pattern: 'orders/*', webhook: { url: r.url } })))
        .status,
    ).toBe(201)
    // The stream existed: linked at its tail, nothing pending yet.
    const before = await view('node-appends')
    expect(before.streams).toEqual([
      { path: 'orders/eu', link_type: 'glob', acked_offset: expect.stringMatching(/^\d{16}_\d{16}$/) },
    ])
    await served.twain.producer('orders+eu').send(0, { n: 1 })
    await until(() => r.requests.length === 1, 10_000, 'the wake of a Node append')
    const wake = r.requests[0]!.body
    const s = wake.streams.find((x) => x.path === 'orders/eu')!
    expect(s.has_pending).toBe(true)
    expect(s.tail_offset > before.streams[0]!.acked_offset).toBe(true)
    expect(r.requests[0]!.signature).toMatch(/^t=\d+,kid=ds_[A-Za-z0-9_-]+,ed25519=[A-Za-z0-9_-]+$/)
    await until(
      async () => (await view('node-appends')).streams[0]!.acked_offset === s.tail_offset,
      10_000,
      'the auto-ack',
    )
  })

  it('a webhook that fails is tried again until it answers 2xx', async () => {
    const r = await receiver((n) => (n === 0 ? { status: 500 } : { status: 200, body: { done: true } }))
    await fetch(url('retry/a'), json('PUT', []))
    await fetch(sub('retrying'), json('PUT', { type: 'webhook', streams: ['retry/a'], webhook: { url: r.url } }))
    await fetch(url('retry/a'), json('POST', [{ n: 1 }]))
    await until(() => r.requests.length >= 1, 10_000, 'the first delivery')
    await until(() => r.requests.length >= 2, 10_000, 'the delivery tried again')
    expect(r.requests[1]!.body.wake_id).toBe(r.requests[0]!.body.wake_id)
    const tail = r.requests[1]!.body.streams[0]!.tail_offset
    await until(async () => (await view('retrying')).streams[0]!.acked_offset === tail, 10_000, 'the ack')
    expect((await view('retrying')).status).toBe('active')
  })

  it('a wake whose lease runs out is made again with a later generation; the old token is fenced', async () => {
    const r = await receiver() // answers 200 without done: the receiver must call back, and does not
    await fetch(url('lease/a'), json('PUT', []))
    await fetch(
      sub('leased'),
      json('PUT', { type: 'webhook', streams: ['lease/a'], webhook: { url: r.url }, lease_ttl_ms: 1000 }),
    )
    await fetch(url('lease/a'), json('POST', [{ n: 1 }]))
    await until(() => r.requests.length >= 2, 15_000, 'the wake made again after its lease')
    const [first, second] = [r.requests[0]!.body, r.requests[1]!.body]
    expect(second.generation).toBeGreaterThan(first.generation)
    expect(second.wake_id).not.toBe(first.wake_id)
    const ack = (w: typeof first) =>
      fetch(
        w.callback_url,
        json(
          'POST',
          { wake_id: w.wake_id, generation: w.generation, done: true },
          { authorization: `Bearer ${w.callback_token}` },
        ),
      )
    const stale = await ack(first)
    expect(stale.status).toBe(409)
    expect(((await stale.json()) as { error: { code: string } }).error.code).toBe('FENCED')
    // The newest wake is accepted (if the lease made another meanwhile, that one is, and it is later).
    for (let seen = 2; ;) {
      const latest = r.requests[r.requests.length - 1]!.body
      const res = await ack(latest)
      if (res.status === 200) break
      expect(res.status).toBe(409)
      expect(r.requests.length).toBeGreaterThan(seen)
      seen = r.requests.length
    }
    await fetch(sub('leased'), { method: 'DELETE' })
  })

  it('subscriptions, their acks and generations survive a restart of the gateway over the same store', async () => {
    await fetch(url('wake/pool'), json('PUT', []))
    await fetch(url('jobs/a'), json('PUT', []))
    expect(
      (await fetch(sub('durable'), json('PUT', { type: 'pull-wake', pattern: 'jobs/*', wake_stream: 'wake/pool' })))
        .status,
    ).toBe(201)
    await fetch(url('jobs/a'), json('POST', [{ job: 1 }]))
    const wakes = async () =>
      (
        (await (await fetch(url('wake/pool?offset=-1'))).json()) as Array<{
          subscription_id: string
          generation: number
        }>
      ).filter((e) => e.subscription_id === 'durable')
    await until(async () => (await wakes()).length === 1, 10_000, 'the wake event')
    const claim = (await (
      await fetch(url('__ds/subscriptions/durable/claim'), json('POST', { worker: 'w1' }))
    ).json()) as {
      wake_id: string
      generation: number
      token: string
      streams: Array<{ path: string; tail_offset: string }>
    }
    const tail = claim.streams.find((s) => s.path === 'jobs/a')!.tail_offset
    const acked = await fetch(
      url('__ds/subscriptions/durable/ack'),
      json(
        'POST',
        {
          wake_id: claim.wake_id,
          generation: claim.generation,
          acks: [{ stream: 'jobs/a', offset: tail }],
          done: true,
        },
        { authorization: `Bearer ${claim.token}` },
      ),
    )
    expect(await acked.json()).toEqual({ ok: true, next_wake: false })
    await served.stop()
    served = await serve(target(), { subscriptions: true })
    // The same subscription, at the same ack, after the restart.
    const after = await view('durable')
    expect(after.streams).toContainEqual({ path: 'jobs/a', link_type: 'glob', acked_offset: tail })
    // New work on a stream the pattern finds later, written by a Node producer, wakes it with a later generation.
    await served.twain.createTopic('jobs+b')
    await served.twain.producer('jobs+b').send(0, { job: 2 })
    await until(async () => (await wakes()).length === 2, 15_000, 'a wake after the restart')
    const [w1, w2] = await wakes()
    expect(w2!.generation).toBeGreaterThan(w1!.generation)
  })

  it('a pull-wake subscription whose wake stream is made later still gets its wake event', async () => {
    await fetch(url('late/a'), json('PUT', []))
    await fetch(sub('late'), json('PUT', { type: 'pull-wake', streams: ['late/a'], wake_stream: 'late/pool' }))
    await fetch(url('late/a'), json('POST', [{ n: 1 }]))
    await fetch(url('late/pool'), json('PUT', []))
    await until(
      async () => ((await (await fetch(url('late/pool?offset=-1'))).json()) as unknown[]).length > 0,
      15_000,
      'a wake event in the wake stream made after the work',
    )
    const claim = await fetch(`${sub('late')}/claim`, json('POST', { worker: 'w' }))
    expect(claim.status).toBe(200)
  })

  it('a stream named before it exists wakes the subscription once it has data, not when it is made empty', async () => {
    const r = await receiver(() => ({ status: 200, body: { done: true } }))
    await fetch(sub('named-later'), json('PUT', { type: 'webhook', streams: ['later/x'], webhook: { url: r.url } }))
    await fetch(url('later/x'), json('PUT', []))
    await sleep(2500) // what is asserted is that nothing happens: a sweep (2 s) has looked at it
    expect(r.requests).toHaveLength(0)
    await fetch(url('later/x'), json('POST', [{ n: 1 }]))
    await until(() => r.requests.length === 1, 10_000, 'the wake of the first data')
    expect(r.requests[0]!.body.streams[0]).toMatchObject({ path: 'later/x', acked_offset: '-1', has_pending: true })
  })

  it('refuses bad requests with the protocol’s codes, naming the problem', async () => {
    const code = async (res: Response | Promise<Response>) => {
      const r = await res
      return [r.status, ((await r.json()) as { error: { code: string; message: string } }).error.code] as const
    }
    expect(await code(fetch(sub('bad'), json('PUT', { type: 'email', pattern: 'x/*' })))).toEqual([
      400,
      'INVALID_REQUEST',
    ])
    expect(await code(fetch(sub('bad'), json('PUT', { type: 'pull-wake', wake_stream: 'w' })))).toEqual([
      400,
      'INVALID_REQUEST',
    ])
    expect(
      await code(
        fetch(sub('bad'), json('PUT', { type: 'pull-wake', pattern: 'x/*', wake_stream: 'w', lease_ttl_ms: 10 })),
      ),
    ).toEqual([400, 'INVALID_REQUEST'])
    expect(
      await code(
        fetch(
          sub('bad'),
          json('PUT', { type: 'webhook', pattern: 'x/*', webhook: { url: 'https://192.168.1.10/hook' } }),
        ),
      ),
    ).toEqual([400, 'WEBHOOK_URL_REJECTED'])
    expect(
      await code(
        fetch(sub('bad'), json('PUT', { type: 'webhook', pattern: 'x/*', webhook: { url: 'ftp://example.com/' } })),
      ),
    ).toEqual([400, 'WEBHOOK_URL_REJECTED'])
    expect(
      await code(fetch(sub('bad%2Fid'), json('PUT', { type: 'pull-wake', pattern: 'x/*', wake_stream: 'w' }))),
    ).toEqual([400, 'INVALID_REQUEST'])
    expect(await code(fetch(sub('missing')))).toEqual([404, 'SUBSCRIPTION_NOT_FOUND'])
    expect(
      await code(fetch(sub('bad'), { method: 'PUT', headers: { 'content-type': 'application/json' }, body: 'null' })),
    ).toEqual([400, 'INVALID_REQUEST'])
    expect(
      await code(
        fetch(sub('bad'), json('PUT', { type: 'pull-wake', streams: ['w/x', 'w/pool'], wake_stream: 'w/pool' })),
      ),
    ).toEqual([400, 'INVALID_REQUEST'])
    expect(await code(fetch(`${sub('missing')}/claim`, json('POST', {})))).toEqual([400, 'INVALID_REQUEST'])
    expect(await code(fetch(url('__ds/other')))).toEqual([404, 'SUBSCRIPTION_NOT_FOUND'])
    await fetch(url('refuse/a'), json('PUT', [{ n: 1 }]))
    await fetch(url('refuse/pool'), json('PUT', []))
    const def = { type: 'pull-wake', streams: ['refuse/a'], wake_stream: 'refuse/pool' }
    expect((await fetch(sub('twice'), json('PUT', def))).status).toBe(201)
    expect((await fetch(sub('twice'), json('PUT', def))).status).toBe(200)
    expect(await code(fetch(sub('twice'), json('PUT', { ...def, lease_ttl_ms: 5000 })))).toEqual([
      409,
      'SUBSCRIPTION_ALREADY_EXISTS',
    ])
    // Linked at its tail: no pending work to claim.
    expect(await code(fetch(`${sub('twice')}/claim`, json('POST', { worker: 'w' })))).toEqual([409, 'NO_PENDING_WORK'])
    await fetch(url('refuse/a'), json('POST', [{ n: 2 }]))
    const claim = (await (await fetch(`${sub('twice')}/claim`, json('POST', { worker: 'w' }))).json()) as {
      wake_id: string
      generation: number
      token: string
      streams: Array<{ tail_offset: string }>
    }
    const wake = { wake_id: claim.wake_id, generation: claim.generation }
    const bearer = { authorization: `Bearer ${claim.token}` }
    expect(await code(fetch(`${sub('twice')}/ack`, json('POST', wake, { authorization: 'Bearer x.y' })))).toEqual([
      401,
      'TOKEN_INVALID',
    ])
    expect(await code(fetch(`${sub('twice')}/ack`, json('POST', wake)))).toEqual([401, 'TOKEN_INVALID'])
    const past = claim.streams[0]!.tail_offset.replace(/\d{4}$/, '9999')
    expect(
      await code(
        fetch(`${sub('twice')}/ack`, json('POST', { ...wake, acks: [{ stream: 'refuse/a', offset: past }] }, bearer)),
      ),
    ).toEqual([409, 'INVALID_OFFSET'])
    expect(
      await code(
        fetch(
          `${sub('twice')}/ack`,
          json('POST', { ...wake, acks: [{ stream: 'other', offset: claim.streams[0]!.tail_offset }] }, bearer),
        ),
      ),
    ).toEqual([409, 'INVALID_OFFSET'])
    // The callback route takes a pull-wake wake's token as well (as the reference server does).
    expect(await (await fetch(`${sub('twice')}/callback`, json('POST', wake, bearer))).json()).toEqual({
      ok: true,
      next_wake: false,
    })
    expect((await fetch(`${sub('twice')}/release`, json('POST', wake, bearer))).status).toBe(204)
    expect((await fetch(sub('twice'), { method: 'DELETE' })).status).toBe(204)
    expect(await code(fetch(sub('twice')))).toEqual([404, 'SUBSCRIPTION_NOT_FOUND'])
  })
})

describe('gateway subscriptions: off by default, and behind auth', () => {
  const dir = tempDir('twainmq-gw-subs-off-')
  let off: Served
  let guarded: Served
  beforeAll(async () => {
    off = await serve(dir.dir)
    guarded = await serve(dir.dir, {
      subscriptions: true,
      auth: {
        tokens: [
          { name: 'admin', token: 'admin-token-0123456789ab', read: ['*'], write: ['*'] },
          { name: 'ui', token: 'ui-token-0123456789abcdef', read: ['prices*'] },
          { name: 'reader-all', token: 'reader-all-0123456789ab', read: ['*'] },
        ],
      },
      authorize: (_req, stream) => stream !== '__ds/subscriptions/refused',
    })
  })
  afterAll(async () => {
    await guarded?.stop()
    await off?.stop()
    dir.remove()
  })

  it('answers 404 under __ds/ without subscriptions: true, and refuses a bad option', async () => {
    const r = await fetch(`${off.url}/v1/stream/__ds/subscriptions/x`)
    expect(r.status).toBe(404)
    expect(((await r.json()) as { error: { message: string } }).error.message).toMatch(/--subscriptions/)
    expect(() => createGateway(off.twain, { subscriptions: 'yes' as unknown as boolean })).toThrow(
      /subscriptions must be a boolean, got "yes"/,
    )
    expect(() => createGateway(off.twain, { publicUrl: 'streams.example' })).toThrow(/publicUrl must be an origin/)
  })

  it('with auth, a pull-wake subscription needs a token that may append to its wake stream', async () => {
    const put = (token: string, wake: string) =>
      fetch(`${guarded.url}/v1/stream/__ds/subscriptions/wake-rights`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ type: 'pull-wake', pattern: 'prices/*', wake_stream: wake }),
      })
    expect((await put('reader-all-0123456789ab', 'pool')).status).toBe(403)
    expect((await put('admin-token-0123456789ab', 'pool')).status).toBe(201)
  })

  it('with auth, managing subscriptions needs a token that may read every stream', async () => {
    const put = (token: string) =>
      fetch(`${guarded.url}/v1/stream/__ds/subscriptions/guarded`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ type: 'pull-wake', pattern: 'prices/*', wake_stream: 'pool' }),
      })
    expect((await put('ui-token-0123456789abcdef')).status).toBe(403)
    expect((await fetch(`${guarded.url}/v1/stream/__ds/subscriptions/guarded`)).status).toBe(401)
    expect((await put('admin-token-0123456789ab')).status).toBe(201)
    // The authorize hook is asked too, with the name __ds/subscriptions/<id>.
    const refused = await fetch(`${guarded.url}/v1/stream/__ds/subscriptions/refused`, {
      headers: { authorization: 'Bearer admin-token-0123456789ab' },
    })
    expect(refused.status).toBe(403)
  })
})
