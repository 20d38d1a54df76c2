// Fault test (Redis): a processor's output append whose reply is lost after Redis ran it.
//
// A processor reaches Redis through a TCP proxy. While it handles chosen messages, the proxy is
// armed: the first command carrying the message's source (an append-src script call: its source
// argument "<group> <topic>@<incarnation> <partition>") is passed to Redis, every reply on that connection from
// then on is swallowed, and once Redis has stored the call's outputs both sides are closed. The
// processor tries the call again on a new connection, with the same batch sequence number: the
// script answers it as the first time. Specified: every send resolves (the retried ones not as
// duplicates, at the offsets where their outputs are), and every output is stored exactly once.
import { connect, createServer, type Server, type Socket } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { parseSourceHeader, SOURCE_HEADER } from '../../src/backends/source-header.js'
import { open, type OutputMetadata, type Processor, type Twain } from '../../src/index.js'
import { describeErr } from '../helpers/faults.js'
import { RedisServer } from '../helpers/redis-server.js'
import { until } from '../helpers/wait.js'

const GROUP = 'cg'
const IN_PARTITIONS = 2
const OUT_PARTITIONS = 3
const OUTPUTS = 3
const INPUTS = 120
/** Input offsets of partition 0 whose outputs' first script call loses its reply. */
const CUT_AT = [10, 25, 40]

/**
 * A TCP proxy in front of the server. Armed with a marker and a check, it passes the first command
 * carrying the marker to the server, swallows every reply on that connection from then on, and
 * closes both sides once `ran()` says the server executed the command: it ran, its client never
 * hears of it.
 */
async function lossyProxy(port: number) {
  let armed: { marker: RegExp; ran: () => Promise<boolean> } | undefined
  let cuts = 0
  let connections = 0
  const sockets = new Set<Socket>()
  const proxy: Server = createServer((client) => {
    connections++
    const upstream = connect({ host: '127.0.0.1', port })
    sockets.add(client).add(upstream)
    let cut = false
    let recent = Buffer.alloc(0) // the end of what came before: a marker split across two reads
    client.on('data', (d: Buffer) => {
      if (cut) return // the connection is being dropped: nothing more reaches the server
      const before = recent.length
      const seen = Buffer.concat([recent, d])
      recent = seen.subarray(Math.max(0, seen.length - 64))
      const a = armed
      upstream.write(d)
      // A marker ending in what came before belongs to a command sent before: not this one.
      if (a === undefined) return
      const hits = seen.toString('latin1').matchAll(new RegExp(a.marker.source, 'g'))
      if (![...hits].some((m) => m.index + m[0].length > before)) return
      armed = undefined
      cut = true
      cuts++
      void until(a.ran, 20_000, 'the server to run the marked command').finally(() => {
        client.destroy()
        upstream.destroy()
      })
    })
    upstream.on('data', (d: Buffer) => {
      if (!cut) client.write(d)
    })
    const end = () => {
      client.destroy()
      upstream.destroy()
      sockets.delete(client)
      sockets.delete(upstream)
    }
    client.on('close', end).on('error', end)
    upstream.on('close', end).on('error', end)
  })
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve))
  const addr = proxy.address()
  const proxyPort = typeof addr === 'object' && addr ? addr.port : 0
  return {
    url: `redis://127.0.0.1:${proxyPort}`,
    arm: (marker: RegExp, ran: () => Promise<boolean>) => (armed = { marker, ran }),
    armed: () => armed !== undefined,
    cuts: () => cuts,
    connections: () => connections,
    close: async () => {
      for (const s of sockets) s.destroy()
      await new Promise<void>((resolve) => proxy.close(() => resolve()))
    },
  }
}

let server: RedisServer | undefined
const closing: Array<() => Promise<unknown>> = []
afterEach(async () => {
  for (const c of closing.splice(0).reverse()) await c().catch(() => undefined)
  await server?.destroy()
  server = undefined
})

describe('redis: a processor output append whose reply is lost after Redis ran it', () => {
  it('is tried again and recognised: every send resolves, every output is stored once', async () => {
    server = await RedisServer.start()
    const direct: Twain = await open(server.url)
    closing.push(() => direct.close())
    await direct.createTopic('in', { partitions: IN_PARTITIONS, keyType: 'string' })
    await direct.createTopic('out', { partitions: OUT_PARTITIONS, keyType: 'string' })
    const producer = direct.producer<string>('in')
    await Promise.all(
      Array.from({ length: INPUTS }, (_, i) => producer.send(`k${i}`, `in-${i}`, { partition: i % IN_PARTITIONS })),
    )
    const proxy = await lossyProxy(server.port)
    closing.push(() => proxy.close())
    const viaProxy = await open(proxy.url)
    closing.push(() => viaProxy.close())
    const outEnd = async () => (await direct.describeTopic('out')).offsets.reduce((n, o) => n + o.end, 0)

    const processor: Processor<string> = viaProxy.processor<string>('in', {
      group: GROUP,
      sessionTimeoutMs: 10_000,
      commitIntervalMs: 100,
    })
    closing.push(() => processor.close())
    const errors: string[] = []
    processor.on('error', (e) => errors.push(describeErr(e)))
    const told = new Map<string, OutputMetadata>()
    const failed: string[] = []
    let processed = 0
    for await (const m of processor) {
      const at = `${m.partition}@${m.offset}`
      if (m.partition === 0 && CUT_AT.includes(m.offset)) {
        const before = await outEnd()
        // The script's source argument, `<group> <topic>[@<incarnation>] <partition>`, a whole bulk string.
        proxy.arm(new RegExp(`${GROUP} in(@\\d+)? 0\r\n`), async () => (await outEnd()) > before)
      }
      const sends = Array.from({ length: OUTPUTS }, (_, i) =>
        m.send('out', `${at}#${i}`, `${at}#${i}`, { partition: (m.offset + i) % OUT_PARTITIONS }),
      )
      const settled = await Promise.allSettled(sends)
      settled.forEach((s, i) => {
        if (s.status === 'fulfilled') told.set(`${at}#${i}`, s.value)
        else failed.push(`${at}#${i}: ${describeErr(s.reason)}`)
      })
      expect(proxy.armed(), `the command of ${at} went without the marker`).toBe(false)
      m.ack()
      if (++processed === INPUTS) break
    }
    await until(
      async () => (await direct.describeGroup(GROUP)).topics.every((t) => t.lag === 0),
      30_000,
      'every input committed',
    )
    await processor.close()

    const info = `cuts ${proxy.cuts()}, connections ${proxy.connections()}, errors: ${errors.slice(0, 5).join(' | ')}`
    expect(failed, info).toEqual([])
    expect(proxy.cuts(), info).toBe(CUT_AT.length)
    expect(proxy.connections(), info).toBeGreaterThan(CUT_AT.length)
    const stored = new Map<string, Array<{ partition: number; offset: number }>>()
    for await (const m of direct.history<string>('out')) {
      const src = parseSourceHeader(m.headers[SOURCE_HEADER] as string)
      const id = `${src?.key.split(' ')[2]}@${src?.offset}#${src?.seq}`
      expect(m.value).toBe(id)
      let list = stored.get(id)
      if (list === undefined) stored.set(id, (list = []))
      list.push({ partition: m.partition, offset: m.offset })
    }
    const twice = [...stored].filter(([, l]) => l.length > 1).map(([id, l]) => `${id}: ${JSON.stringify(l)}`)
    expect(twice, info).toEqual([])
    expect(stored.size, info).toBe(INPUTS * OUTPUTS)
    // Each send was told where its output is; none of this delivery's own outputs as a duplicate.
    for (const [id, where] of told) {
      expect(where, id).toEqual({ topic: 'out', ...(stored.get(id) as [{ partition: number; offset: number }])[0] })
    }
    expect(told.size).toBe(INPUTS * OUTPUTS)
  }, 60_000)
})
