import { readFile } from 'node:fs/promises'
import { extname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { HttpStatusError, reply, type GwResponse } from '../transport/http.js'

/*
 * The dashboard's files (built by `npm run build` with vite into dist/ui/), served at
 * `/` and `/assets/<file>` when the gateway's `ui` option is on. Nothing is built at run time.
 */

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
}

const CSP =
  "default-src 'self'; connect-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

/** Where the built dashboard is: dist/ui next to dist/gateway, or (running from src/) the build's dist/ui. */
const CANDIDATES = [new URL('../../ui/', import.meta.url), new URL('../../../dist/ui/', import.meta.url)]

const cache = new Map<string, Buffer>()

/** A dashboard file from `dir` (the `ui` option's directory) or the built one, read once. */
async function load(dir: string | undefined, file: string): Promise<Buffer | undefined> {
  const key = `${dir ?? ''}\0${file}`
  const hit = cache.get(key)
  if (hit) return hit
  const places = dir === undefined ? CANDIDATES.map((c) => fileURLToPath(new URL(file, c))) : [join(dir, file)]
  for (const path of places) {
    try {
      const data = await readFile(path)
      cache.set(key, data)
      return data
    } catch {
      // try the next place
    }
  }
  return undefined
}

/** Whether `path` is a dashboard path (`/`, `/index.html`, `/assets/…`). */
export const isUiPath = (path: string): boolean => path === '/' || path === '/index.html' || path.startsWith('/assets/')

/**
 * Serve one dashboard file (GET/HEAD) from `dir` (else the built dashboard); 404 for an unknown one
 * or when the dashboard was not built.
 */
export async function uiRequest(dir: string | undefined, method: string, path: string): Promise<GwResponse> {
  if (method !== 'GET' && method !== 'HEAD')
    throw new HttpStatusError(405, `Method ${method} is not allowed on the dashboard`, { allow: 'GET, HEAD' })
  const file = path === '/' ? 'index.html' : path.slice(1)
  if (!/^(index\.html|assets\/[A-Za-z0-9_.-]+)$/.test(file) || file.includes('..'))
    throw new HttpStatusError(404, `No dashboard file at ${JSON.stringify(path)}`)
  const data = await load(dir, file)
  if (!data) {
    if (file === 'index.html')
      throw new HttpStatusError(404, 'The dashboard is not built: run `npm run build` (it bundles it into dist/ui/)')
    throw new HttpStatusError(404, `No dashboard file at ${JSON.stringify(path)}`)
  }
  const headers: Record<string, string> = {
    'content-type': TYPES[extname(file)] ?? 'application/octet-stream',
    'cache-control': file === 'index.html' ? 'no-cache' : 'public, max-age=31536000, immutable',
  }
  if (file === 'index.html')
    Object.assign(headers, {
      'content-security-policy': CSP,
      'referrer-policy': 'no-referrer',
      'x-frame-options': 'DENY',
    })
  return reply(200, headers, data)
}
