// Appends to a stream with one POST per send (the protocol's plain append). The gateway answers with
// the stream's new tail in Stream-Next-Offset. Sends are queued so they are applied in call order.
import { ClosedError, HttpError } from '../core/errors.js'
import { traceHeaders, withoutTraceHeaders, type TraceContext } from './trace-context.js'

/** Options of `TwainBrowserClient.producer`. */
export interface BrowserProducerOptions {
  /**
   * Content type of the appends; it must match the stream's. Default `'application/json'`: each
   * `send(value)` is one message with `value` as JSON (a `string` value is sent as a JSON string).
   * For `text/*` a value is sent as it is (strings); for other types strings and bytes are sent as
   * they are.
   */
  contentType?: string
}

/** Options of one `send`. */
export interface SendOptions {
  /**
   * The trace context of this append (the span the page is in), instead of the client's
   * `traceContext`; `null` sends none. Default: the client's.
   */
  traceContext?: TraceContext | null
}

/** What `send` resolves with. */
export interface SendResult {
  /** The stream's tail after this append (Stream-Next-Offset): reading from it starts after it. */
  offset: string
}

type Body = string | Uint8Array

/** Appends values to one stream over HTTP. */
export class BrowserProducer<V = unknown> {
  private last: Promise<unknown> = Promise.resolve()
  private isClosed = false
  private readonly contentType: string

  /** @internal Made by `TwainBrowserClient.producer`. */
  constructor(
    private readonly url: string,
    private readonly headers: () => Record<string, string>,
    private readonly fetchFn: typeof fetch,
    options: BrowserProducerOptions,
  ) {
    this.contentType = options.contentType ?? 'application/json'
  }

  /**
   * Appends one value; resolves once the gateway stored it. Rejects with `HttpError` (status in
   * it) when refused. The trace context is taken now (not when an earlier send has finished).
   */
  send(value: V, options: SendOptions = {}): Promise<SendResult> {
    if (this.isClosed) return Promise.reject(new ClosedError(`the producer of ${this.url} is closed`))
    const body = this.encode(value)
    let headers: Record<string, string>
    try {
      headers = this.requestHeaders(options)
    } catch (e) {
      return Promise.reject(e as Error)
    }
    const sent = this.last.then(() => this.post(body, headers))
    this.last = sent.catch(() => undefined)
    return sent
  }

  /** Waits for the sends in flight; later sends reject with `ClosedError`. */
  async close(): Promise<void> {
    this.isClosed = true
    await this.last
  }

  private encode(value: V): Body {
    if (this.contentType.includes('application/json')) return JSON.stringify([value])
    if (typeof value === 'string' || value instanceof Uint8Array) return value
    throw new TypeError(`a ${this.contentType} producer sends strings or Uint8Array values, not ${typeof value}`)
  }

  /** The client's headers, with this send's trace context in place of the client's when it has one. */
  private requestHeaders(options: SendOptions): Record<string, string> {
    const own = options.traceContext
    if (own === undefined) return { ...this.headers(), 'content-type': this.contentType }
    const rest = withoutTraceHeaders(this.headers())
    return {
      ...rest,
      ...traceHeaders(own ?? undefined, 'send() option traceContext'),
      'content-type': this.contentType,
    }
  }

  private async post(body: Body, headers: Record<string, string>): Promise<SendResult> {
    const res = await this.fetchFn(this.url, {
      method: 'POST',
      headers,
      body: body as NonNullable<RequestInit['body']>,
    })
    if (!res.ok) {
      const text = (await res.text().catch(() => '')).trim()
      throw new HttpError(`HTTP ${res.status} from POST ${this.url}${text ? `: ${text}` : ''}`, {
        status: res.status,
        url: this.url,
      })
    }
    await res.body?.cancel()
    return { offset: res.headers.get('stream-next-offset') ?? '' }
  }
}
