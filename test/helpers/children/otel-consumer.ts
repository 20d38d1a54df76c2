// A consumer in its own process with the OpenTelemetry SDK (in-memory export): takes `n` messages
// of `topic` as group `group`, acks them, and prints each data message's process span as a JSON
// line { offset, traceId, parentSpanId, links } (the gateway's control records are acked unprinted).
//   tsx otel-consumer.ts <dir> <topic> <group> <n>
import { open } from '../../../src/index.js'
import { otel } from '../otel.js'

const [dir, topic, group, count] = process.argv.slice(2) as [string, string, string, string]
const o = otel()
const twain = await open(dir, { telemetry: { tracerProvider: o.tracerProvider, meterProvider: o.meterProvider } })
const consumer = twain.consumer(topic, { group, from: 'start' })
let n = 0
for await (const m of consumer) {
  m.ack()
  if (m.type?.startsWith('ds.')) continue
  const span = o.exporter.getFinishedSpans().find((s) => s.attributes['twainmq.offset'] === m.offset)
  console.log(
    JSON.stringify({
      offset: m.offset,
      name: span?.name,
      traceId: span?.spanContext().traceId,
      parentSpanId: span?.parentSpanContext?.spanId,
      links: span?.links.map((l) => l.context.traceId),
    }),
  )
  if (++n >= Number(count)) break
}
await twain.close()
await o.shutdown()
