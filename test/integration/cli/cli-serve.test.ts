// `twainmq serve`, run as a user would: spawned CLI processes over a directory and over a private
// redis-server, talked to with plain fetch, a raw SSE reader and @durable-streams/client.
import { writeFileSync } from 'node:fs'
import { stream } from '@durable-streams/client'
import { createStateSchema, createStreamDB } from '@durable-streams/state/db'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { finished, runCli, startCli, waitFor, type CliChild } from '../../helpers/cli.js'
import { RedisServer } from '../../helpers/redis-server.js'
import { killChildren } from '../../helpers/spawn.js'
import { readSse } from '../../helpers/sse.js'
import { tempDir } from '../../helpers/tmp.js'
import { until } from '../../helpers/wait.js'

const LINE =
  /^twainmq gateway listening on (http:\/\/127\.0\.0\.1:([0-9]+)\/v1\/stream\/) \(dashboard: http:\/\/127\.0\.0\.1:\2\/\)\n$/
const children: CliChild[] = []

/** Start `twainmq serve` on a free port and wait for its one line; `streams` is the printed URL. */
async function serve(url: string, extra: string[] = []): Promise<{ child: CliChild; streams: string }> {
  const child = startCli(['--url', url, 'serve', ...(extra.includes('--port') ? [] : ['--port', '0']), ...extra])
  children.push(child)
  await waitFor('serve to print its URL', () => LINE.test(child.out.stdout) || child.exitCode !== null, 30_000)
  const m = LINE.exec(child.out.stdout)
  if (!m) throw new Error(`serve did not start: ${child.out.stderr}`)
  expect(Number(m[2])).toBeGreaterThan(0)
  return { child, streams: m[1] as string }
}

/** SIGTERM a serve process and expect a clean exit 0 with nothing on stderr and only its line on stdout. */
async function stop(child: CliChild, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  const done = finished(child)
  child.kill(signal)
  const r = await done
  expect(r.stderr).toBe('')
  expect(r.code).toBe(0)
  expect(r.stdout).toMatch(LINE)
}

const json = { 'content-type': 'application/json' }
const post = (u: string, items: unknown[]) => fetch(u, { method: 'POST', headers: json, body: JSON.stringify(items) })

afterEach(async () => {
  await killChildren(children)
})

describe.each(['file', 'redis'] as const)('twainmq serve over %s', (kind) => {
  let redis: RedisServer | undefined
  let store: string
  let cleanup = () => undefined as void
  beforeAll(async () => {
    if (kind === 'redis') {
      redis = await RedisServer.start()
      store = redis.url
    } else {
      const tmp = tempDir('twainmq-serve-')
      store = tmp.dir
      cleanup = tmp.remove
    }
  })
  afterAll(async () => {
    await redis?.destroy()
    cleanup()
  })

  it('prints its URL once ready; PUT, POST and GET round trip with plain fetch; --cors origins; SIGINT exits 0', async () => {
    const { child, streams } = await serve(store, ['--cors', 'https://app.example, http://localhost:5173'])
    const u = `${streams}round-${kind}`
    expect((await fetch(u, { method: 'PUT', headers: json })).status).toBe(201)
    expect((await post(u, [{ n: 1 }, { n: 2 }])).status).toBe(204)
    expect((await post(u, [{ n: 3 }])).status).toBe(204)
    const got = await fetch(`${u}?offset=-1`, { headers: { origin: 'https://app.example' } })
    expect(got.status).toBe(200)
    expect(got.headers.get('access-control-allow-origin')).toBe('https://app.example')
    const other = await fetch(`${u}?offset=-1`, { headers: { origin: 'https://evil.example' } })
    expect(other.headers.get('access-control-allow-origin')).toBeNull()
    expect(got.headers.get('stream-up-to-date')).toBe('true')
    expect(await got.json()).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }])
    await stop(child, 'SIGINT')
  }, 60_000)

  it('--compact-every: a stream created with Stream-Compaction: state is compacted by serve itself', async () => {
    const { child, streams } = await serve(store, ['--compact-every', '100ms', '--tombstone-retention', '1h'])
    const u = `${streams}state-${kind}`
    const created = await fetch(u, { method: 'PUT', headers: { ...json, 'stream-compaction': 'state' } })
    expect(created.headers.get('stream-compaction')).toBe('state')
    const event = (n: number) => ({ type: 'row', key: String(n % 3), value: { n }, headers: { operation: 'upsert' } })
    for (let round = 0; round < 10; round++)
      await post(
        u,
        [0, 1, 2].map((k) => event(round * 3 + k)),
      )
    const read = async () => (await (await fetch(u)).json()) as unknown[]
    await until(async () => (await read()).length === 3, 30_000, 'serve to compact the stream')
    expect(await read()).toEqual([event(27), event(28), event(29)])
    // @durable-streams/state's StreamDB reads it unchanged.
    const anyRow = {
      '~standard': {
        version: 1 as const,
        vendor: 'test',
        validate: (value: unknown) => ({ value: value as { key: string; n: number } }),
      },
    }
    const db = createStreamDB({
      streamOptions: { url: u, contentType: 'application/json' },
      state: createStateSchema({ rows: { schema: anyRow, type: 'row', primaryKey: 'key' } }),
    })
    try {
      await db.preload()
      const rows = [...db.collections.rows.values()]
      expect(rows.map((r) => [r.key, r.n]).sort()).toEqual([
        ['0', 27],
        ['1', 28],
        ['2', 29],
      ])
    } finally {
      db.close()
    }
    await stop(child)
  }, 60_000)

  it('two serve processes over one store: a stream created and appended through one is read through the other', async () => {
    const [a, b] = await Promise.all([serve(store), serve(store)])
    const name = `shared-${kind}`
    expect((await fetch(`${a.streams}${name}`, { method: 'PUT', headers: json })).status).toBe(201)
    const head = await fetch(`${b.streams}${name}`, { method: 'HEAD', headers: { origin: 'https://app.example' } })
    expect(head.status).toBe(200)
    expect(head.headers.get('access-control-allow-origin')).toBeNull() // CORS is off without --cors
    expect((await post(`${a.streams}${name}`, ['from a'])).status).toBe(204)
    expect((await post(`${b.streams}${name}`, ['from b'])).status).toBe(204)
    for (const s of [a, b])
      expect(await (await fetch(`${s.streams}${name}?offset=-1`)).json()).toEqual(['from a', 'from b'])
    await Promise.all([stop(a.child), stop(b.child)])
  }, 60_000)

  it('SIGTERM ends an open SSE response; the reader resumes on a new serve from its last offset: no loss, no repeat', async () => {
    const a = await serve(store)
    const name = `resume-${kind}`
    expect((await fetch(`${a.streams}${name}`, { method: 'PUT', headers: json })).status).toBe(201)
    expect((await post(`${a.streams}${name}`, [1, 2, 3, 4, 5])).status).toBe(204)
    const first = await readSse(`${a.streams}${name}`, '-1')
    await waitFor('the catch-up', () => first.items.length === 5 && first.upToDate())
    expect((await post(`${a.streams}${name}`, [6, 7])).status).toBe(204)
    await waitFor('the live append', () => first.items.length === 7 && first.upToDate())
    await stop(a.child)
    expect(await first.ended).toBe('ended')
    const resumeAt = first.lastOffset() as string

    const b = await serve(store)
    // Appended while no reader was connected, then live after the reader is back.
    expect((await post(`${b.streams}${name}`, [8, 9])).status).toBe(204)
    const second = await readSse(`${b.streams}${name}`, resumeAt)
    await waitFor('the missed appends', () => second.items.length === 2 && second.upToDate())
    expect((await post(`${b.streams}${name}`, [10])).status).toBe(204)
    await waitFor('the next live append', () => second.items.length === 3)
    expect([...first.items, ...second.items]).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
    await stop(b.child)
    expect(await second.ended).toBe('ended')
  }, 90_000)

  it('kill -9 of serve under appends and a live SSE reader: the reader resumes on a new serve from its last control offset, every acknowledged append read once', async () => {
    const a = await serve(store)
    const name = `kill-${kind}`
    expect((await fetch(`${a.streams}${name}`, { method: 'PUT', headers: json })).status).toBe(201)
    const first = await readSse(`${a.streams}${name}`, '-1')
    const acked: number[] = []
    let writing = true
    const writer = (async () => {
      for (let i = 0; writing; i++) {
        const ok = await post(`${a.streams}${name}`, [i]).then(
          (r) => r.status === 204,
          () => false,
        )
        if (!ok) return // the gateway is gone: what this send did is unknown (it may be in the log)
        acked.push(i)
      }
    })()
    await waitFor('200 appends read live', () => first.items.length >= 200)
    a.child.kill('SIGKILL')
    await first.ended // cut: the connection dropped
    writing = false
    await writer
    const b = await serve(store)
    const second = await readSse(`${b.streams}${name}`, first.lastOffset() as string)
    const all = (await (await fetch(`${b.streams}${name}?offset=-1`)).json()) as number[]
    await waitFor(
      'the rest of the stream',
      () => second.upToDate() && first.confirmed().length + second.items.length >= all.length,
    )
    // What the reader committed to before the kill plus what it read after: the whole log, in order, once.
    expect([...first.confirmed(), ...second.items]).toEqual(all)
    expect(all).toEqual(Array.from({ length: all.length }, (_, i) => i))
    expect(all.length).toBeGreaterThanOrEqual(acked.length) // every acknowledged append is there
    second.abort()
    await stop(b.child)
  }, 90_000)

  it('@durable-streams/client (SSE) resumes by itself when serve is restarted on the same port: no loss, no repeat', async () => {
    const a = await serve(store)
    const port = /:([0-9]+)\/v1/.exec(a.streams)?.[1] as string
    const url = `${a.streams}client-${kind}`
    expect((await fetch(url, { method: 'PUT', headers: json })).status).toBe(201)
    expect((await post(url, [1, 2, 3])).status).toBe(204)
    const items: unknown[] = []
    const abort = new AbortController()
    const res = await stream({
      url,
      offset: '-1',
      live: 'sse',
      signal: abort.signal,
      backoffOptions: { initialDelay: 50, maxDelay: 200, multiplier: 1.5 },
    })
    res.subscribeJson((batch) => void items.push(...batch.items))
    await waitFor('the catch-up', () => items.length === 3)
    await stop(a.child)
    const b = await serve(store, ['--port', port])
    expect(b.streams).toBe(a.streams)
    expect((await post(url, [4, 5])).status).toBe(204)
    await waitFor('the appends after the restart', () => items.length >= 5)
    expect(items).toEqual([1, 2, 3, 4, 5])
    abort.abort()
    await stop(b.child)
  }, 90_000)
})

describe('twainmq serve: usage errors (exit 2, the bad value named)', () => {
  it.each([
    [['--port', '70000'], /option '--port <port>' argument '70000' is invalid\. expected an integer 0\.\.65535/],
    [['--port', 'http'], /argument 'http' is invalid/],
    [
      ['--long-poll-ms', '0'],
      /option '--long-poll-ms <ms>' argument '0' is invalid\. expected an integer 1\.\.3600000/,
    ],
    [['--host', 'http://x'], /argument 'http:\/\/x' is invalid\. expected a host name or IP address, got "http:\/\/x"/],
    [
      ['--cors', 'https://ok.example,app.example'],
      /expected '\*' or origins like https:\/\/app\.example separated by commas, got "app\.example"/,
    ],
    [['--cors', 'https://a.example/'], /got "https:\/\/a\.example\/"/],
    [['--compact-every', '0'], /option '--compact-every <duration>' argument '0' is invalid\. expected a duration/],
    [['--compact-every', '2d'], /argument '2d' is invalid\. expected a duration of at most a day \(24h\), got "2d"/],
  ])(
    'serve %j',
    async (args, message) => {
      const tmp = tempDir('twainmq-serve-')
      try {
        const r = await runCli(['--url', tmp.dir, 'serve', ...args])
        expect(r.stdout).toBe('')
        expect(r.stderr).toMatch(/^ERR_USAGE: /)
        expect(r.stderr).toMatch(message)
        expect(r.code).toBe(2)
      } finally {
        tmp.remove()
      }
    },
    30_000,
  )

  it('--auth file: 401 without a token, the granted reads and writes through, 403 outside; a bad file is refused before the store opens', async () => {
    const tmp = tempDir('twainmq-serve-')
    try {
      const token = 'serve-token-0123456789abcdef'
      const file = `${tmp.dir}/auth.json`
      writeFileSync(file, JSON.stringify({ tokens: [{ name: 'app', token, read: ['*'], write: ['app.*'] }] }))
      const { child, streams } = await serve(`${tmp.dir}/store`, ['--auth', file])
      const bearer = { authorization: `Bearer ${token}` }
      expect((await fetch(`${streams}app.a`, { method: 'PUT', headers: json })).status).toBe(401)
      expect((await fetch(`${streams}app.a`, { method: 'PUT', headers: { ...json, ...bearer } })).status).toBe(201)
      expect((await fetch(`${streams}other`, { method: 'PUT', headers: { ...json, ...bearer } })).status).toBe(403)
      expect(
        (await fetch(`${streams}app.a`, { method: 'POST', headers: { ...json, ...bearer }, body: '[1]' })).status,
      ).toBe(204)
      expect(await (await fetch(`${streams}app.a?offset=-1`, { headers: bearer })).json()).toEqual([1])
      await stop(child)
      writeFileSync(file, JSON.stringify({ tokens: [{ token: 'short', read: ['*'] }] }))
      const bad = await runCli(['--url', `${tmp.dir}/store`, 'serve', '--port', '0', '--auth', file])
      expect(bad.stdout).toBe('')
      expect(bad.stderr).toMatch(/tokens\[0\]: "token" must be a string of at least 16 characters/)
      expect(bad.code).not.toBe(0)
    } finally {
      tmp.remove()
    }
  }, 60_000)

  it('a port already in use: a runtime error (exit 1) with the code and the address', async () => {
    const tmp = tempDir('twainmq-serve-')
    try {
      const first = await serve(tmp.dir)
      const port = /:([0-9]+)\/v1/.exec(first.streams)?.[1] as string
      const r = await runCli(['--url', tmp.dir, 'serve', '--port', port])
      expect(r.stderr).toMatch(new RegExp(`^EADDRINUSE: .*127\\.0\\.0\\.1:${port}`))
      expect(r.code).toBe(1)
      await stop(first.child)
    } finally {
      tmp.remove()
    }
  }, 60_000)
})
