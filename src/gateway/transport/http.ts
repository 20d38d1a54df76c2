/** The gateway's transport-neutral request and response (the Node and Fetch adapters map onto these). */

export interface GwRequest {
  method: string
  url: URL
  /** The raw path as sent (before URL normalisation), to refuse encoded separators. */
  rawPath: string
  /** A header value (name in lower case), or undefined. */
  header(name: string): string | undefined
  /** The body, refused with {@link HttpStatusError} 413 past the limit. */
  body(limit: number): Promise<Buffer>
  /** Aborted when the client goes away or the gateway closes. */
  signal: AbortSignal
  /** The peer's address (the Node handler), if known. */
  clientAddress?: string
  /** Who the request's token stands for, once the token check passed. */
  principal?: string
}

/** Writes events of a streamed response; `write` returns false once the client is gone. */
export interface Sink {
  write(chunk: string): boolean
  /** Resolves when the client has taken what was written (backpressure: a slow reader is not buffered without bound). */
  drained(): Promise<void>
  readonly signal: AbortSignal
}

export interface GwResponse {
  status: number
  headers: Record<string, string>
  body?: Buffer | string
  /** A streamed body (SSE): resolves when the response should end. */
  stream?: (sink: Sink) => Promise<void>
}

/** An HTTP error answer: status and a plain-text body naming the problem. */
export class HttpStatusError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message)
    this.name = 'HttpStatusError'
  }
}

export const reply = (status: number, headers: Record<string, string> = {}, body?: Buffer | string): GwResponse => ({
  status,
  headers,
  body,
})

export const errorReply = (e: HttpStatusError): GwResponse =>
  reply(e.status, { 'content-type': 'text/plain; charset=utf-8', ...e.headers }, `${e.message}\n`)
