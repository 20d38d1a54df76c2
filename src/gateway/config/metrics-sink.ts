/** The kinds of live read a gateway holds open (`GET /v1/live` is the dashboard's). */
export type LiveReadMode = 'long-poll' | 'sse' | 'overview'

/** One answered request, as a {@link GatewayMetricsSink} is told of it. */
export interface ServedRequestSample {
  /**
   * What was asked for, never a stream's name (few values): `stream`, `stream-long-poll`,
   * `stream-sse`, `/v1/topics`, `/v1/groups`, `/v1/live`, `/metrics`, `dashboard`, `preflight`,
   * or `unmatched`.
   */
  route: string
  /** The HTTP method (`other` for one the gateway does not serve). */
  method: string
  status: number
  /** From the request's arrival to the end of its answer's body, in seconds. */
  seconds: number
}

/**
 * Where a gateway reports its requests and live reads, and what it serves at `GET /metrics`:
 * `prometheusMetrics()` of `twainmq/prometheus` makes one (docs/observability.md, "Prometheus").
 */
export interface GatewayMetricsSink {
  /** Called once per request, when its answer's body has ended. */
  observeRequest(sample: ServedRequestSample): void
  /**
   * A gateway reports its open live reads through `count` (read at each scrape) until the
   * returned function is called (by `gateway.close()`).
   */
  attachGateway(count: () => Readonly<Record<LiveReadMode, number>>): () => void
  /** The exposition served at `GET /metrics`. */
  exposition(): Promise<{ contentType: string; body: string }>
}

/** Whether `x` has the methods of a {@link GatewayMetricsSink}. */
export function isMetricsSink(x: unknown): x is GatewayMetricsSink {
  const s = x as Partial<GatewayMetricsSink> | null
  return (
    typeof s === 'object' &&
    s !== null &&
    typeof s.observeRequest === 'function' &&
    typeof s.attachGateway === 'function' &&
    typeof s.exposition === 'function'
  )
}
