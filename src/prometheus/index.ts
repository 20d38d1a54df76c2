/**
 * `twainmq/prometheus`: twainmq's figures as Prometheus metrics with `prom-client`, an optional
 * peer dependency (docs/observability.md, "Prometheus").
 */
export { prometheusMetrics, type PrometheusMetrics, type PrometheusMetricsOptions } from './prometheus.js'
export type { GatewayMetricsSink, LiveReadMode, ServedRequestSample } from '../gateway/config/metrics-sink.js'
