// OpenTelemetry through the real SDK (in-memory span exporter, a metric reader collected on demand),
// on a directory, Redis and a Redis Cluster: send spans (one per batch written, links to the messages' creation
// contexts), W3C trace context in the headers of sends made inside a span, process spans continuing
// it with ack/nack/term events, a processor's commit span and its outputs' context, the messaging
// metrics, and the consumer lag in messages (exact) and seconds (within 1 s of the records' own
// timestamps), in describeGroup and as observable gauges.
import { SpanKind, SpanStatusCode, type Span } from '@opentelemetry/api'
import type { DataPoint, MetricData } from '@opentelemetry/sdk-metrics'
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Consumer, GroupMessage, Processor, ProcessorMessage, SharedConsumer, Twain } from '../../../src/index.js'
import { backends } from '../../conformance/backends.js'
import { otel, type Otel } from '../../helpers/otel.js'
import { until } from '../../helpers/wait.js'

const kinds = backends().filter((k) => k.name === 'file' || k.name === 'redis' || k.name === 'cluster')

/** Until `c` has handed out `n` messages (non-blocking polls). */
async function takeN<V>(c: Consumer<V> | Processor<V> | SharedConsumer<V>, n: number): Promise<GroupMessage<V>[]> {
  const out: GroupMessage<V>[] = []
  await until(() => (out.push(...c.pollMany(n - out.length)), out.length >= n), 10_000, `${n} messages`)
  return out
}

const traceparentOf = (s: Span | ReadableSpan): string => `00-${s.spanContext().traceId}-${s.spanContext().spanId}-01`

/** Every message of a history. */
async function all<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = []
  for await (const m of it) out.push(m)
  return out
}

function points(m: MetricData | undefined): DataPoint<unknown>[] {
  return (m?.dataPoints ?? []) as DataPoint<unknown>[]
}

describe.each(kinds)('telemetry on $name', (kind) => {
  kind.hooks()
  let o: Otel
  let twain: Twain
  const spans = (name?: string): ReadableSpan[] =>
    o.exporter.getFinishedSpans().filter((s) => name === undefined || s.name === name)
  const inSpan = <T>(name: string, f: (span: Span) => Promise<T>): Promise<T> =>
    o.tracerProvider.getTracer('test').startActiveSpan(name, async (span) => {
      try {
        return await f(span)
      } finally {
        span.end()
      }
    })

  beforeEach(async () => {
    o = otel()
    twain = await kind.store().open({
      telemetry: { tracerProvider: o.tracerProvider, meterProvider: o.meterProvider, processDuration: true },
    })
  })
  afterEach(async () => {
    await twain.close()
    await o.shutdown()
  })

  it('a send inside a span stores its traceparent; the batch is one PRODUCER span with links', async () => {
    await twain.createTopic('orders', { partitions: 1 })
    const producer = twain.producer<string>('orders')
    const request = await inSpan('request', async (span) => {
      await producer.sendBatch(Array.from({ length: 300 }, (_, i) => ({ key: i, value: `v${i}` })))
      return span
    })
    const [first] = await all(twain.history('orders', { limit: 1 }))
    expect(first?.headers['traceparent']).toBe(traceparentOf(request))
    const sends = spans('send orders')
    expect(sends).toHaveLength(1)
    const send = sends[0] as ReadableSpan
    expect(send.kind).toBe(SpanKind.PRODUCER)
    expect(send.parentSpanContext?.spanId).toBe(request.spanContext().spanId)
    expect(send.attributes).toMatchObject({
      'messaging.system': 'twainmq',
      'messaging.destination.name': 'orders',
      'messaging.destination.partition.id': '0',
      'messaging.operation.name': 'send',
      'messaging.operation.type': 'send',
      'messaging.batch.message_count': 300,
      'twainmq.offset': 0,
    })
    // One link per message's creation context, up to the SDK's 128.
    expect(send.links).toHaveLength(128)
    expect(send.links[0]?.context.spanId).toBe(request.spanContext().spanId)
  })

  it('a send outside any span adds no header, and its message no process span unless rootSpans; `propagate: false` adds none', async () => {
    await twain.createTopic('plain', { partitions: 1 })
    await twain.producer<string>('plain').send(0, 'outside')
    await inSpan('request', () => twain.producer<string>('plain', { propagate: false }).send(0, 'off'))
    const read = await all(twain.history('plain'))
    expect(read.map((m) => m.headers)).toEqual([{}, {}])
    expect(spans('send plain')).toHaveLength(2)
    // Consumed, they start no trace of their own (unless `rootSpans`), and are counted all the same.
    const c = twain.consumer<string>('plain', { group: 'g', from: 'start' })
    for (const m of await takeN(c, 2)) m.ack()
    await c.close()
    expect(spans('process plain')).toHaveLength(0)
    const consumed = points((await o.metrics()).get('messaging.client.consumed.messages'))
    expect(consumed.map((p) => p.value)).toEqual([2])
    const processed = points((await o.metrics()).get('messaging.process.duration'))
    expect(processed.map((p) => (p.value as { count: number }).count)).toEqual([2])
    const roots = await kind.store().open({ telemetry: { tracerProvider: o.tracerProvider, rootSpans: true } })
    try {
      await roots.createTopic('plain', { partitions: 1 })
      await roots.producer<string>('plain').send(0, 'outside')
      const r = roots.consumer<string>('plain', { group: 'g', from: 'start' })
      for (const m of await takeN(r, 1)) m.ack()
      await r.close()
    } finally {
      await roots.close()
    }
    const root = spans('process plain')
    expect(root).toHaveLength(1)
    expect(root[0]?.parentSpanContext).toBeUndefined()
    expect(root[0]?.links).toEqual([])
    expect(root[0]?.events.map((e) => e.name)).toEqual(['ack'])
  })

  it('process spans continue the creation context, end at the settlement with its event', async () => {
    await twain.createTopic('jobs', { partitions: 1 })
    const request = await inSpan('request', async (span) => {
      await twain.producer<string>('jobs').sendBatch([
        { key: 0, value: 'a' },
        { key: 0, value: 'b' },
        { key: 0, value: 'c' },
      ])
      return span
    })
    const c = twain.consumer<string>('jobs', { group: 'workers', from: 'start' })
    const [a, b, cc] = await takeN(c, 3)
    a?.ack()
    b?.nack()
    cc?.term('bad')
    const process = spans('process jobs')
    expect(process).toHaveLength(3)
    for (const s of process) {
      expect(s.kind).toBe(SpanKind.CONSUMER)
      expect(s.spanContext().traceId).toBe(request.spanContext().traceId)
      expect(s.parentSpanContext?.spanId).toBe(request.spanContext().spanId)
      expect(s.links.map((l) => l.context.spanId)).toEqual([request.spanContext().spanId])
      expect(s.attributes).toMatchObject({
        'messaging.system': 'twainmq',
        'messaging.destination.name': 'jobs',
        'messaging.destination.partition.id': '0',
        'messaging.consumer.group.name': 'workers',
        'messaging.operation.name': 'process',
        'messaging.operation.type': 'process',
      })
    }
    const byOffset = new Map(process.map((s) => [s.attributes['twainmq.offset'], s]))
    expect([0, 1, 2].map((i) => byOffset.get(i)?.events.map((e) => e.name))).toEqual([['ack'], ['nack'], ['term']])
    expect(byOffset.get(2)?.status.code).toBe(SpanStatusCode.ERROR)
    expect(byOffset.get(2)?.events[0]?.attributes?.['messaging.operation.type']).toBe('settle')
    // The nacked message comes again: a new delivery, a new span.
    const [again] = await takeN(c, 1)
    expect(again?.deliveryCount).toBe(2)
    again?.ack()
    expect(spans('process jobs')).toHaveLength(4)
    await c.close()
    if (!kind.caps.shared) return
    // A shared group's member (Redis) traces its deliveries the same way.
    const shared = twain.consumer<string>('jobs', { group: 'pool', mode: 'shared', from: 'start' })
    for (const m of await takeN(shared, 3)) m.ack()
    await shared.close()
    const pooled = spans('process jobs').filter((s) => s.attributes['messaging.consumer.group.name'] === 'pool')
    expect(pooled).toHaveLength(3)
    for (const s of pooled) {
      expect(s.parentSpanContext?.spanId).toBe(request.spanContext().spanId)
      expect(s.events.map((e) => e.name)).toEqual(['ack'])
    }
  })

  it('a processor commits its outputs in a commit span; they carry the process span as creation context', async () => {
    await twain.createTopic('in', { partitions: 1 })
    await twain.createTopic('out', { partitions: 1 })
    await inSpan('request', () => twain.producer<string>('in').send(0, 'x'))
    const p = twain.processor<string>('in', { group: 'etl', from: 'start' })
    const [m] = (await takeN(p, 1)) as ProcessorMessage<string>[]
    await m?.send('out', 0, 'y')
    m?.ack()
    await p.close()
    const process = spans('process in')
    expect(process).toHaveLength(1)
    const commit = spans('commit out')
    expect(commit).toHaveLength(1)
    expect(commit[0]?.kind).toBe(SpanKind.PRODUCER)
    expect(commit[0]?.attributes).toMatchObject({
      'messaging.consumer.group.name': 'etl',
      'messaging.destination.name': 'out',
      'twainmq.source.topic': 'in',
      'messaging.operation.name': 'commit',
    })
    expect(commit[0]?.links[0]?.context.spanId).toBe(process[0]?.spanContext().spanId)
    const [out] = await all(twain.history('out'))
    expect(out?.headers['traceparent']).toBe(traceparentOf(process[0] as ReadableSpan))
  })

  it('counts sent and consumed messages and records operation and process durations', async () => {
    await twain.createTopic('counted', { partitions: 2 })
    await twain
      .producer<string>('counted')
      .sendBatch(Array.from({ length: 10 }, (_, i) => ({ key: i, value: `v${i}`, partition: i % 2 })))
    const c = twain.consumer<string>('counted', { group: 'g', from: 'start' })
    for (const m of await takeN(c, 10)) m.ack()
    const metrics = await o.metrics()
    const sent = points(metrics.get('messaging.client.sent.messages'))
    expect(sent.map((p) => [p.attributes['messaging.destination.partition.id'], p.value]).sort()).toEqual([
      ['0', 5],
      ['1', 5],
    ])
    expect(sent[0]?.attributes).toMatchObject({ 'messaging.system': 'twainmq', 'messaging.operation.name': 'send' })
    const consumed = points(metrics.get('messaging.client.consumed.messages'))
    expect(consumed.reduce((n, p) => n + (p.value as number), 0)).toBe(10)
    expect(consumed[0]?.attributes['messaging.consumer.group.name']).toBe('g')
    const durations = points(metrics.get('messaging.client.operation.duration'))
    expect(durations.reduce((n, p) => n + (p.value as { count: number }).count, 0)).toBe(2)
    const processed = points(metrics.get('messaging.process.duration'))
    expect(processed.reduce((n, p) => n + (p.value as { count: number }).count, 0)).toBe(10)
    await c.close()
  })

  it('lag in messages is exact and in seconds within 1 s of the records’ timestamps (describeGroup, gauges)', async () => {
    await twain.createTopic('lagged', { partitions: 2 })
    const producer = twain.producer<string>('lagged')
    await producer.sendBatch(Array.from({ length: 3 }, (_, i) => ({ key: i, value: `old${i}`, partition: 0 })))
    // A later batch, so the record at the committed offset is not the newest.
    const firstTs = (await all(twain.history('lagged', { partition: 0 })))[0]?.timestamp as number
    await until(() => Date.now() > firstTs + 20, 5000, 'the clock to move on')
    await producer.sendBatch(Array.from({ length: 4 }, (_, i) => ({ key: i, value: `new${i}`, partition: 0 })))
    const c = twain.consumer<string>('lagged', { group: 'lag', from: 'start', commitIntervalMs: 60_000 })
    const taken = await takeN(c, 2)
    for (const m of taken) m.ack()
    await c.commit()
    const records = await all(twain.history('lagged', { partition: 0 }))
    const oldest = records[2]?.timestamp as number

    const before = Date.now()
    const d = await twain.describeGroup('lag')
    const after = Date.now()
    const row0 = d.topics.find((r) => r.partition === 0)
    const row1 = d.topics.find((r) => r.partition === 1)
    expect(row0).toMatchObject({ committed: 2, end: 7, lag: 5 })
    expect(row0?.lagMs).toBeGreaterThanOrEqual(before - oldest - 1000)
    expect(row0?.lagMs).toBeLessThanOrEqual(after - oldest + 1000)
    expect(row1).toMatchObject({ lag: 0, lagMs: 0 })

    const at = Date.now()
    const metrics = await o.metrics()
    const done = Date.now()
    const lag = points(metrics.get('messaging.consumer.lag'))
    const age = points(metrics.get('messaging.consumer.lag.age'))
    const of = (ps: DataPoint<unknown>[], partition: string) =>
      ps.find((p) => p.attributes['messaging.destination.partition.id'] === partition)
    expect(of(lag, '0')?.value).toBe(5)
    expect(of(lag, '1')?.value).toBe(0)
    expect(of(lag, '0')?.attributes).toMatchObject({
      'messaging.consumer.group.name': 'lag',
      'messaging.destination.name': 'lagged',
    })
    expect(of(age, '0')?.value as number).toBeGreaterThanOrEqual((at - oldest) / 1000 - 1)
    expect(of(age, '0')?.value as number).toBeLessThanOrEqual((done - oldest) / 1000 + 1)
    expect(of(age, '1')?.value).toBe(0)
    await c.close()
  })
})
