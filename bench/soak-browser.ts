/*
 * Soak: a page in headless Chromium tails one topic through many gateway restarts; at the end it
 * must have every message exactly once, in order.
 *   npx tsx bench/soak-browser.ts [--minutes 10] [--restarts 20] [--redis] [--interval-ms 20]
 * A Node producer (its own Twain over the same store, like another process) sends one message every
 * `--interval-ms`; the gateway (in this process, on a fixed port) is killed — every socket destroyed
 * at once, so the page gets a network error mid-SSE — and started again `--restarts` times, evenly
 * spaced, each time down for 0–1 s while the producer keeps writing.
 */
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { open } from '../src/index.js'
import { TestGateway } from '../test/browser/gateway.js'
import { buildPage, launch, openPage, servePage } from '../test/browser/page.js'
import { RedisServer } from '../test/helpers/redis-server.js'
import { tempDir } from '../test/helpers/tmp.js'
import { sleep, until } from '../test/helpers/wait.js'

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '10' },
    restarts: { type: 'string', default: '20' },
    redis: { type: 'boolean', default: false },
    'interval-ms': { type: 'string', default: '20' },
  },
})
const minutes = Number(values.minutes)
const restarts = Number(values.restarts)
const intervalMs = Number(values['interval-ms'])
if (!(minutes > 0) || !Number.isInteger(restarts) || restarts < 0 || !(intervalMs > 0))
  throw new Error('usage: --minutes <n > 0> --restarts <integer ≥ 0> --interval-ms <n > 0> [--redis]')

const tmp = tempDir('twainmq-soak-browser-')
const redis = values.redis ? await RedisServer.start() : undefined
const target = redis?.url ?? join(tmp.dir, 'store')
await buildPage(join(tmp.dir, 'site'))
const site = await servePage(join(tmp.dir, 'site'))
const browser = await launch()
const gateway = await TestGateway.start(target, { sseMaxMs: 5_000 })
const twain = await open(target)
const t0 = Date.now()
try {
  await twain.createTopic('soak')
  const page = await openPage(browser, site.url)
  // Diagnostics for a failed run: the page's console and its requests still in flight.
  const consoleLines: string[] = []
  const inFlight = new Map<unknown, string>()
  page.on('console', (m) => consoleLines.push(m.text()))
  page.on('request', (r) => inFlight.set(r, `${r.url()} (since ${((Date.now() - t0) / 1000).toFixed(1)} s)`))
  page.on('requestfinished', (r) => inFlight.delete(r))
  page.on('requestfailed', (r) => inFlight.delete(r))
  await page.evaluate(`startTail(${JSON.stringify(gateway.url)}, 'soak', undefined, 'start')`)
  let sent = 0
  let producing = true
  const producer = twain.producer<number>('soak')
  const writing = (async () => {
    while (producing) {
      await producer.send(0, sent++)
      await sleep(intervalMs)
    }
  })()
  const every = (minutes * 60_000) / (restarts + 1)
  for (let r = 1; r <= restarts; r++) {
    await sleep(t0 + r * every - Date.now())
    await gateway.kill()
    await sleep(Math.random() * 1000)
    await gateway.restart()
    console.log(`restart ${r}/${restarts} at ${((Date.now() - t0) / 1000).toFixed(0)} s: ${sent} sent`)
  }
  await sleep(t0 + minutes * 60_000 - Date.now())
  producing = false
  await writing
  const count = async (): Promise<number> => (await page.$$('#out li')).length
  await until(async () => (await count()) >= sent, 60_000, `all ${sent} messages in the page`).catch(
    async (e: unknown) => {
      const last = await page.evaluate('document.querySelector("#out").lastChild?.textContent')
      console.log(
        `STALLED: ${await count()} of ${sent} rendered, last ${String(last)}, live reads at the gateway ${gateway.watches()}, page error "${(await page.textContent('#error')) ?? ''}"`,
      )
      const values = await page.$$eval('#out li', (items) => items.map((li) => Number(li.textContent)))
      const tokens = (await page.evaluate('window.tokens')) as [string, string][]
      for (let i = 1; i < values.length; i++) {
        if (values[i] !== values[i - 1]! + 1)
          console.log(
            `gap/repeat at ${i}: ${values[i - 1]} ${JSON.stringify(tokens[i - 1])} → ${values[i]} ${JSON.stringify(tokens[i])}`,
          )
      }
      console.log(`in flight: ${[...inFlight.values()].join('\n  ') || 'none'}`)
      console.log(`console: ${consoleLines.slice(-10).join('\n  ') || 'none'}`)
      throw e
    },
  )
  const got = await page.$$eval('#out li', (items) => items.map((li) => Number(li.textContent)))
  const inOrder = got.length === sent && got.every((v, i) => v === i)
  const error = (await page.textContent('#error')) ?? ''
  console.log(
    `soak ${values.redis ? 'redis' : 'file'}: ${minutes} min, ${gateway.starts - 1} restarts, ${sent} sent, ${got.length} rendered, every message exactly once in order: ${inOrder}; page error: "${error}"`,
  )
  process.exitCode = inOrder && error === '' ? 0 : 1
} finally {
  await browser.close()
  await site.close()
  await twain.close()
  await gateway.kill()
  await redis?.stop()
  tmp.remove()
}
