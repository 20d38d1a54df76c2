// Trace context across processes: an HTTP POST with a traceparent, through the gateway (a SERVER
// span continuing it, whose context the appended records carry), to a consumer's process span in
// another process: one trace id end to end. And without @opentelemetry/api (the loader finds
// nothing) or with telemetry off, a send inside a span adds no header and records nothing.
import { SpanKind } from '@opentelemetry/api'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { createGateway } from '../../../src/gateway/index.js'
import { InvalidArgumentError, open } from '../../../src/index.js'
import { setOtelLoader } from '../../../src/telemetry/load.js'
import { otel, type Otel } from '../../helpers/otel.js'
import { exited, lines, spawnChild } from '../../helpers/spawn.js'
import { tempDir } from '../../helpers/tmp.js'
import { until } from '../../helpers/wait.js'

const dirs: Array<() => void> = []
afterAll(() => dirs.splice(0).forEach((rm) => rm()))
function dir(): string {
  const t = tempDir('twainmq-otel-')
  dirs.push(t.remove)
  return t.dir
}

let o: Otel
afterEach(async () => {
  setOtelLoader(undefined)
  await o?.shutdown()
})

const TRACE = '0af7651916cd43dd8448eb211c80319c'
const PARENT = 'b7ad6b7169203331'

describe('propagation', () => {
  it('one trace from an HTTP POST with traceparent through the gateway to a process span in another process', async () => {
    o = otel()
    const d = dir()
    const twain = await open(d, { telemetry: { tracerProvider: o.tracerProvider, meterProvider: o.meterProvider } })
    const gateway = createGateway(twain)
    const url = 'http://gateway.test/v1/stream/orders'
    const put = await gateway.fetch(
      new Request(url, { method: 'PUT', headers: { 'content-type': 'application/json' } }),
    )
    expect(put.status).toBe(201)
    const post = await gateway.fetch(
      new Request(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', traceparent: `00-${TRACE}-${PARENT}-01`, tracestate: 'k=v' },
        body: JSON.stringify([{ n: 1 }, { n: 2 }]),
      }),
    )
    expect(post.status).toBe(204)
    const server = o.exporter.getFinishedSpans().filter((s) => s.kind === SpanKind.SERVER && s.name === 'POST')
    expect(server).toHaveLength(1)
    const span = server[0]!
    expect(span.spanContext().traceId).toBe(TRACE)
    expect(span.parentSpanContext?.spanId).toBe(PARENT)
    expect(span.attributes).toMatchObject({
      'http.request.method': 'POST',
      'url.path': '/v1/stream/orders',
      'http.response.status_code': 204,
    })

    const child = spawnChild('otel-consumer.ts', [d, 'orders', 'readers', '2'])
    const out = lines(child)
    const code = await exited(child)
    expect(code, out.stderr()).toBe(0)
    const got = out.lines.map((l) => JSON.parse(l) as Record<string, unknown>)
    expect(got).toHaveLength(2)
    for (const g of got) {
      expect(g).toMatchObject({ name: 'process orders', traceId: TRACE, parentSpanId: span.spanContext().spanId })
      expect(g['links']).toEqual([TRACE])
    }
    await gateway.close()
    await twain.close()
  }, 60_000)

  it('without @opentelemetry/api nothing is added to headers and nothing is recorded', async () => {
    o = otel()
    setOtelLoader(async () => undefined)
    const twain = await open(dir(), {
      telemetry: { tracerProvider: o.tracerProvider, meterProvider: o.meterProvider },
    })
    await twain.createTopic('t')
    await o.tracerProvider.getTracer('test').startActiveSpan('request', async (span) => {
      await twain.producer<string>('t').send(0, 'x')
      await twain.producer<string>('t').sendBatch([{ key: 0, value: 'y' }])
      span.end()
    })
    const c = twain.consumer<string>('t', { group: 'g', from: 'start' })
    const got: Array<Record<string, string>> = []
    await until(
      () => (got.push(...c.pollMany(2).map((m) => (m.ack(), m.headers))), got.length >= 2),
      10_000,
      '2 messages',
    )
    expect(got).toEqual([{}, {}])
    expect(o.exporter.getFinishedSpans().map((s) => s.name)).toEqual(['request'])
    expect((await o.metrics()).size).toBe(0)
    await twain.close()
  })

  it('telemetry: false loads nothing and adds nothing; bad telemetry options are refused by name', async () => {
    o = otel()
    let loads = 0
    setOtelLoader(async () => (loads++, undefined))
    const twain = await open(dir(), { telemetry: false })
    expect(loads).toBe(0)
    await twain.close()
    setOtelLoader(undefined)
    const off = await open(dir(), { telemetry: false })
    await off.createTopic('t')
    await o.tracerProvider.getTracer('test').startActiveSpan('request', async (span) => {
      await off.producer<string>('t').send(0, 'x')
      span.end()
    })
    for await (const m of off.history('t')) expect(m.headers).toEqual({})
    expect(o.exporter.getFinishedSpans().map((s) => s.name)).toEqual(['request'])
    await off.close()
    await expect(open(dir(), { telemetry: { traces: 'yes' as unknown as boolean } })).rejects.toThrow(
      new InvalidArgumentError('telemetry.traces must be a boolean, got "yes"'),
    )
    await expect(open(dir(), { telemetry: { trace: true } as never })).rejects.toBeInstanceOf(InvalidArgumentError)
  })
})
