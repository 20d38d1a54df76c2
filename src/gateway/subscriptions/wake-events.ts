import type { GatewayContext } from '../config/context.js'
import { postStream } from '../handlers/post.js'
import { parseStreamName } from '../stream/names.js'
import type { GwRequest } from '../transport/http.js'

/**
 * Append one JSON event to the stream at `path` as an HTTP client's `POST` would (the stream's
 * content type, closure and producer rules apply): a pull-wake subscription's wake events.
 */
export async function appendEvent(ctx: GatewayContext, path: string, event: Record<string, unknown>): Promise<void> {
  const body = Buffer.from(JSON.stringify(event))
  const target = parseStreamName(path)
  const url = new URL(`http://gateway.internal${ctx.options.basePath}/${path}`)
  const req: GwRequest = {
    method: 'POST',
    url,
    rawPath: url.pathname,
    header: (name) => (name === 'content-type' ? 'application/json' : undefined),
    body: () => Promise.resolve(body),
    signal: ctx.closing,
  }
  const res = await postStream(ctx, req, target)
  if (res.status >= 300) throw new Error(`The wake event was not appended to ${path}: HTTP ${res.status}`)
}
