// twainmq in the browser: one server for the gateway (/v1/stream/…) and a page whose RxJS pipeline
// tails a topic that a Node producer writes (tail → filter → scan → bufferTime → render).
// Run: npm run example:browser   (then open the printed URL; Ctrl-C stops)
//      npm run example:browser -- --check   (CI: opens the page in headless Chromium, checks it, exits)
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { open } from 'twainmq'
import { createGateway } from 'twainmq/gateway'
import { build } from 'vite'

const here = dirname(fileURLToPath(import.meta.url))
const check = process.argv.includes('--check')
const port = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? (check ? 0 : 4438))
const dir = mkdtempSync(join(tmpdir(), 'twainmq-browser-example-'))

// Bundle the page's script (twainmq/browser + the rxjs operators it uses) once, at start.
const out = join(dir, 'page')
await build({
  configFile: false,
  logLevel: 'warn',
  root: here,
  build: {
    outDir: out,
    emptyOutDir: false,
    minify: true,
    target: 'es2022',
    lib: { entry: join(here, 'page.ts'), formats: ['es'], fileName: () => 'page.js' },
  },
})
// page.js and the chunks it loads on demand (the tab share and the cache of twainmq/browser).
const files: Record<string, [string, Buffer]> = { '/': ['text/html', readFileSync(join(here, 'index.html'))] }
for (const name of readdirSync(out))
  if (name.endsWith('.js')) files[`/${name}`] = ['text/javascript', readFileSync(join(out, name))]

// The store, a topic, and the gateway on the same origin as the page (no CORS needed).
const twain = await open(join(dir, 'store'))
await twain.createTopic('prices')
const gateway = createGateway(twain)
const server = createServer((req, res) => {
  if (req.url?.startsWith('/v1/stream/')) return gateway.node(req, res)
  const file = files[req.url?.split('?')[0] ?? '/']
  if (!file) return void res.writeHead(404).end()
  res.writeHead(200, { 'content-type': file[0] }).end(file[1])
})
await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
console.log(`page at ${url} (gateway at ${url}v1/stream/prices)`)

// A Node producer: 40 prices, every other one at least 100 cents, then (unless --check) one every 200 ms.
const skus = ['apple', 'bread', 'milk', 'tea']
const producer = twain.producer<{ sku: string; cents: number }>('prices')
for (let i = 0; i < 40; i++) await producer.send(0, { sku: skus[i % 4]!, cents: i % 2 === 0 ? 50 : 100 + i })

// The stock: a compacted State Protocol stream, 25 levels per product, then one product removed;
// compacted now (the gateway would within 30 s), so a page downloads 3 events, not 101.
const stock = `${url}v1/stream/stock`
const stockEvent = (sku: string, level: number | undefined) => ({
  type: 'stock',
  key: sku,
  ...(level === undefined ? {} : { value: { sku, level } }),
  headers: { operation: level === undefined ? 'delete' : 'upsert' },
})
const appendStock = (events: unknown[]) =>
  fetch(stock, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(events) })
await fetch(stock, { method: 'PUT', headers: { 'content-type': 'application/json', 'stream-compaction': 'state' } })
for (let round = 0; round < 25; round++) await appendStock(skus.map((sku, i) => stockEvent(sku, 100 - round * (i + 1))))
await appendStock([stockEvent('bread', undefined)])
await twain.compactTopic('stock')

let n = 40
const timer = check
  ? undefined
  : setInterval(() => {
      void producer.send(0, { sku: skus[n % 4]!, cents: 50 + ((n++ * 37) % 200) })
      if (n % 5 === 0) void appendStock([stockEvent(skus[n % 4] === 'bread' ? 'tea' : skus[n % 4]!, n % 97)])
    }, 200)

async function shutdown(): Promise<void> {
  if (timer) clearInterval(timer)
  await gateway.close()
  server.closeAllConnections()
  await new Promise<void>((resolve) => server.close(() => resolve()))
  await twain.close()
  rmSync(dir, { recursive: true, force: true })
}

if (check) {
  // 20 prices are ≥ 100 cents: 101 + 103 + … + 139 = 2400.
  const { chromium } = await import('playwright-core')
  const browser = await chromium.launch({
    executablePath: process.env['CHROMIUM'] ?? '/usr/bin/chromium',
    args: ['--no-sandbox'],
  })
  try {
    // Two tabs of one browser (one context): they share the live read, and each has the cache.
    const context = await browser.newContext()
    const counted = (p: Awaited<ReturnType<typeof context.newPage>>) =>
      p.waitForFunction(
        () =>
          (
            globalThis as unknown as { document: { getElementById(id: string): { textContent: string } } }
          ).document.getElementById('count').textContent === '20',
        undefined,
        { timeout: 20_000 },
      )
    const page = await context.newPage()
    await page.goto(url)
    await counted(page)
    const second = await context.newPage()
    await second.goto(url)
    await counted(second)
    const text = async (p: typeof page, id: string): Promise<string> => (await p.textContent(`#${id}`)) ?? ''
    console.log(
      `page counted ${await text(page, 'count')} prices >= 100 cents, total ${await text(page, 'total')}, last ${await text(page, 'last')}; error: "${await text(page, 'error')}"`,
    )
    console.log(`second tab counted ${await text(second, 'count')}, total ${await text(second, 'total')}`)
    await second.reload()
    await counted(second)
    console.log(`after a reload, from its cache: ${await text(second, 'count')}, total ${await text(second, 'total')}`)
    await page.waitForFunction(
      () =>
        (
          globalThis as unknown as { document: { getElementById(id: string): { textContent: string } } }
        ).document.getElementById('stock-count').textContent === '3',
      undefined,
      { timeout: 20_000 },
    )
    console.log(`stock (StreamDB): ${await text(page, 'stock')}; error: "${await text(page, 'error')}"`)
  } finally {
    await browser.close()
    await shutdown()
  }
} else {
  process.once('SIGINT', () => void shutdown().then(() => process.exit(0)))
}
