/**
 * A lean HTTP client for the gateway bench (node:http, no fetch: undici's per-request cost would
 * hide the servers' differences), and a Durable Streams SSE reader that timestamps arrivals.
 */
import { Agent, request, type IncomingHttpHeaders } from 'node:http'

export interface HttpAnswer {
  status: number
  headers: IncomingHttpHeaders
  body: Buffer
}

/** One keep-alive connection (sequential requests), or `sockets` of them. */
export const keepAlive = (sockets = 1): Agent => new Agent({ keepAlive: true, maxSockets: sockets })

/** Send one request and read the whole answer. */
export function send(
  agent: Agent,
  method: string,
  url: string,
  headers: Record<string, string> = {},
  body?: string | Buffer,
): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method,
        agent,
        headers: body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }))
        res.on('error', reject)
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}

/** `send`, failing unless the status is one of `ok`. */
export async function sendOk(
  agent: Agent,
  method: string,
  url: string,
  ok: number[],
  headers: Record<string, string> = {},
  body?: string | Buffer,
): Promise<HttpAnswer> {
  const r = await send(agent, method, url, headers, body)
  if (!ok.includes(r.status))
    throw new Error(`${method} ${url}: status ${r.status} ${r.body.toString('utf8').slice(0, 200)}`)
  return r
}

/** A live SSE reader of a JSON stream: counts items, timestamps each data event. */
export interface SseClient {
  /** JSON items received so far. */
  items: number
  /** Called with (items in the event, arrival time from performance.now()) for each data event. */
  onData: ((items: unknown[], at: number) => void) | undefined
  /** Resolves once the first control event arrived (the reader is connected and caught up). */
  ready: Promise<void>
  close(): void
}

/**
 * Open `<url>?offset=<offset>&live=sse` on `agent` (for many readers: an agent with enough
 * sockets). JSON data events are parsed, so both servers' readers pay the same client cost.
 * `localAddress` (a loopback address such as 127.0.1.7) makes readers distinct clients to a server
 * that caps live reads per client address.
 */
export function openSse(agent: Agent, url: string, offset: string, localAddress?: string): SseClient {
  let ready!: () => void
  let failed!: (e: Error) => void
  const client: SseClient = {
    items: 0,
    onData: undefined,
    ready: new Promise<void>((resolve, reject) => {
      ready = resolve
      failed = reject
    }),
    close: () => req.destroy(),
  }
  const req = request(`${url}?offset=${encodeURIComponent(offset)}&live=sse`, { agent, localAddress }, (res) => {
    if (res.statusCode !== 200) {
      failed(new Error(`SSE ${url}: status ${res.statusCode}`))
      res.resume()
      return
    }
    res.setEncoding('utf8')
    let buffer = ''
    res.on('data', (chunk: string) => {
      const at = performance.now()
      buffer += chunk
      let end: number
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end)
        buffer = buffer.slice(end + 2)
        const nl = block.indexOf('\n')
        const event = block.slice(0, nl < 0 ? block.length : nl)
        if (event === 'event: control') ready()
        else if (event === 'event: data') {
          const data = block
            .slice(nl + 1)
            .split('\n')
            .map((l) => l.slice(5))
            .join('\n')
          const items = JSON.parse(data) as unknown[]
          client.items += items.length
          client.onData?.(items, at)
        }
      }
    })
    res.on('error', () => undefined)
  })
  req.on('error', (e) => failed(e))
  req.end()
  return client
}
