// HTTP gateway: serve a twainmq store over the Durable Streams protocol, then talk to it with plain
// fetch — create a JSON stream, tail it over SSE while a Node producer and an HTTP client append,
// and read the HTTP appends back with a Node consumer group.
// Run: npx tsx examples/http-gateway.ts [directory]
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { open } from 'twainmq'
import { createGateway } from 'twainmq/gateway'

const given = process.argv[2]
const dir = given ?? mkdtempSync(join(tmpdir(), 'twainmq-gateway-'))
const twain = await open(dir)
const gateway = createGateway(twain) // also usable as a Fetch handler: gateway.fetch(request)
const server = createServer(gateway.node)
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/stream`
console.log(`serving ${dir} at ${base}/<name>`)

// Create a JSON stream over HTTP: it is the twainmq topic "prices" (one partition).
const created = await fetch(`${base}/prices`, { method: 'PUT', headers: { 'content-type': 'application/json' } })
console.log('PUT /prices ->', created.status)

// An SSE reader from the start: each batch is an `event: data` (a JSON array) then an `event: control`.
const sse = await fetch(`${base}/prices?offset=-1&live=sse`)
const reading = (async () => {
  const reader = sse.body!.getReader()
  const decoder = new TextDecoder()
  const seen: unknown[] = []
  let text = ''
  while (seen.length < 3) {
    const { done, value } = await reader.read()
    if (done) break
    text += decoder.decode(value, { stream: true })
    for (;;) {
      const end = text.indexOf('\n\n')
      if (end < 0) break
      const event = text.slice(0, end)
      text = text.slice(end + 2)
      if (event.startsWith('event: data\n'))
        seen.push(...(JSON.parse(event.slice('event: data\ndata:'.length)) as unknown[]))
    }
  }
  await reader.cancel()
  return seen
})()

// A Node producer's message and an HTTP append both reach the SSE reader.
await twain.producer('prices').send(0, { sku: 'apple', cents: 120 })
await fetch(`${base}/prices`, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify([
    { sku: 'bread', cents: 250 },
    { sku: 'milk', cents: 99 },
  ]),
})
console.log('SSE received:', JSON.stringify(await reading))

// A catch-up read, and the offset to resume from.
const read = await fetch(`${base}/prices`)
console.log(`GET /prices -> ${read.status} ${await read.text()} next offset ${read.headers.get('stream-next-offset')}`)

// A Node consumer group reads what HTTP clients appended (control records have a `ds.` type).
const group = twain.consumer('prices', { group: 'billing', commitIntervalMs: 10 })
const billed: unknown[] = []
for await (const m of group) {
  if (m.type === undefined) billed.push(m.value)
  m.ack()
  if (billed.length === 3) break
}
await group.close()
console.log('consumer group read:', JSON.stringify(billed))

await gateway.close() // ends open SSE and long-poll responses
server.closeAllConnections()
await new Promise<void>((resolve) => server.close(() => resolve()))
await twain.close()
if (given === undefined) rmSync(dir, { recursive: true, force: true })
console.log('done')
