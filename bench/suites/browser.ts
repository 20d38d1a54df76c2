/*
 * `npm run bench -- browser`: twainmq/browser in headless Chromium (Debian's, via playwright-core)
 * against the gateway on loopback, over the file backend and over a private redis-server:
 *
 *   a. produce in Node → rendered in the page: `--tail-messages` messages, one every ~5 ms, each
 *      timed from just before `producer.send` in Node to its <li> being in the page's document
 *      (both sides read the same host clock: performance.timeOrigin + performance.now()); p50/p99
 *   b. size: the twainmq/browser entry bundled by vite (minified ES module), raw and gzipped, vs
 *      `@durable-streams/client` (`stream`) + `rxjs` (`Observable`, `from`) bundled directly
 */
import { join } from 'node:path'
import { open } from '../../src/index.js'
import { TestGateway } from '../../test/browser/gateway.js'
import { browserEntry, bundle, sizes } from '../../test/browser/bundle.js'
import { buildPage, launch, openPage, servePage } from '../../test/browser/page.js'
import { RedisServer } from '../../test/helpers/redis-server.js'
import { tempDir } from '../../test/helpers/tmp.js'
import { until } from '../../test/helpers/wait.js'
import { log, machine, revision } from '../lib/report.js'
import { fmtInt, fmtNum, sleep, summarise, type LatencySummary } from '../lib/stats.js'
import type { Suite, SuiteOptions } from '../lib/suite.js'
import { renderTable } from '../lib/table.js'

const INTERVAL_MS = 5
const WARM_UP = 20

async function latency(
  target: string,
  pageUrl: string,
  browser: Awaited<ReturnType<typeof launch>>,
  messages: number,
): Promise<LatencySummary> {
  const gateway = await TestGateway.start(target)
  const twain = await open(target)
  const page = await openPage(browser, pageUrl)
  try {
    await twain.createTopic('latency')
    const producer = twain.producer<{ i: number; t: number }>('latency')
    await page.evaluate(`startLatency(${JSON.stringify(gateway.url)}, 'latency')`)
    await until(() => gateway.watches() === 1, 10_000, 'the page’s live read')
    const total = WARM_UP + messages
    for (let i = 0; i < total; i++) {
      await producer.send(0, { i, t: performance.timeOrigin + performance.now() })
      await sleep(INTERVAL_MS)
    }
    await until(
      async () => (await page.evaluate('window.latencies.length')) === total,
      20_000,
      `${total} values in the page`,
    ).catch(async (e: unknown) => {
      throw new Error(
        `${(e as Error).message}: the page has ${String(await page.evaluate('window.latencies.length'))}, error "${(await page.textContent('#error')) ?? ''}", live reads ${gateway.watches()}, last rendered ${String(await page.evaluate('document.querySelector("#out").lastChild?.textContent'))}`,
      )
    })
    const all = (await page.evaluate('window.latencies')) as number[]
    return summarise(all.slice(WARM_UP))
  } finally {
    await page.close()
    await twain.close()
    await gateway.kill()
  }
}

const suite: Suite = {
  name: 'browser',
  description:
    'twainmq/browser in headless Chromium: produce→render latency (file, Redis), bundle size vs @durable-streams/client + rxjs',
  async run(o: SuiteOptions) {
    const tmp = tempDir('twainmq-bench-browser-')
    log(`twainmq bench: browser`)
    log(`command: ${o.command}`)
    log(`date:    ${new Date().toISOString()}`)
    log(`machine: ${machine()}`)
    log(`source:  ${revision()}`)
    log(
      `setup:   ${o.tailMessages} messages one every ~${INTERVAL_MS} ms (+${WARM_UP} warm-up not counted), headless Chromium, gateway in this process on 127.0.0.1`,
    )
    const site = join(tmp.dir, 'site')
    await buildPage(site)
    const server = await servePage(site)
    const browser = await launch()
    const redis = await RedisServer.start()
    const rows: string[][] = [['a. produce → rendered', 'count', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms']]
    try {
      for (const [name, target] of [
        ['file', join(tmp.dir, 'store')],
        ['redis', redis.url],
      ] as const) {
        const s = await latency(target, server.url, browser, o.tailMessages)
        rows.push([name, fmtInt(s.count), fmtNum(s.p50), fmtNum(s.p90), fmtNum(s.p99), fmtNum(s.max)])
      }
    } finally {
      await browser.close()
      await server.close()
      await redis.stop()
    }
    log()
    log(renderTable(rows, [false, true, true, true, true, true]))
    const ours = sizes(await bundle(browserEntry, join(tmp.dir, 'size'), 'twainmq-browser'))
    const direct = sizes(
      await bundle(join(import.meta.dirname, '..', 'lib', 'browser-direct.ts'), join(tmp.dir, 'size'), 'direct'),
    )
    log()
    log(
      renderTable(
        [
          ['b. bundle (vite, minified)', 'bytes', 'gzip bytes'],
          ['twainmq/browser', fmtInt(ours.bytes), fmtInt(ours.gzip)],
          ['@durable-streams/client stream + rxjs Observable, from', fmtInt(direct.bytes), fmtInt(direct.gzip)],
          ['ratio (ours / direct)', fmtNum(ours.bytes / direct.bytes), fmtNum(ours.gzip / direct.gzip)],
        ],
        [false, true, true],
      ),
    )
    tmp.remove()
  },
}

export default suite
