/*
 * `npm run bench -- tabs`: tails shared between the pages of an origin (`connect(url, { shareTabs:
 * true })`) in headless Chromium against the gateway over a directory. Ten pages
 * tail one stream from its start while Node sends a message every 10 ms; the gateway counts the
 * live reads. Then the pages are closed one at a time, 500 ms apart, until one is left: for each
 * close, the time from the close to the moment every remaining page has the first message sent
 * after it. A close of the leader page includes the hand-over (another page takes the lock and
 * reads on); the others are the plain delivery time. At the end every page's sequence is checked
 * for gaps and repeats. Repeated `--repeat` times.
 *
 * Then the page cache (`tail(stream, { cache })`): one page tails a stream of 10,000 messages
 * (100-byte values) with the cache, is reloaded, and tails again: the time from the call to the
 * first message (from the cache) and to all 10,000, and the bytes the gateway sent after the
 * reload against those of the first read.
 */
import type { BrowserContext, Page } from 'playwright-core'
import { open, type Twain } from '../../src/index.js'
import { TestGateway } from '../../test/browser/gateway.js'
import { buildPage, launch, openPage, servePage } from '../../test/browser/page.js'
import { tempDir } from '../../test/helpers/tmp.js'
import { until } from '../../test/helpers/wait.js'
import { log, logGoals, logRunHeader } from '../lib/report.js'
import { fmtNum, sleep } from '../lib/stats.js'
import type { Suite, SuiteOptions } from '../lib/suite.js'
import { renderTable } from '../lib/table.js'

const PAGES = 10
const SEND_EVERY_MS = 10
const CLOSE_EVERY_MS = 500

interface Round {
  liveReads: number
  /** Per close: ms from the close until every remaining page had the next message. */
  closes: number[]
  gaps: number
  repeats: number
  messages: number
}

/** A gateway over `target`, a Twain to produce with and a browser context, for `fn`; all closed after. */
async function withGateway<T>(
  browser: Awaited<ReturnType<typeof launch>>,
  target: string,
  fn: (gateway: TestGateway, twain: Twain, context: BrowserContext) => Promise<T>,
): Promise<T> {
  const gateway = await TestGateway.start(target)
  const twain = await open(target)
  const context = await browser.newContext()
  try {
    return await fn(gateway, twain, context)
  } finally {
    await context.close()
    await twain.close()
    await gateway.kill()
  }
}

async function round(
  browser: Awaited<ReturnType<typeof launch>>,
  site: string,
  target: string,
  pages: number,
  r: number,
): Promise<Round> {
  const now = (): number => performance.timeOrigin + performance.now()
  let sending = true
  let sender: Promise<void> = Promise.resolve()
  return withGateway(browser, target, async (gateway, twain, context) => {
    try {
      const topic = `tabs${r}`
      await twain.createTopic(topic)
      const producer = twain.producer<{ i: number; t: number }>(topic)
      const open_: Page[] = []
      for (let i = 0; i < pages; i++) open_.push(await openPage(context, site))
      for (const p of open_)
        await p.evaluate(`startShared(${JSON.stringify(gateway.url)}, '${topic}', undefined, 'start')`)
      let sent = 0
      const sentAt: number[] = []
      sender = (async () => {
        while (sending) {
          sentAt.push(now())
          await producer.send(0, { i: sent, t: sentAt[sent] as number })
          sent++
          await sleep(SEND_EVERY_MS)
        }
      })()
      const seen = async (p: Page) => (await p.evaluate('window.seen.length')) as number
      await until(async () => (await Promise.all(open_.map(seen))).every((n) => n >= 20), 30_000, 'every page live')
      const liveReads = gateway.watches()
      const closes: number[] = []
      const alive = [...open_]
      while (alive.length > 1) {
        const closedAt = now()
        await alive.shift()!.close()
        // The first message sent after the close, and when each remaining page had it.
        await until(() => sentAt.some((t) => t > closedAt), 10_000, 'a message after the close')
        const k = sentAt.findIndex((t) => t > closedAt)
        await until(
          async () => (await Promise.all(alive.map(seen))).every((n) => n > k),
          20_000,
          'the message in every page',
        )
        const arrivals = await Promise.all(alive.map((p) => p.evaluate(`window.arrivals[${k}]`) as Promise<number>))
        closes.push(Math.max(...arrivals) - closedAt)
        await sleep(CLOSE_EVERY_MS)
      }
      sending = false
      await sender
      const last = alive[0]!
      await until(async () => (await seen(last)) === sent, 20_000, 'the last page has every message')
      const values = ((await last.evaluate('window.seen')) as Array<{ i: number }>).map((v) => v.i)
      let gaps = 0
      let repeats = 0
      for (let i = 1; i < values.length; i++) {
        const d = (values[i] as number) - (values[i - 1] as number)
        if (d <= 0) repeats++
        else if (d > 1) gaps += d - 1
      }
      if (values[0] !== 0) gaps += values[0] as number
      return { liveReads, closes, gaps, repeats, messages: sent }
    } finally {
      sending = false
      await sender.catch(() => undefined)
    }
  })
}

const CACHED = 10_000

interface CacheRound {
  firstMs: number
  allMs: number
  fullBytes: number
  reloadBytes: number
  intact: boolean
}

async function cacheRound(
  browser: Awaited<ReturnType<typeof launch>>,
  site: string,
  target: string,
  r: number,
): Promise<CacheRound> {
  return withGateway(browser, target, async (gateway, twain, context) => {
    const topic = `cached${r}`
    await twain.createTopic(topic)
    const pad = 'x'.repeat(100)
    const items = Array.from({ length: CACHED }, (_, i) => ({ key: 0, value: { i, pad } }))
    await twain.producer(topic).sendBatch(items)
    const page = await openPage(context, site)
    const begin = `startCached(${JSON.stringify(gateway.url)}, '${topic}', undefined, ${CACHED}, 60000)`
    const count = async () => (await page.evaluate('window.seen.length')) as number
    gateway.resetBytes()
    await page.evaluate(begin)
    await until(async () => (await count()) === CACHED, 60_000, 'the first read')
    const fullBytes = gateway.bytesFor(`/v1/stream/${topic}`)
    await until(async () => (await page.evaluate(`cachedCount('${topic}')`)) === CACHED, 30_000, 'all stored')
    await page.reload()
    await page.waitForFunction('window.ready === true')
    gateway.resetBytes()
    const t0 = performance.now()
    await page.evaluate(begin)
    await until(async () => (await count()) === CACHED, 60_000, 'the cached read')
    const allMs = performance.now() - t0
    const firstMs = (await page.evaluate('window.firstMs')) as number
    const values = ((await page.evaluate('window.seen')) as Array<{ i: number }>).map((v) => v.i)
    const intact = values.length === CACHED && values.every((v, i) => v === i)
    return { firstMs, allMs, fullBytes, reloadBytes: gateway.bytesFor(`/v1/stream/${topic}`), intact }
  })
}

const suite: Suite = {
  name: 'tabs',
  description:
    'pages sharing one live read per stream (shareTabs) in Chromium: live reads, hand-over time, gaps and repeats',
  async run(o: SuiteOptions): Promise<void> {
    logRunHeader('tabs', o.command)
    const pages = PAGES
    log(
      `setup:   ${o.repeat} round(s) of ${pages} pages in one browser context tailing one stream; a message every ${SEND_EVERY_MS} ms; pages closed one at a time every ${CLOSE_EVERY_MS} ms`,
    )
    log('')
    const files = tempDir('twainmq-bench-tabs-page-')
    await buildPage(files.dir)
    const site = await servePage(files.dir)
    const browser = await launch()
    const rounds: Round[] = []
    const caches: CacheRound[] = []
    try {
      for (let r = 0; r < o.repeat; r++) {
        const store = tempDir('twainmq-bench-tabs-')
        try {
          const res = await round(browser, site.url, store.dir, pages, r)
          rounds.push(res)
          log(
            `  round ${r + 1}: ${res.liveReads} live read(s) for ${pages} pages; close → next message in every page: ${res.closes.map((x) => fmtNum(x, 0)).join(', ')} ms; ${res.messages} messages, ${res.gaps} missing, ${res.repeats} repeated`,
          )
        } finally {
          store.remove()
        }
      }
      for (let r = 0; r < o.repeat; r++) {
        const store = tempDir('twainmq-bench-cache-')
        try {
          const c = await cacheRound(browser, site.url, store.dir, r)
          caches.push(c)
          log(
            `  cache round ${r + 1}: reload → first message ${fmtNum(c.firstMs, 1)} ms, all ${CACHED} ${fmtNum(c.allMs, 0)} ms; bytes after the reload ${c.reloadBytes} against ${c.fullBytes} for the first read; sequence ${c.intact ? 'intact' : 'BROKEN'}`,
          )
        } finally {
          store.remove()
        }
      }
    } finally {
      await browser.close()
      await site.close()
      files.remove()
    }
    const worst = Math.max(...rounds.flatMap((x) => x.closes))
    const sorted = rounds.flatMap((x) => x.closes).sort((a, b) => a - b)
    const median = sorted[(sorted.length - 1) >> 1] as number
    log('')
    log(
      renderTable(
        [
          ['pages', 'live reads', 'close → in every page, median ms', 'worst ms', 'missing', 'repeated'],
          [
            String(pages),
            rounds.map((x) => x.liveReads).join(' / '),
            fmtNum(median, 0),
            fmtNum(worst, 0),
            String(rounds.reduce((n, x) => n + x.gaps, 0)),
            String(rounds.reduce((n, x) => n + x.repeats, 0)),
          ],
        ],
        [true, false, true, true, true, true],
      ),
    )
    log('')
    const firstWorst = Math.max(...caches.map((c) => c.firstMs))
    const byteShare = Math.max(...caches.map((c) => c.reloadBytes / c.fullBytes))
    log(
      renderTable(
        [
          [
            'cache (10,000 messages)',
            'reload → first message, worst ms',
            'reload → all, worst ms',
            'bytes after reload / first read',
          ],
          [
            'one page',
            fmtNum(firstWorst, 1),
            fmtNum(Math.max(...caches.map((c) => c.allMs)), 0),
            `${fmtNum(100 * byteShare, 2)}%`,
          ],
        ],
        [false, true, true, true],
      ),
    )
    log('')
    logGoals([
      [
        'reload: first render from the cache < 100 ms (10,000 messages)',
        firstWorst < 100,
        `${fmtNum(firstWorst, 1)} ms`,
      ],
      [
        'reload: bytes fetched = the suffix only (none came after: only the live read’s control events)',
        byteShare < 0.01 && caches.every((c) => c.intact),
        `${fmtNum(100 * byteShare, 2)}% of the first read`,
      ],
      [
        `${pages} tabs → 1 live read`,
        rounds.every((x) => x.liveReads === 1),
        rounds.map((x) => x.liveReads).join(' / '),
      ],
      ['leader hand-over < 1 s (worst close → next message in every page)', worst < 1000, `${fmtNum(worst, 0)} ms`],
      [
        '0 gaps, 0 repeats',
        rounds.every((x) => x.gaps === 0 && x.repeats === 0),
        `${rounds.reduce((n, x) => n + x.gaps, 0)} missing, ${rounds.reduce((n, x) => n + x.repeats, 0)} repeated`,
      ],
    ])
  },
}

export default suite
