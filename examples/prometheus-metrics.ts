// Prometheus metrics: an HTTP gateway with twainmq/prometheus (prom-client installed beside
// twainmq) — a group behind on its orders shows its lag in messages and in seconds at /metrics,
// with the gateway's own requests; then it catches up and the lag reads 0.
// Run: npx tsx examples/prometheus-metrics.ts [directory]
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { open } from 'twainmq'
import { createGateway } from 'twainmq/gateway'
import { prometheusMetrics } from 'twainmq/prometheus'

const given = process.argv[2]
const dir = given ?? mkdtempSync(join(tmpdir(), 'twainmq-prometheus-'))
const twain = await open(dir)
await twain.ensureTopic('orders', { partitions: 2 })

// Ten orders placed a minute ago; the billing group handles the first three of each partition.
const producer = twain.producer<{ n: number }>('orders')
const placed = Date.now() - 60_000
for (let n = 0; n < 10; n++) await producer.send(n % 2, { n }, { timestamp: placed + n })
await producer.close()
const billing = twain.consumer<{ n: number }>('orders', { group: 'billing', from: 'start' })
let seen = 0
for await (const m of billing) {
  if (m.offset < 3) m.ack()
  if (++seen === 10) break
}
await billing.commit()
await billing.close()

// The gateway counts its requests into the metrics and serves them at GET /metrics.
const metrics = await prometheusMetrics(twain)
const gateway = createGateway(twain, { metrics })
const server = createServer(gateway.node)
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
console.log(`GET /v1/stream/orders~0 -> ${(await fetch(`${base}/v1/stream/orders~0?offset=-1`)).status}`)

const scrape = async (prefix: string): Promise<string[]> =>
  (await (await fetch(`${base}/metrics`)).text()).split('\n').filter((l) => l.startsWith(prefix))
for (const line of await scrape('twainmq_consumer_lag_')) console.log(line)
for (const line of await scrape('twainmq_gateway_requests_total')) console.log(line)

// Billing catches up: at the next scrape its lag is 0 in messages and in seconds.
const again = twain.consumer<{ n: number }>('orders', { group: 'billing', from: 'start' })
let rest = 0
for await (const m of again) {
  m.ack()
  if (++rest === 4) break
}
await again.commit()
await again.close()
const after = await scrape('twainmq_consumer_lag_messages')
console.log(`after catching up: ${after.map((l) => l.split(' ')[1]).join(', ')}`)

await gateway.close()
server.close()
metrics.close()
await twain.close()
if (given === undefined) rmSync(dir, { recursive: true, force: true })
console.log('done')
