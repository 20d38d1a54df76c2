// HTTP gateway subscriptions (Durable Streams `__ds`): learn which streams have new data without a
// read held open on each. A pull-wake subscription puts a wake event in a stream that workers
// watch; a worker claims the wake, reads each pending stream from its acknowledged offset and acks
// it. A webhook subscription POSTs its wakes, signed with Ed25519; the receiver checks the
// signature against the gateway's key set and answers { done: true } to acknowledge.
// Run: npx tsx examples/http-subscriptions.ts [directory]
import { createPublicKey, verify, type JsonWebKey } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { open } from 'twainmq'
import { createGateway } from 'twainmq/gateway'

const dir = process.argv[2] ?? mkdtempSync(join(tmpdir(), 'twainmq-subscriptions-'))
const twain = await open(dir)
const gateway = createGateway(twain, { subscriptions: true })
const server = createServer(gateway.node)
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/stream`
const json = (method: string, body: unknown, headers: Record<string, string> = {}): RequestInit => ({
  method,
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify(body),
})

// Two order streams (nested paths: the topics "orders+eu" and "orders+us") and a wake stream.
for (const path of ['orders/eu', 'orders/us', 'wake/pool']) await fetch(`${base}/${path}`, json('PUT', []))

// --- pull-wake ---
const created = await fetch(
  `${base}/__ds/subscriptions/billing`,
  json('PUT', { type: 'pull-wake', pattern: 'orders/*', wake_stream: 'wake/pool', lease_ttl_ms: 10_000 }),
)
console.log('PUT subscription billing ->', created.status)

// New orders: one over HTTP, one from a Node producer (both wake the subscription).
await fetch(`${base}/orders/eu`, json('POST', [{ id: 1, cents: 120 }]))
await twain.producer('orders+us').send(0, { id: 2, cents: 250 })

// A worker waits on the wake stream (long-poll from its start), then claims the wake.
let events: Array<{ subscription_id: string; stream: string }> = []
for (let offset = '-1'; events.length === 0;) {
  const res = await fetch(`${base}/wake/pool?offset=${offset}&live=long-poll`)
  offset = res.headers.get('stream-next-offset') ?? offset
  if (res.status === 200) events = (await res.json()) as typeof events
}
console.log('wake event for', events[0]!.subscription_id)
const claim = (await (
  await fetch(`${base}/__ds/subscriptions/billing/claim`, json('POST', { worker: 'w1' }))
).json()) as {
  wake_id: string
  generation: number
  token: string
  streams: Array<{ path: string; acked_offset: string; tail_offset: string; has_pending: boolean }>
}
const acks: Array<{ stream: string; offset: string }> = []
for (const s of claim.streams.filter((x) => x.has_pending).sort((a, b) => a.path.localeCompare(b.path))) {
  // A stream linked when the subscription was made starts at its acked offset; one found later at -1.
  const read = await fetch(`${base}/${s.path}?offset=${s.acked_offset}`)
  console.log(`worker read ${s.path}:`, await read.text())
  acks.push({ stream: s.path, offset: s.tail_offset })
}
const acked = await fetch(
  `${base}/__ds/subscriptions/billing/ack`,
  json(
    'POST',
    { wake_id: claim.wake_id, generation: claim.generation, acks, done: true },
    {
      authorization: `Bearer ${claim.token}`,
    },
  ),
)
console.log('ack ->', JSON.stringify(await acked.json()))

// --- webhook ---
const keys = (await (await fetch(`${base}/__ds/jwks.json`)).json()) as { keys: Array<JsonWebKey & { kid: string }> }
let received: (text: string) => void = () => undefined
const delivered = new Promise<string>((resolve) => (received = resolve))
const receiver = createServer((req, res) => {
  let body = ''
  req.on('data', (c: Buffer) => (body += c.toString('utf8')))
  req.on('end', () => {
    // Webhook-Signature: t=<unix s>,kid=<key id>,ed25519=<base64url of Ed25519("<t>.<body>")>
    const sig = Object.fromEntries(
      String(req.headers['webhook-signature'])
        .split(',')
        .map((kv) => kv.split('=')),
    )
    const jwk = keys.keys.find((k) => k.kid === sig.kid)!
    const ok = verify(
      null,
      Buffer.from(`${sig.t}.${body}`),
      createPublicKey({ key: jwk, format: 'jwk' }),
      Buffer.from(sig.ed25519, 'base64url'),
    )
    const wake = JSON.parse(body) as { streams: Array<{ path: string; has_pending: boolean }> }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ done: true }))
    received(
      `signature ${ok ? 'valid' : 'INVALID'}, pending: ${wake.streams.filter((s) => s.has_pending).map((s) => s.path)}`,
    )
  })
})
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`
await fetch(
  `${base}/__ds/subscriptions/audit`,
  json('PUT', { type: 'webhook', streams: ['orders/eu'], webhook: { url: hook } }),
)
await fetch(`${base}/orders/eu`, json('POST', [{ id: 3, cents: 99 }]))
console.log('webhook received:', await delivered)

receiver.closeAllConnections()
await new Promise<void>((resolve) => receiver.close(() => resolve()))
await gateway.close()
server.closeAllConnections()
await new Promise<void>((resolve) => server.close(() => resolve()))
await twain.close()
console.log('done')
