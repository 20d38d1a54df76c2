// A/B of gateway catch-up reads over the Redis backend between two trees (decision 170):
// `npx tsx bench/ab-gateway-redis.mts <tree> [messages]` starts a private redis-server, writes
// `messages` (default 100,000) 100-byte JSON values to a stream through the tree's backend, serves
// the tree's gateway on loopback in this process and reads the stream from the start, paged by
// Stream-Next-Offset, R times (env R, default 5); prints one JSON line with msgs/s (median) and the
// server's `read` script calls per catch-up (`INFO commandstats`). Alternate trees in fresh processes.
const [tree] = process.argv.slice(2) as [string]
const n = Number(process.argv[3] ?? 100_000)
const rounds = Number(process.env.R ?? 5)
const { open } = await import(`${tree}/src/index.ts`)
const { createGateway } = await import(`${tree}/src/gateway/index.ts`)
const { RedisServer } = await import(`${tree}/test/helpers/redis-server.ts`)
const { Redis } = await import('ioredis')
const { createServer, Agent, request } = await import('node:http')
const server = await RedisServer.start()
const admin = new Redis(server.url, { protocol: 2 })
const twain = await open(server.url, { prefix: 'abgw:' })
const gateway = createGateway(twain, {})
const http = createServer(gateway.node)
await new Promise<void>((r) => http.listen(0, '127.0.0.1', r))
const port = (http.address() as { port: number }).port
const agent = new Agent({ keepAlive: true })
const get = (path: string): Promise<{ body: Buffer; headers: Record<string, unknown> }> =>
  new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent }, (res) => {
      const parts: Buffer[] = []
      res
        .on('data', (d: Buffer) => parts.push(d))
        .on('end', () => resolve({ body: Buffer.concat(parts), headers: res.headers }))
    })
    req.on('error', reject).end()
  })
try {
  await twain.createTopic('s')
  const p = twain.producer('s')
  const v = { text: 'x'.repeat(88) }
  for (let i = 0; i < n; i += 1000)
    await p.sendBatch(Array.from({ length: Math.min(1000, n - i) }, (_, j) => ({ key: (i + j) % 65536, value: v })))
  await p.flush()
  const rates: number[] = []
  const calls: number[] = []
  for (let r = 0; r < rounds; r++) {
    await admin.config('RESETSTAT')
    let offset = '-1'
    let items = 0
    const t0 = performance.now()
    for (;;) {
      const res = await get(`/v1/stream/s?offset=${encodeURIComponent(offset)}`)
      items += (JSON.parse(res.body.toString('utf8')) as unknown[]).length
      offset = String(res.headers['stream-next-offset'])
      if (res.headers['stream-up-to-date'] === 'true') break
    }
    rates.push(items / ((performance.now() - t0) / 1000))
    if (items !== n) throw new Error(`catch-up read ${items} items, expected ${n}`)
    const stats = String(await admin.info('commandstats'))
    calls.push(
      Number(/cmdstat_evalsha:calls=(\d+)/.exec(stats)?.[1] ?? 0) +
        Number(/cmdstat_eval:calls=(\d+)/.exec(stats)?.[1] ?? 0),
    )
  }
  const median = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1] as number
  process.stdout.write(
    `${JSON.stringify({ tree, msgsPerS: Math.round(median(rates)), rates: rates.map(Math.round), readCalls: median(calls) })}\n`,
  )
} finally {
  agent.destroy()
  await new Promise((r) => http.close(r))
  await gateway.close()
  await twain.close()
  admin.disconnect()
  await server.stop()
}
