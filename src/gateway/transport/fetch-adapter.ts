import { HttpStatusError, type GwRequest, type GwResponse } from './http.js'

async function readBody(request: Request, limit: number): Promise<Buffer> {
  if (Number(request.headers.get('content-length') ?? 0) > limit || !request.body) {
    if (!request.body) return Buffer.alloc(0)
    await request.body.cancel()
    throw new HttpStatusError(413, `The body is larger than the limit of ${limit} bytes`)
  }
  const chunks: Buffer[] = []
  let size = 0
  const reader = request.body.getReader()
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.length
    if (size > limit) {
      await reader.cancel()
      throw new HttpStatusError(413, `The body is larger than the limit of ${limit} bytes`)
    }
    chunks.push(Buffer.from(value))
  }
  return Buffer.concat(chunks)
}

/** A gateway request over a Fetch `Request`; aborted when the request's signal or the gateway is. */
export function fromFetch(request: Request, closing: AbortSignal): GwRequest {
  const url = new URL(request.url)
  const raw = /^[a-z][a-z0-9+.-]*:\/\/[^/]*(\/[^?#]*)?/i.exec(request.url)?.[1] ?? url.pathname
  let body: Promise<Buffer> | undefined
  return {
    method: request.method.toUpperCase(),
    url,
    rawPath: raw,
    header: (name) => request.headers.get(name) ?? undefined,
    body: (limit) => (body ??= readBody(request, limit)),
    signal: AbortSignal.any([request.signal, closing]),
  }
}

/** A Fetch `Response` of a gateway response (a streamed one as a `ReadableStream`). */
export function toFetch(r: GwResponse, req: GwRequest, done: (p: Promise<void>) => void): Response {
  const noBody = req.method === 'HEAD' || r.status === 204 || r.status === 304
  if (!r.stream) return new Response(noBody ? null : (r.body ?? ''), { status: r.status, headers: r.headers })
  const stream = r.stream
  const local = new AbortController()
  const signal = AbortSignal.any([req.signal, local.signal])
  const encoder = new TextEncoder()
  let pulled: (() => void) | undefined
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      const run = stream({
        signal,
        write: (chunk) => {
          if (signal.aborted) return false
          controller.enqueue(encoder.encode(chunk))
          return true
        },
        drained: () =>
          (controller.desiredSize ?? 1) > 0 || signal.aborted
            ? Promise.resolve()
            : new Promise<void>((resolve) => {
                // Taken by the reader or aborted, whichever comes first; the other is removed (a
                // listener left per wait would pile up on a long response to a slow reader).
                const done = (): void => {
                  signal.removeEventListener('abort', done)
                  if (pulled === done) pulled = undefined
                  resolve()
                }
                pulled = done
                signal.addEventListener('abort', done, { once: true })
              }),
      }).finally(() => {
        try {
          controller.close()
        } catch {
          // already cancelled by the client
        }
      })
      done(run)
    },
    pull() {
      pulled?.()
      pulled = undefined
    },
    cancel() {
      local.abort()
    },
  })
  return new Response(body, { status: r.status, headers: r.headers })
}
