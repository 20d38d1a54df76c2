// The README's TypeScript snippets (except those importing rxjs: readme-rx.ts), as written there.
// Kept in step with the docs by test/unit/type-tests.test.ts; compiled under strict by it (test/types/tsconfig.json).
import { joinStreams, open, session, StalledError, tumbling, windowed } from 'twainmq'
import { context, metrics, trace } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { ConsoleMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics'
import { BasicTracerProvider, BatchSpanProcessor, ConsoleSpanExporter } from '@opentelemetry/sdk-trace-base'
import { ack, batch, filterAck, joinTable, retry, pipe } from 'twainmq/operators'
import { createServer } from 'node:http'
import { createGateway } from 'twainmq/gateway'
import { prometheusMetrics } from 'twainmq/prometheus'

// Order, Job, twain, consumer, save, … : test/types/docs/snippet-names.d.ts

// README.md, ts block 1
export async function block1(): Promise<void> {

  const twain = await open('./data')                      // a directory (created if absent)
  await twain.ensureTopic('orders', { partitions: 3, keyType: 'string' })   // creates it, or checks it

  const producer = twain.producer<{ item: string }, string>('orders')      // values, keys
  await producer.send('alice', { item: 'apple' })          // → { partition, offset }

  for await (const m of twain.history('orders')) console.log(m.partition, m.offset, m.key, m.value)
  for await (const m of twain.tail('orders', { from: 'start' })) { console.log(m.value); break }
  await twain.close()
}

// README.md, ts block 2
export async function block2(): Promise<void> {
  await twain.createTopic('events', {
    partitions: 4,                      // 1..10000, default 1
    keyType: 'u32',                     // u8 | u16 (default) | u32 | u64 (bigint keys) | charN | string
    retention: { maxMessages: 1_000_000, maxAgeMs: 7 * 86_400_000, maxBytes: 1 << 30 },
    maxMessageBytes: 1 << 20,           // key + headers + encoded value, default 1 MiB
    attributes: { owner: 'billing' },   // strings stored with the topic, fixed at creation (not on twainmq-v1)
  })
  await twain.ensureTopic('events', { partitions: 4, keyType: 'u32' })   // exists with these: fine
  await twain.listTopics()              // ['events', …]
  await twain.describeTopic('events')   // { name, partitions, keyType, …, attributes, compact, offsets: [{ partition, start, end }] }
  await twain.length('events')          // messages retained
  await twain.trim('events', { maxMessages: 1000 })        // keep the newest 1000 per partition
  await twain.trim('events', { before: { 0: 500 } })        // drop offsets < 500 of partition 0
  await twain.deleteTopic('events')
}

// README.md, ts block of "Compacted topics"
export async function blockCompacted(): Promise<void> {
  await twain.createTopic('prices', { keyType: 'string', compact: true, tombstoneRetentionMs: 86_400_000 })
  const prices = twain.producer<number | null, string>('prices')
  await prices.send('apple', 120)
  await prices.send('apple', 125)       // 'apple' at 120 goes at the next pass
  await prices.send('pear', null)       // a tombstone: 'pear' is deleted
  const { before, after } = await twain.compactTopic('prices')   // a pass now: records and bytes before and after
  const info = await twain.describeTopic('prices')               // { …, compact: true, tombstoneRetentionMs, lastCompaction }
  console.log(before, after, info)
}

// README.md, ts block 3
export async function block3(): Promise<void> {
  const p = twain.producer<Order>('orders', { lingerMs: 0 })
  await p.send(42, order, { headers: { source: 'web' } })   // → { partition, offset }
  await Promise.all(orders.map((o) => p.send(o.id, o)))     // same tick → one write per partition
  await p.sendBatch([{ key: 1, value: a }, { key: 2, value: b }])  // all checked first: one bad item writes nothing
  await p.flush(); await p.close()
}

// README.md, ts block of "Idempotent sends"
export async function blockIdempotent(): Promise<void> {
  const p = twain.producer<Order>('orders', { dedupWindowMs: 10 * 60_000 })   // default 5 minutes
  await p.send(order.id, order, { id: `order-${order.id}` })          // → { partition: 1, offset: 42 }
  await p.send(order.id, order, { id: `order-${order.id}` })          // → { partition: 1, offset: 42, duplicate: true }
  await p.sendBatch([{ key: 7, value: a, id: 'a-7' }, { key: 8, value: b }])   // ids and plain sends mix
}

// README.md, ts block 6
export async function block6(): Promise<void> {
  const consumer = twain.consumer<Order>('orders', { group: 'billing', from: 'start', maxInFlight: 1000 })
  consumer.on('assigned', (tps) => console.log('now own', tps))
  for await (const m of consumer) {
    try { await bill(m.value); m.ack() }
    catch { m.nack({ delayMs: 1000 }) }       // or m.term('reason') → deadLetter topic
  }
  await consumer.close()                       // drains in-flight acks, commits, leaves the group
}

// README.md, ts block 7
export async function block7(): Promise<void> {
  const worker = twain.consumer<Job>('jobs', {
    group: 'workers', mode: 'shared', name: 'worker-1',   // a stable name: a restart first gets what it held
    claimAfterMs: 30_000, maxDeliveries: 5, deadLetter: 'jobs.dlq',
  })
  for await (const m of worker) {
    try { await run(m.value); m.ack() }                   // acks are batched into few XACKs
    catch { m.nack({ delayMs: 5000 }) }                   // re-delivered through Redis: deliveryCount + 1
  }
}

// README.md, ts block 8
export async function block8(): Promise<void> {

  for await (const m of pipe(consumer, ack(async (m) => save(m.value), { concurrency: 8 }))) {}   // per-key order kept
  for await (const b of pipe(consumer, batch({ size: 100, maxWaitMs: 50 }))) { await bulk(b); b.ack() }
  for await (const r of pipe(consumer, retry(charge, { attempts: 5, backoff: { initialMs: 100, maxMs: 5000, multiplier: 2, jitter: 0.2 } }))) {
    if (!r.ok) console.warn('dead-lettered', r.message.offset, r.error)  // term → the consumer's deadLetter topic
  }
  for await (const m of pipe(consumer, filterAck((m) => m.value.total > 0), ack((m) => save(m.value)))) {}   // what it drops is acked
}

// README.md, ts block 10
export async function block10(): Promise<void> {
  const twain = await open('/srv/legacy-twainmq-root')
  twain.registerType('Order', orderSchema)               // TwainMQ's registered dataclasses
  for await (const m of twain.history('orders')) console.log(m.offset, m.key, m.type, m.value)
  await twain.producer('orders').send(42, { id: 7 }, { type: 'Order' })
}

// README.md, ts block 11
export async function block11(): Promise<void> {
  const twain = await open('redis://localhost:6379')                 // also redis://user:pass@host:port/db, rediss:// (TLS)
  const app = await open('redis://localhost:6379', { prefix: 'app1:' })   // key prefix, default 'twainmq:'
  const big = await open('redis+cluster://10.0.0.1:7000,10.0.0.2:7000')   // a Redis Cluster (any reachable nodes)
}

// README.md, ts block of "Holding messages"
export async function blockHolding(): Promise<void> {
  const sink = twain.consumer<Order>('orders', { group: 'warehouse', maxInFlight: 5000, stallWarningMs: 60_000 })
  sink.on('error', (e) => { if (e instanceof StalledError) log.warn({ held: e.held }, e.message) })
  for await (const b of pipe(sink, batch({ size: 1000, maxWaitMs: 500 }))) { await warehouse.insertMany(b.map((m) => m.value)); b.ack() }
}

// README.md, Producing, Event time
export async function eventTime(): Promise<void> {
  const readings = twain.producer<{ celsius: number }>('readings')
  await readings.send(7, { celsius: 21.5 }, { timestamp: Date.parse('2026-12-01T10:00:00Z') })
  await readings.sendBatch([{ key: 7, value: { celsius: 21.7 }, timestamp: new Date('2026-12-01T10:01:00Z') }])

  // Replay from a time: a group, a running consumer's partition, or a plain read.
  await twain.resetGroup('dashboards', 'readings', { time: Date.now() - 3_600_000 })   // every partition
  await consumer.seek('orders', 0, { time: new Date('2026-12-01T00:00:00Z') })          // resolves once looked up
  for await (const m of twain.history('readings', { from: { time: Date.parse('2026-12-01T10:00:00Z') } })) console.log(m.timestamp)
}

// README.md, Exactly-once processing, ts block 1
export async function exactlyOnce1(): Promise<void> {
  const proc = twain.processor<Order>('orders', { group: 'enrich' })
  for await (const m of proc) {
    if (m.value.total <= 0) { m.ack(); continue }                  // dropped: nothing sent
    await m.send('orders.enriched', m.value.id, { ...m.value, vat: m.value.total * 0.2 })
    m.ack()                                                         // committed once its outputs are stored
  }
}

// README.md, Exactly-once processing, ts block 2
export async function exactlyOnce2(): Promise<void> {
  for await (const m of proc) {
    await pg.query(
      `INSERT INTO enriched (source, total) VALUES ($1, $2)
       ON CONFLICT (source) DO UPDATE SET total = EXCLUDED.total`,   // or DO NOTHING: the first version stands
      [`${m.topic}/${m.partition}/${m.offset}`, m.value.total],
    )
    m.ack()
  }
}

// README.md, State stores, ts block 1
export async function stateStores1(): Promise<void> {
  const counter = twain.processor<Click, string>('clicks', { group: 'counter', state: 'clicks-per-user' })
  for await (const m of counter) {
    const n = (m.state.get<number>(m.key) ?? 0) + 1               // sees the partition's earlier messages' writes
    m.state.set(m.key, n)                                          // stored with the message's outputs, at ack()
    await m.send('click-counts', m.key, n)
    m.ack()
  }
}

// README.md, Windows, ts block 1
export async function windows1(): Promise<void> {
  const proc = twain.processor<Click, string>('clicks', { group: 'clicks-10s', state: 'windows' })
  const counts = windowed(proc, {
    window: tumbling(10_000),                  // or hopping(60_000, 10_000), or session(30_000): see below
    latenessMs: 1000,                          // how far event time may go back
    to: 'clicks-per-10s',                      // each result: key = user, value = { start, end, value }
    lateTo: 'late-clicks',                     // clicks later than that (default: dropped)
    initial: () => 0,
    add: (n, m) => n + 1,
  })
  for await (const r of counts) console.log(r.key, new Date(r.start), r.value)   // once stored
}

// README.md, Windows, ts block 2
export async function windows2(): Promise<void> {
  const proc = twain.processor<Click, string>('clicks', { group: 'visits', state: 'visits' })
  const visits = windowed(proc, {
    window: session(30 * 60_000),            // a visit ends after 30 minutes without a click
    to: 'visits',
    initial: () => ({ clicks: 0, pages: [] as string[] }),
    add: (v, m) => ({ clicks: v.clicks + 1, pages: [...v.pages, m.value.page] }),
    merge: (a, b) => ({ clicks: a.clicks + b.clicks, pages: [...a.pages, ...b.pages] }),
  })
  for await (const v of visits) console.log(v.key, v.value.clicks)
}

// README.md, Windows, ts block 3
export async function windows3(): Promise<void> {
  const proc = twain.processor<Click, string>('clicks', { group: 'clicks-10s', state: 'windows' })
  const counts = windowed(proc, { window: tumbling(10_000), to: 'clicks-per-10s', idleMs: 5000, initial: () => 0, add: (n) => n + 1 })
  for await (const r of counts) console.log(r.key, r.value)
}

// README.md, Tables, ts block 1
export async function tables1(): Promise<void> {
  const customers = twain.table<Customer, string>('customers')
  await customers.ready()                    // holds every record the topic had when table() was called
  customers.get('alice')                     // latest value, or undefined
  customers.has('bob'); customers.size       // whether a key is held; how many
  for (const [id, c] of customers.entries()) console.log(id, c.tier)
  for await (const c of customers.changes()) console.log(c.key, c.previous, '→', c.value)   // null: removed
  await customers.close()
}

// README.md, Tables, ts block 2
export async function tables2(): Promise<void> {
  const customers = twain.table<Customer, string>('customers')
  const placed = twain.processor<OrderPlaced, string>('orders', { group: 'enrich' })
  for await (const j of pipe(placed, joinTable(customers, { key: (m) => m.value.customerId }))) {
    await j.message.send('orders-enriched', j.message.key, { ...j.message.value, tier: j.value?.tier ?? 'basic' })
    j.ack()                                    // settles the message; ack(), retry(), batch() take a Joined too
  }
}

// README.md, Stream–stream joins
export async function streamJoins1(): Promise<void> {
  interface Payment { orderId: number; amount: number }
  const paid = joinStreams<Order, Payment, { id: number; amount: number }, string>(twain, {
    left: 'orders',                            // both topics: the same partition count and key type
    right: 'payments',
    group: 'orders-paid',                      // names its groups, join topic and changelog
    withinMs: 10 * 60_000,                     // a payment at most 10 minutes before or after its order
    latenessMs: 5000,                          // how far each side's event time may go back
    to: 'paid-orders',                         // each pair: key = the key, value = join(order, payment)
    join: (order, payment) => ({ id: order.id, amount: payment.amount }),
  })
  for await (const p of paid) console.log(p.key, p.value, p.leftTime, p.rightTime)   // once stored
}

// README.md, Observability
export async function observability(): Promise<void> {
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(new ConsoleSpanExporter())] }))
metrics.setGlobalMeterProvider(new MeterProvider({ readers: [new PeriodicExportingMetricReader({ exporter: new ConsoleMetricExporter() })] }))

const twain = await open('./data')                          // telemetry on: the API is installed
await twain.ensureTopic('orders', { partitions: 3 })
await trace.getTracer('shop').startActiveSpan('checkout', async (span) => {
  await twain.producer('orders').send(1, { item: 'apple' }) // stores traceparent (and tracestate) in its headers
  span.end()
})
for await (const m of twain.consumer('orders', { group: 'billing' })) {
  m.ack()                                                   // ends its `process orders` span, a child of `checkout`
  break
}
const plain = twain.producer('audit', { propagate: false }) // this producer adds no trace headers
const lag = (await twain.describeGroup('billing')).topics   // [{ topic, partition, committed, end, lag, lagMs }, …]
const quiet = await open('./data', { telemetry: false })    // no spans, headers or metrics
}

// README.md, Observability, Prometheus
export async function prometheus(): Promise<void> {
const twain = await open('./data')
const prom = await prometheusMetrics(twain)                 // or { registry: yourRegistry, processMetrics: true }
createServer((req, res) => (req.url === '/metrics' ? prom.node(req, res) : app(req, res))).listen(9464)
const gateway = createGateway(twain, { metrics: prom })     // counts its requests; serves GET /metrics too
}

// README.md, Observability, Logging
export async function logging(): Promise<void> {
  const twain = await open('./data', { logger: pino() })
}
