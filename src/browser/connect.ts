import { InvalidArgumentError } from '../core/errors.js'
import { BrowserMessageStream } from './message-stream.js'
import { BrowserProducer, type BrowserProducerOptions } from './producer.js'
import { parsePosition, type Position } from './tokens.js'
import { askTraceContext, traceHeaders, withoutTraceHeaders, type TraceContext } from './trace-context.js'

/** Options of `connect`. */
export interface ConnectOptions {
  /** Bearer token sent as `Authorization: Bearer <token>` on every request. Default: none. */
  token?: string
  /** More headers for every request (e.g. a tenant id). Default: none. */
  headers?: Record<string, string>
  /** The `fetch` to use (tests, auth layers). Default: `globalThis.fetch`. */
  fetch?: typeof fetch
  /**
   * How long a read keeps retrying while it fails in a row (network errors, 408/429/5xx, the
   * gateway restarting), waiting 100 ms doubling to 2 s between tries, before it ends with
   * `ConnectionError`. Default 60000 (one minute).
   */
  retryMs?: number
  /**
   * The page's trace context, asked for at each send and each time a read (re)connects: its `traceparent` and
   * `tracestate` headers make the gateway's server span a child of the page's span, and the
   * records a send appends carry the trace to the consumers that process them (docs/browser.md,
   * "Tracing"). Return `undefined` to send none. A producer's `send(value, { traceContext })`
   * overrides it. Default: none.
   */
  traceContext?: () => TraceContext | undefined
  /**
   * Share each stream's live read among the pages of this origin that tail it with the same
   * gateway, token and headers (docs/browser.md, "Many tabs"): one page (elected with a Web Lock)
   * holds the one live request and passes the batches to the others on a BroadcastChannel; when it
   * closes, another takes over, and no page sees a gap or a repeat. Each page still reads what it
   * asks for before the live point (its `from`) with plain GETs. Where the page has no Web Locks or
   * no BroadcastChannel, each tail reads on its own. Only `tail` is shared. Default: false.
   */
  shareTabs?: boolean
}

/** Options of `tail`. */
export interface TailOptions {
  /** Where to start: `'start'` (default), `'now'`/`'end'` (only new messages), or a message's `offset` or `resume` token. */
  from?: string
  /** Aborting it ends the read with `AbortError` and aborts the HTTP request. Default: none. */
  signal?: AbortSignal
  /**
   * Keep the stream's messages in the page's IndexedDB (docs/browser.md, "A cache across
   * reloads"): a tail whose `from` the cache holds gets the cached messages at once and reads only
   * what came after; every batch read is stored, up to `maxMessages` per stream (the oldest go
   * first; default 10,000). Pages of the origin that tail with the same gateway, token and
   * headers share it. `true` takes the defaults. Only `tail` reads it (a `history` is not cached).
   * Default: no cache.
   */
  cache?: boolean | { maxMessages?: number }
}

/** Options of `history`. */
export interface HistoryOptions extends TailOptions {
  /** Stop before the first message whose offset is at or after this token. Default: read to the current end. */
  to?: string
  /** Most messages to read. Default: no limit. */
  limit?: number
}

/** A client of a twainmq gateway (`twainmq serve`, `createGateway`), for browsers, Deno, Bun and Node ≥ 20. */
export class TwainBrowserClient {
  /** The streams' base URL, ending in `/` (e.g. `http://127.0.0.1:4437/v1/stream/`). */
  readonly streamsUrl: string
  private readonly fetchFn: typeof fetch | undefined
  private readonly retryMs: number

  /** @internal Use `connect`. */
  constructor(
    baseUrl: string,
    private readonly options: ConnectOptions = {},
  ) {
    this.streamsUrl = streamsUrl(baseUrl)
    this.fetchFn = options.fetch
    this.retryMs = options.retryMs ?? 60_000
    if (!(this.retryMs >= 0))
      throw new InvalidArgumentError(`retryMs must be a number ≥ 0, got ${String(options.retryMs)}`)
    if (options.traceContext !== undefined && typeof options.traceContext !== 'function')
      throw new InvalidArgumentError(
        `traceContext must be a function returning the page's trace context, got ${typeof options.traceContext}`,
      )
  }

  /** A live read of `stream`: every message from `from` on, then new ones as they come; never completes while the stream is open. */
  tail<V = unknown>(stream: string, options: TailOptions = {}): BrowserMessageStream<V> {
    return this.read<V>(
      stream,
      true,
      position(options.from),
      undefined,
      undefined,
      options.signal,
      cacheOf(options.cache),
    )
  }

  /** A finite read of `stream` from `from` (default the start) to `to` or its current end, at most `limit` messages. */
  history<V = unknown>(stream: string, options: HistoryOptions = {}): BrowserMessageStream<V> {
    const { limit } = options
    if (limit !== undefined && !(Number.isSafeInteger(limit) && limit >= 0))
      throw new InvalidArgumentError(`limit must be an integer ≥ 0, got ${String(limit)}`)
    return this.read<V>(stream, false, position(options.from), options.to, limit, options.signal)
  }

  /** A producer appending to `stream` (which must exist, with the same content type). */
  producer<V = unknown>(stream: string, options: BrowserProducerOptions = {}): BrowserProducer<V> {
    const fetchFn = this.fetchFn ?? ((...args: Parameters<typeof fetch>) => fetch(...args))
    return new BrowserProducer<V>(this.url(stream), () => this.headers(), fetchFn, options)
  }

  /** The URL of one stream (a nested path, `events/eu`, keeps its `/` separators). */
  url(stream: string): string {
    if (stream.length === 0) throw new InvalidArgumentError('a stream name must not be empty')
    return `${this.streamsUrl}${stream.split('/').map(encodeURIComponent).join('/')}`
  }

  /** Every request's headers: `headers`, the token, and the page's trace context when given one. */
  private headers(): Record<string, string> {
    const h: Record<string, string> = { ...this.options.headers }
    if (this.options.token !== undefined) h['authorization'] = `Bearer ${this.options.token}`
    const trace = this.options.traceContext
    if (trace === undefined) return h
    const where = 'connect() option traceContext'
    return { ...withoutTraceHeaders(h), ...traceHeaders(askTraceContext(trace, where), where) }
  }

  private read<V>(
    stream: string,
    live: boolean,
    from: Position,
    to: string | undefined,
    limit: number | undefined,
    signal: AbortSignal | undefined,
    cache?: { maxMessages: number },
  ): BrowserMessageStream<V> {
    const url = this.url(stream)
    const shared = live && this.options.shareTabs === true
    const key = shared || cache !== undefined ? shareKey(url, this.options) : undefined
    const plan = {
      stream,
      url,
      from,
      live,
      to,
      limit,
      headers: () => this.headers(),
      fetch: this.fetchFn,
      retryMs: this.retryMs,
      shareKey: shared ? key : undefined,
      cache: cache === undefined ? undefined : { key: key as string, maxMessages: cache.maxMessages },
    }
    return new BrowserMessageStream<V>(plan, signal)
  }
}

/**
 * Connects to a gateway. `baseUrl` is its origin with an optional base path
 * (`http://127.0.0.1:4437`, `https://host/prefix`), or the streams URL `twainmq serve` prints
 * (`http://127.0.0.1:4437/v1/stream/`). No request is made until a read or send.
 */
export function connect(baseUrl: string, options?: ConnectOptions): TwainBrowserClient {
  return new TwainBrowserClient(baseUrl, options)
}

/**
 * The key of a shared tail: its URL and a hash of the credentials it reads with (pages with
 * another token or other headers read on their own).
 */
function shareKey(url: string, options: ConnectOptions): string {
  const text = JSON.stringify([options.token ?? null, options.headers ?? null])
  let a = 0x811c9dc5
  let b = 0x01000193
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    a = Math.imul(a ^ c, 0x01000193)
    b = Math.imul(b ^ c, 0x5bd1e995) ^ (b >>> 15)
  }
  return `${url}#${(a >>> 0).toString(36)}${(b >>> 0).toString(36)}`
}

/** The `cache` option of a tail, checked; undefined: no cache. */
function cacheOf(cache: TailOptions['cache']): { maxMessages: number } | undefined {
  if (cache === undefined || cache === false) return undefined
  if (cache === true) return { maxMessages: 10_000 }
  const max = (cache as { maxMessages?: unknown } | null)?.maxMessages ?? 10_000
  if (typeof cache !== 'object' || !(Number.isSafeInteger(max) && (max as number) >= 1))
    throw new InvalidArgumentError(
      `cache must be true or { maxMessages: an integer ≥ 1 }, got ${JSON.stringify(cache)}`,
    )
  return { maxMessages: max as number }
}

function position(from: string | undefined): Position {
  try {
    return parsePosition(from)
  } catch (e) {
    throw new InvalidArgumentError((e as Error).message)
  }
}

/** The streams URL for a base URL: `<base>/v1/stream/` unless it already ends with `/v1/stream`. */
function streamsUrl(baseUrl: string): string {
  let url: URL
  try {
    url = new URL(baseUrl, (globalThis as { location?: { href: string } }).location?.href)
  } catch {
    throw new InvalidArgumentError(`not a URL: "${baseUrl}"`)
  }
  const path = url.pathname.replace(/\/+$/, '')
  url.pathname = /\/v1\/stream$/.test(path) ? `${path}/` : `${path}/v1/stream/`
  url.search = ''
  url.hash = ''
  return url.toString()
}
