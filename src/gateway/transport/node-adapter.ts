import type { IncomingMessage, ServerResponse } from 'node:http'
import { HttpStatusError, type GwRequest, type GwResponse } from './http.js'

/** Read a Node request body, refusing (413) one past `limit`; the rest is drained so the answer arrives. */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    let tooLarge = Number(req.headers['content-length'] ?? 0) > limit
    req.on('data', (c: Buffer) => {
      size += c.length
      if (size > limit) tooLarge = true
      if (!tooLarge) chunks.push(c)
    })
    req.on('end', () =>
      tooLarge
        ? reject(new HttpStatusError(413, `The body is larger than the limit of ${limit} bytes`))
        : resolve(Buffer.concat(chunks)),
    )
    req.on('error', reject)
  })
}

/** A gateway request over a Node `IncomingMessage`; aborted when the response closes or the gateway does. */
export function fromNode(req: IncomingMessage, res: ServerResponse, closing: AbortSignal): GwRequest {
  const abort = new AbortController()
  const onClosing = () => abort.abort()
  closing.addEventListener('abort', onClosing, { once: true })
  res.once('close', () => {
    closing.removeEventListener('abort', onClosing)
    abort.abort()
  })
  const rawUrl = req.url ?? '/'
  const secure = (req.socket as { encrypted?: boolean }).encrypted === true
  const url = new URL(
    rawUrl.startsWith('/') ? rawUrl : `/${rawUrl}`,
    `${secure ? 'https' : 'http'}://${req.headers.host ?? 'localhost'}`,
  )
  let body: Promise<Buffer> | undefined
  return {
    method: (req.method ?? 'GET').toUpperCase(),
    url,
    rawPath: rawUrl.split('?')[0] ?? '/',
    clientAddress: req.socket.remoteAddress,
    header: (name) => {
      const v = req.headers[name]
      return Array.isArray(v) ? v.join(', ') : v
    },
    body: (limit) => (body ??= readBody(req, limit)),
    signal: abort.signal,
  }
}

/** Write a gateway response to a Node `ServerResponse` (streamed ones flushed at once, ended when done). */
export async function toNode(r: GwResponse, req: GwRequest, res: ServerResponse): Promise<void> {
  const body = r.body === undefined ? undefined : Buffer.isBuffer(r.body) ? r.body : Buffer.from(r.body, 'utf8')
  if (!r.stream) {
    if (body) r.headers['content-length'] = String(body.length)
    else if (req.method !== 'HEAD' && r.status !== 204 && r.status !== 304) r.headers['content-length'] = '0'
    res.writeHead(r.status, r.headers)
    res.end(req.method === 'HEAD' ? undefined : body)
    return
  }
  res.writeHead(r.status, r.headers)
  res.flushHeaders()
  try {
    await r.stream({
      signal: req.signal,
      write: (chunk) => {
        if (req.signal.aborted || res.destroyed) return false
        res.write(chunk)
        return true
      },
      drained: () =>
        !res.writableNeedDrain || res.destroyed
          ? Promise.resolve()
          : new Promise<void>((resolve) => {
              const done = () => {
                res.off('drain', done)
                res.off('close', done)
                resolve()
              }
              res.on('drain', done)
              res.on('close', done)
            }),
    })
  } finally {
    if (!res.destroyed) res.end()
  }
}
