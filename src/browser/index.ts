// twainmq/browser: a client of the twainmq gateway for browsers, Deno, Bun and Node ≥ 20 (fetch).
// No Node built-ins anywhere in its import graph (scripts/check-deps.mjs checks it).
export { connect, TwainBrowserClient } from './connect.js'
export type { ConnectOptions, HistoryOptions, TailOptions } from './connect.js'
export { BrowserMessageStream } from './message-stream.js'
export type { BrowserMessage } from './message.js'
export { BrowserProducer } from './producer.js'
export type { BrowserProducerOptions, SendOptions, SendResult } from './producer.js'
export type { TraceContext } from './trace-context.js'
export type { InteropObservable, InteropObserver, InteropSubscription } from './observable.js'
export {
  AbortError,
  ClosedError,
  ConnectionError,
  HttpError,
  InvalidArgumentError,
  TwainError,
} from '../core/errors.js'
