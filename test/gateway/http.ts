// Raw HTTP for the gateway tests: paths sent exactly as given (fetch would normalise `..`).
import { request } from 'node:http'

export interface RawResponse {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: string
}

export function raw(
  origin: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string | Buffer,
): Promise<RawResponse> {
  const u = new URL(origin)
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, method, path, headers }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }),
      )
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(body)
  })
}

/** Read an SSE response until `done(text so far)` holds; then cancel it. */
export async function readSse(res: Response, done: (text: string) => boolean): Promise<string> {
  const reader = res.body!.getReader()
  const decoder = new TextDecoder()
  let text = ''
  try {
    while (!done(text)) {
      const { done: end, value } = await reader.read()
      if (end) break
      text += decoder.decode(value, { stream: true })
    }
  } finally {
    await reader.cancel().catch(() => undefined)
  }
  return text
}
