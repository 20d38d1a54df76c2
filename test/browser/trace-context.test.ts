// One trace from a page in a real headless Chromium to a consumer in another process: the page's
// twainmq/browser producer sends its trace context (`traceContext`) with a cross-origin POST
// (preflighted: traceparent is not a safelisted header), the gateway's SERVER span continues it
// and the appended records carry it, and a consumer with the OpenTelemetry SDK in a child process
// processes each record in a span of the same trace, a child of the gateway's span.
import { SpanKind } from '@opentelemetry/api'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Browser, Page } from 'playwright-core'
import type * as TwainBrowser from '../../src/browser/index.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createGateway, type Gateway } from '../../src/gateway/index.js'
import { open, type Twain } from '../../src/index.js'
import { otel, type Otel } from '../helpers/otel.js'
import { exited, lines, spawnChild } from '../helpers/spawn.js'
import { tempDir } from '../helpers/tmp.js'
import { buildPage, launch, openPage, servePage } from './page.js'

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736'
const PAGE_SPAN = '00f067aa0ba902b7'

const files = tempDir('twainmq-browser-trace-page-')
const store = tempDir('twainmq-browser-trace-store-')
let browser: Browser
let site: Awaited<ReturnType<typeof servePage>>
let page: Page
let o: Otel
let twain: Twain
let gateway: Gateway
let server: Server

beforeAll(async () => {
  await buildPage(files.dir)
  site = await servePage(files.dir)
  browser = await launch()
  page = await openPage(browser, site.url)
  o = otel()
  twain = await open(store.dir, { telemetry: { tracerProvider: o.tracerProvider, meterProvider: o.meterProvider } })
  gateway = createGateway(twain, { cors: '*' })
  server = createServer(gateway.node)
  server.keepAliveTimeout = 60_000
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
}, 60_000)

afterAll(async () => {
  await page?.close()
  await browser?.close()
  await site?.close()
  await gateway?.close()
  server?.closeAllConnections()
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()))
  await twain?.close()
  await o?.shutdown()
  files.remove()
  store.remove()
})

describe("the page's trace context, from Chromium to a consumer in another process", () => {
  it('one trace id from the browser POST through the gateway to the process spans', async () => {
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    const put = await fetch(`${base}/v1/stream/orders`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
    })
    expect(put.status).toBe(201)
    const offsets = await page.evaluate(
      async ([gw, traceparent]) => {
        const t = (globalThis as unknown as { twain: typeof TwainBrowser }).twain
        const client = t.connect(gw as string, {
          traceContext: () => ({ traceparent: traceparent as string, tracestate: 'shop=page' }),
        })
        const producer = client.producer<{ n: number }>('orders')
        const a = await producer.send({ n: 1 })
        const b = await producer.send({ n: 2 })
        await producer.close()
        return [a.offset, b.offset]
      },
      [base, `00-${TRACE}-${PAGE_SPAN}-01`],
    )
    expect(offsets).toHaveLength(2)

    const posts = o.exporter.getFinishedSpans().filter((s) => s.kind === SpanKind.SERVER && s.name === 'POST')
    expect(posts).toHaveLength(2)
    for (const s of posts) {
      expect(s.spanContext().traceId).toBe(TRACE)
      expect(s.parentSpanContext?.spanId).toBe(PAGE_SPAN)
      expect(s.attributes['http.response.status_code']).toBe(204)
    }
    const serverSpans = new Set(posts.map((s) => s.spanContext().spanId))

    const child = spawnChild('otel-consumer.ts', [store.dir, 'orders', 'billing', '2'])
    const out = lines(child)
    const code = await exited(child)
    expect(code, out.stderr()).toBe(0)
    const got = out.lines.map(
      (l) => JSON.parse(l) as { name: string; traceId: string; parentSpanId: string; links: string[] },
    )
    expect(got).toHaveLength(2)
    for (const g of got) {
      expect(g.name).toBe('process orders')
      expect(g.traceId).toBe(TRACE)
      expect(serverSpans.has(g.parentSpanId)).toBe(true)
      expect(g.links).toEqual([TRACE])
    }
  }, 60_000)
})
