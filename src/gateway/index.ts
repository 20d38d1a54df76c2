/**
 * `twainmq/gateway`: serve a twainmq store over HTTP with the Durable Streams protocol
 * (docs/gateway.md).
 */
export { createGateway, type Gateway } from './gateway.js'
export type { GatewayOptions } from './config/options.js'
export {
  TokenAuth,
  type AuthDecision,
  type AuthFile,
  type GatewayOperation,
  type TokenEntry,
} from './auth/auth-tokens.js'
export type { AuthorizeHook, AuthorizeRequest } from './auth/authorize.js'
export type { GatewayMetricsSink, LiveReadMode, ServedRequestSample } from './config/metrics-sink.js'
