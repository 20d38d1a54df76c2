// A webhook receiver for the subscription tests: an HTTP server on a free loopback port that keeps
// every request (body parsed, signature header) and answers as the test says.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface Received {
  body: {
    subscription_id: string
    wake_id: string
    generation: number
    streams: Array<{ path: string; acked_offset: string; tail_offset: string; has_pending: boolean }>
    callback_url: string
    callback_token: string
  }
  raw: string
  signature: string | undefined
}

export interface Receiver {
  url: string
  requests: Received[]
  /** The status and JSON body of the answer to the n-th request (0-based). */
  answer: (n: number) => { status: number; body?: unknown }
  close(): Promise<void>
}

export async function startReceiver(answer: Receiver['answer'] = () => ({ status: 200 })): Promise<Receiver> {
  const requests: Received[] = []
  const r: Receiver = { url: '', requests, answer, close: () => Promise.resolve() }
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8')
      const n = requests.length
      requests.push({
        body: JSON.parse(raw) as Received['body'],
        raw,
        signature: req.headers['webhook-signature'] as string,
      })
      const a = r.answer(n)
      res.writeHead(a.status, { 'content-type': 'application/json' }).end(JSON.stringify(a.body ?? {}))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`
  r.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    })
  return r
}
