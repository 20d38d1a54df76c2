import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Metric, Registry } from 'prom-client'
import { InvalidArgumentError } from '../core/errors.js'
import { checkKnownKeys } from '../core/names.js'
import { backendOf, type Twain } from '../facade/twain.js'
import type { GatewayMetricsSink, LiveReadMode, ServedRequestSample } from '../gateway/config/metrics-sink.js'
import { GatewayMetrics } from './gateway-metrics.js'
import { loadProm } from './load.js'
import { StoreMetrics } from './store-metrics.js'

const MISNAMED_DEFAULTS = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
]

/** Options of {@link prometheusMetrics}. */
export interface PrometheusMetricsOptions {
  /**
   * The `prom-client` registry to register twainmq's metrics in, beside the application's own.
   * @default a new registry of its own
   */
  registry?: Registry
  /**
   * Also collect prom-client's default process metrics (CPU, memory, event-loop lag, open
   * handles; without the three gauges prom-client names `…_total`, a suffix Prometheus keeps for
   * counters) into the registry. `twainmq serve --metrics` turns it on. @default false
   */
  processMetrics?: boolean
}

/**
 * twainmq's Prometheus metrics over one store (docs/observability.md, "Prometheus"): topics'
 * offsets, groups' lag in messages and seconds, read from the store at each scrape; and, when
 * given to `createGateway(twain, { metrics })`, the gateway's requests and live reads.
 */
export interface PrometheusMetrics extends GatewayMetricsSink {
  /** The registry holding the metrics. */
  readonly registry: Registry
  /** The exposition's content type (Prometheus text format 0.0.4). */
  readonly contentType: string
  /** The exposition now (reads the store). */
  metrics(): Promise<string>
  /** A Node `(req, res)` handler answering with the exposition (mount it at `/metrics` of your server). */
  readonly node: (req: IncomingMessage, res: ServerResponse) => void
  /** A Fetch handler answering with the exposition. */
  readonly fetch: (request: Request) => Promise<Response>
  /** Take twainmq's metrics out of the registry (the application's own stay). Idempotent. */
  close(): void
}

/**
 * Make twainmq's Prometheus metrics over `twain`'s store, with `prom-client` (an optional peer
 * dependency: a `TwainError` `ERR_MISSING_PACKAGE` when the application does not have it).
 * @example
 * ```ts
 * const metrics = await prometheusMetrics(twain)
 * http.createServer((req, res) => (req.url === '/metrics' ? metrics.node(req, res) : app(req, res)))
 * ```
 */
export async function prometheusMetrics(
  twain: Twain,
  options: PrometheusMetricsOptions = {},
): Promise<PrometheusMetrics> {
  checkKnownKeys('prometheusMetrics()', options as Record<string, unknown>, ['registry', 'processMetrics'])
  if (options.processMetrics !== undefined && typeof options.processMetrics !== 'boolean')
    throw new InvalidArgumentError(`processMetrics must be a boolean, got ${JSON.stringify(options.processMetrics)}`)
  const store = backendOf(twain) // refuses what is not a Twain
  const prom = await loadProm()
  const registry = options.registry ?? new prom.Registry()
  if (typeof (registry as Partial<Registry>).registerMetric !== 'function')
    throw new InvalidArgumentError('registry must be a prom-client Registry')
  // Every metric is named in `registered` as it is registered, so a failure part-way (a registry
  // that already holds one of them) takes out exactly what this call put in.
  const registered: string[] = []
  const register = (metric: Metric) => {
    registry.registerMetric(metric)
    registered.push((metric as unknown as { name: string }).name)
  }
  const undo = () => {
    for (const name of registered.splice(0)) registry.removeSingleMetric(name)
  }
  let gateway: GatewayMetrics
  try {
    new StoreMetrics(prom, register, store)
    gateway = new GatewayMetrics(prom, register)
  } catch (e) {
    undo()
    throw new InvalidArgumentError(
      `prometheusMetrics(): the registry already holds twainmq's metrics (one prometheusMetrics() per registry): ${(e as Error).message}`,
      { cause: e },
    )
  }
  if (options.processMetrics === true) {
    const before = new Set(registry.getMetricsAsArray().map((m) => m.name))
    try {
      prom.collectDefaultMetrics({ register: registry })
    } catch (e) {
      for (const m of registry.getMetricsAsArray()) if (!before.has(m.name)) registry.removeSingleMetric(m.name)
      undo()
      throw new InvalidArgumentError(
        `prometheusMetrics(): processMetrics, but the registry already holds prom-client's process metrics (leave processMetrics off): ${(e as Error).message}`,
        { cause: e },
      )
    }
    for (const m of registry.getMetricsAsArray()) if (!before.has(m.name)) registered.push(m.name)
    // Gauges named like counters, which Prometheus's naming rules (and `promtool check metrics`)
    // refuse; the same figures stay as nodejs_active_handles, _requests and _resources.
    for (const name of MISNAMED_DEFAULTS) registry.removeSingleMetric(name)
  }
  let closed = false
  const exposition = async () => ({ contentType: registry.contentType, body: await registry.metrics() })
  const node = (_req: IncomingMessage, res: ServerResponse) => {
    exposition().then(
      ({ contentType, body }) =>
        res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' }).end(body),
      (e: unknown) =>
        res
          .writeHead(500, { 'content-type': 'text/plain; charset=utf-8' })
          .end(`Metrics failed: ${(e as Error)?.message ?? String(e)}\n`),
    )
  }
  return {
    registry,
    get contentType() {
      return registry.contentType
    },
    metrics: () => registry.metrics(),
    node,
    fetch: async () => {
      const { contentType, body } = await exposition()
      return new Response(body, { status: 200, headers: { 'content-type': contentType, 'cache-control': 'no-store' } })
    },
    exposition,
    observeRequest: (s: ServedRequestSample) => gateway.observe(s),
    attachGateway: (count: () => Readonly<Record<LiveReadMode, number>>) => gateway.attach(count),
    close() {
      if (closed) return
      closed = true
      undo()
    },
  }
}
