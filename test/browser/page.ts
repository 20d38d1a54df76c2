// Headless Chromium (Debian's, by executablePath) and a static server for the test pages: the
// twainmq/browser bundle, an RxJS bundle and a page that imports both (window.twain, window.rx).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { extname, join } from 'node:path'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'
import { browserEntry, bundle } from './bundle.js'

export const CHROMIUM = process.env['CHROMIUM'] ?? '/usr/bin/chromium'

const HTML = `<!doctype html><html><head><meta charset="utf-8"><title>twainmq browser test</title></head>
<body><ul id="out"></ul><p id="error"></p>
<script type="module">
  window.twain = await import('/twainmq-browser.js')
  window.rx = await import('/rx.js')
  const out = document.getElementById('out')
  window.render = (text) => { const li = document.createElement('li'); li.textContent = text; out.appendChild(li) }
  window.showError = (e) => { document.getElementById('error').textContent = e.name + ' (status ' + e.status + '): ' + e.message }
  let stop = () => {}
  window.clear = () => { stop(); out.textContent = ''; document.getElementById('error').textContent = '' }
  // One tail at a time: renders each value as JSON, a failure into #error; clear() stops it.
  window.startTail = (gateway, stream, token, from) => {
    clear()
    window.tokens = []
    const ac = new AbortController()
    stop = () => ac.abort()
    void (async () => {
      try {
        for await (const m of twain.connect(gateway, { token }).tail(stream, { from, signal: ac.signal })) {
          render(JSON.stringify(m.value))
          window.tokens.push([m.offset, m.resume])
        }
      } catch (e) { if (!ac.signal.aborted) showError(e) }
    })()
  }
  // Latency: each value carries the Node send time { t } (ms since the epoch, high resolution: Node's
  // and the page's performance.timeOrigin + now() read the same host clock); the delay is taken
  // once the value's <li> is in the document.
  window.latencies = []
  window.startLatency = (gateway, stream, token) => {
    clear()
    window.latencies = []
    const ac = new AbortController()
    stop = () => ac.abort()
    void (async () => {
      try {
        for await (const m of twain.connect(gateway, { token }).tail(stream, { from: 'now', signal: ac.signal })) {
          render(String(m.value.i))
          window.latencies.push(performance.timeOrigin + performance.now() - m.value.t)
        }
      } catch (e) { if (!ac.signal.aborted) showError(e) }
    })()
  }
  // A tail shared with the other pages of the origin (connect's shareTabs): its values go to
  // window.seen, the time each arrived (host clock, as in startLatency) to window.arrivals.
  window.seen = []
  window.arrivals = []
  window.startShared = (gateway, stream, token, from) => {
    window.seen = []
    window.arrivals = []
    window.sharedError = undefined
    const ac = new AbortController()
    window.stopShared = () => ac.abort()
    void (async () => {
      try {
        const client = twain.connect(gateway, { token, shareTabs: true })
        for await (const m of client.tail(stream, { from, signal: ac.signal })) {
          window.seen.push(m.value)
          window.arrivals.push(performance.timeOrigin + performance.now())
        }
      } catch (e) { if (!ac.signal.aborted) window.sharedError = String(e) }
    })()
  }
  // A tail with the page's cache (tail's cache option): values to window.seen, and how long the
  // first message took from the call (window.firstMs).
  window.startCached = (gateway, stream, token, maxMessages, retryMs) => {
    window.seen = []
    window.sharedError = undefined
    window.firstMs = undefined
    const ac = new AbortController()
    window.stopShared = () => ac.abort()
    const t0 = performance.now()
    void (async () => {
      try {
        const client = twain.connect(gateway, { token, retryMs })
        for await (const m of client.tail(stream, { cache: { maxMessages }, signal: ac.signal })) {
          if (window.firstMs === undefined) window.firstMs = performance.now() - t0
          window.seen.push(m.value)
        }
      } catch (e) { if (!ac.signal.aborted) window.sharedError = String(e) }
    })()
  }
  // How many messages the cache holds for a stream (read from its IndexedDB directly).
  window.cachedCount = (stream) => new Promise((resolve, reject) => {
    const open = indexedDB.open('twainmq-tail-cache', 1)
    open.onerror = () => reject(open.error)
    open.onsuccess = () => {
      const db = open.result
      if (!db.objectStoreNames.contains('streams')) return resolve(0)
      const all = db.transaction('streams').objectStore('streams').getAll()
      all.onsuccess = () =>
        resolve(all.result.filter((m) => m.key.includes('/v1/stream/' + stream + '#')).reduce((n, m) => n + m.next - m.first, 0))
      all.onerror = () => reject(all.error)
    }
  })
  window.ready = true
</script></body></html>`

/** Builds the page's files into `dir`. */
export async function buildPage(dir: string): Promise<void> {
  mkdirSync(dir, { recursive: true })
  await bundle(browserEntry, dir, 'twainmq-browser')
  await bundle(join(import.meta.dirname, 'page-rx.ts'), dir, 'rx')
  writeFileSync(join(dir, 'index.html'), HTML)
}

const TYPES: Record<string, string> = { '.html': 'text/html', '.js': 'text/javascript' }

/** Serves the files of `dir` on a free loopback port. */
export async function servePage(dir: string): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const name = (req.url ?? '/').split('?')[0] === '/' ? 'index.html' : (req.url ?? '').slice(1).split('?')[0]!
    if (!/^[\w.-]+$/.test(name)) return void res.writeHead(404).end()
    try {
      const body = readFileSync(join(dir, name))
      res.writeHead(200, { 'content-type': TYPES[extname(name)] ?? 'application/octet-stream' }).end(body)
    } catch {
      res.writeHead(404).end()
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () => {
      server.closeAllConnections()
      return new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

/** The texts of the page's `#out li` items. */
export function rendered(page: Page): Promise<string[]> {
  return page.$$eval('#out li', (items) => items.map((li) => li.textContent ?? ''))
}

/** Launches headless Chromium. */
export function launch(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'], headless: true })
}

/** A new page at `url` with twain and rx loaded (in a context of its own, or in `context` with its other pages). */
export async function openPage(browser: Browser | BrowserContext, url: string): Promise<Page> {
  const page = await browser.newPage()
  await page.goto(url)
  await page.waitForFunction('window.ready === true', undefined, { timeout: 10_000 })
  return page
}
