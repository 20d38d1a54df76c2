import { context } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { MeterProvider, MetricReader, type MetricData } from '@opentelemetry/sdk-metrics'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'

/** A metric reader collected on demand (the test asks for the metrics when it wants them). */
class PullReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

/** The OpenTelemetry SDK with in-memory export: what `open({ telemetry })` is given in tests. */
export interface Otel {
  exporter: InMemorySpanExporter
  tracerProvider: BasicTracerProvider
  meterProvider: MeterProvider
  /** Every metric collected now, by name. */
  metrics(): Promise<Map<string, MetricData>>
  shutdown(): Promise<void>
}

let contextManager: AsyncLocalStorageContextManager | undefined

/** Set up the SDK (and, once per process, the global context manager spans are made active with). */
export function otel(): Otel {
  if (contextManager === undefined) {
    contextManager = new AsyncLocalStorageContextManager().enable()
    context.setGlobalContextManager(contextManager)
  }
  const exporter = new InMemorySpanExporter()
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
  const reader = new PullReader()
  const meterProvider = new MeterProvider({ readers: [reader] })
  return {
    exporter,
    tracerProvider,
    meterProvider,
    metrics: async () => {
      const { resourceMetrics } = await reader.collect()
      const out = new Map<string, MetricData>()
      for (const s of resourceMetrics.scopeMetrics) for (const m of s.metrics) out.set(m.descriptor.name, m)
      return out
    },
    shutdown: async () => {
      await tracerProvider.shutdown()
      await meterProvider.shutdown()
    },
  }
}
