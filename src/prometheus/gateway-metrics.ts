import type { Counter, Gauge, Histogram, Metric } from 'prom-client'
import type { LiveReadMode, ServedRequestSample } from '../gateway/config/metrics-sink.js'
import type { Prom } from './load.js'

/** Request durations' buckets, in seconds: quick appends and catch-up reads to long-polls and SSE streams. */
export const DURATION_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120]

const MODES: readonly LiveReadMode[] = ['long-poll', 'sse', 'overview']

/** The HTTP gateways' figures: requests by route, method and status with their durations, and open live reads. */
export class GatewayMetrics {
  private readonly requests: Counter
  private readonly durations: Histogram
  private readonly live: Gauge
  private readonly gateways = new Set<() => Readonly<Record<LiveReadMode, number>>>()

  constructor(prom: Prom, register: (metric: Metric) => void) {
    const labelNames = ['route', 'method', 'status']
    this.requests = new prom.Counter({
      name: 'twainmq_gateway_requests_total',
      help: 'HTTP requests the gateway answered, by route (never a stream name), method and status.',
      labelNames,
      registers: [],
    })
    this.durations = new prom.Histogram({
      name: 'twainmq_gateway_request_duration_seconds',
      help: "From a request's arrival to the end of its answer (a long-poll's wait and an SSE stream's life included).",
      labelNames,
      buckets: DURATION_BUCKETS,
      registers: [],
    })
    const gateways = this.gateways
    const live: Gauge = new prom.Gauge({
      name: 'twainmq_gateway_live_readers',
      help: 'Live reads the gateway holds open: long-poll, sse, and overview (dashboards on /v1/live).',
      labelNames: ['mode'],
      registers: [],
      collect() {
        for (const mode of MODES) {
          let n = 0
          for (const count of gateways) n += count()[mode]
          live.set({ mode }, n)
        }
      },
    })
    this.live = live
    for (const m of [this.requests, this.durations, this.live]) register(m)
  }

  observe(s: ServedRequestSample): void {
    const labels = { route: s.route, method: s.method, status: String(s.status) }
    this.requests.inc(labels)
    this.durations.observe(labels, s.seconds)
  }

  attach(count: () => Readonly<Record<LiveReadMode, number>>): () => void {
    const entry = () => count()
    this.gateways.add(entry)
    return () => void this.gateways.delete(entry)
  }
}
