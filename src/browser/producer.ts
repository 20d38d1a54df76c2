// Appends to a stream with one POST per send (the protocol's plain append). The gateway answers with
// the stream's new tail in Stream-Next-Offset. Sends are queued so they are applied in call order.
import { ClosedError, HttpError } from '../core/errors.js'

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

  /** Appends one value; resolves once the gateway stored it. Rejects with `HttpError` (status in it) when refused. */
  send(value: V): Promise<SendResult> {
    if (this.isClosed) return Promise.reject(new ClosedError(`the producer of ${this.url} is closed`))
    const body = this.encode(value)
    const sent = this.last.then(() => this.post(body))
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

  private async post(body: Body): Promise<SendResult> {
    const res = await this.fetchFn(this.url, {
      method: 'POST',
      headers: { ...this.headers(), 'content-type': this.contentType },
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
