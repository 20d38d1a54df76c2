/*
 * `npm run bench -- tabs`: tails shared between the pages of an origin (`connect(url, { shareTabs:
 * true })`) in headless Chromium against the gateway over a directory. Ten pages
 * tail one stream from its start while Node sends a message every 10 ms; the gateway counts the
 * live reads. Then the pages are closed one at a time, 500 ms apart, until one is left: for each
 * close, the time from the close to the moment every remaining page has the first message sent
 * after it. A close of the leader page includes the hand-over (another page takes the lock and
 * reads on); the others are the plain delivery time. At the end every page's sequence is checked
 * for gaps and repeats. Repeated `--repeat` times.
 */
import type { Page } from 'playwright-core'
import { open } from '../../src/index.js'
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

async function round(
  browser: Awaited<ReturnType<typeof launch>>,
  site: string,
  target: string,
  pages: number,
  r: number,
): Promise<Round> {
  const gateway = await TestGateway.start(target)
  const twain = await open(target)
  const context = await browser.newContext()
  const now = (): number => performance.timeOrigin + performance.now()
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
    let sending = true
    const sender = (async () => {
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
    await context.close()
    await twain.close()
    await gateway.kill()
  }
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
    logGoals([
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
