// Tails with the page's cache (tail's `cache` option) in a real headless Chromium against the real
// gateway: a reload renders the cached messages at once and fetches only what came after (bytes
// counted at the gateway), and a page reloaded while the gateway is down shows what it had and
// reads on when the gateway is back. Every page's sequence is checked for gaps and repeats.
import type { BrowserContext, Page } from 'playwright-core'
import { afterAll, describe, expect, it } from 'vitest'
import { until } from '../helpers/wait.js'
import { openPage } from './page.js'
import { chromiumRig } from './rig.js'

const rig = chromiumRig('cache', { sseMaxMs: 3_000 })

const seen = async (page: Page): Promise<number[]> =>
  ((await page.evaluate('window.seen')) as Array<{ i: number }>).map((v) => v.i)
const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i)
const PAD = 'x'.repeat(200)

/** Reload `page` and start its tail again (`begin`), the gateway's byte counts from zero. */
async function reloadAndTail(page: Page, begin: string): Promise<void> {
  await page.reload()
  await page.waitForFunction('window.ready === true')
  rig.gateway.resetBytes()
  await page.evaluate(begin)
}

describe('tails with the page’s cache (IndexedDB)', () => {
  let context: BrowserContext
  let page: Page
  let sent = 0
  const send = async (n: number) => {
    const producer = rig.twain.producer<{ i: number; pad: string }>('cached')
    await producer.sendBatch(Array.from({ length: n }, () => ({ key: 0, value: { i: sent++, pad: PAD } })))
  }
  const beginCached = (retryMs = 60_000) =>
    `startCached(${JSON.stringify(rig.gateway.url)}, 'cached', undefined, 20000, ${retryMs})`
  const start = (retryMs = 60_000) => page.evaluate(beginCached(retryMs))
  afterAll(async () => {
    await context?.close()
  })

  it('a reload renders the cached messages and fetches only what came after', async () => {
    await rig.twain.createTopic('cached')
    await send(1000)
    context = await rig.browser.newContext()
    page = await openPage(context, rig.site)
    rig.gateway.resetBytes()
    await start()
    await until(async () => (await seen(page)).length === 1000, 20_000, '1,000 messages')
    const fullRead = rig.gateway.bytesFor('/v1/stream/cached')
    await send(10)
    await until(async () => (await seen(page)).length === 1010, 20_000, 'the 10 after')
    await until(async () => (await page.evaluate("cachedCount('cached')")) === 1010, 10_000, 'all of them stored')
    await reloadAndTail(page, beginCached())
    await until(async () => (await seen(page)).length === 1010, 20_000, 'the cached messages after the reload')
    await send(5)
    await until(async () => (await seen(page)).length === 1015, 20_000, 'the messages sent after the reload')
    expect(await seen(page)).toEqual(range(1015))
    const afterReload = rig.gateway.bytesFor('/v1/stream/cached')
    // The 1,000 messages are about 230 KB; after the reload only the 5 new ones (and the SSE
    // control events) came over the network.
    expect(fullRead).toBeGreaterThan(200_000)
    expect(afterReload).toBeLessThan(fullRead * 0.05)
  })

  it('a small cache (fewer messages than its first part) is served on a reload too', async () => {
    const small = await openPage(context, rig.site)
    try {
      await rig.twain.createTopic('few')
      await rig.twain
        .producer<{ i: number }>('few')
        .sendBatch(range(50).map((i) => ({ key: 0, value: { i, pad: PAD } })))
      const begin = `startCached(${JSON.stringify(rig.gateway.url)}, 'few', undefined, 1000, 60000)`
      await small.evaluate(begin)
      await until(async () => (await seen(small)).length === 50, 20_000, '50 messages')
      await until(async () => (await small.evaluate("cachedCount('few')")) === 50, 10_000, 'all stored')
      await reloadAndTail(small, begin)
      await until(async () => (await seen(small)).length === 50, 20_000, 'the 50 again')
      expect(await seen(small)).toEqual(range(50))
      expect(rig.gateway.bytesFor('/v1/stream/few')).toBeLessThan(1000) // 50 × ~230 B came from the cache
    } finally {
      await small.close()
    }
  })

  it('the cache keeps at most maxMessages; a tail from the start it no longer holds reads it all again', async () => {
    const small = await openPage(context, rig.site)
    try {
      await rig.twain.createTopic('evicted')
      await rig.twain.producer<{ i: number }>('evicted').sendBatch(range(300).map((i) => ({ key: 0, value: { i } })))
      const begin = `startCached(${JSON.stringify(rig.gateway.url)}, 'evicted', undefined, 100, 60000)`
      await small.evaluate(begin)
      await until(async () => (await seen(small)).length === 300, 20_000, '300 messages')
      const cachedOf = async () => (await small.evaluate("cachedCount('evicted')")) as number
      await until(async () => (await cachedOf()) === 100, 10_000, 'the last 100 kept')
      await reloadAndTail(small, begin)
      await until(async () => (await seen(small)).length === 300, 20_000, 'all 300 again')
      expect(await seen(small)).toEqual(range(300))
      expect(rig.gateway.bytesFor('/v1/stream/evicted')).toBeGreaterThan(0) // read from the network
      expect(await cachedOf()).toBe(100)
    } finally {
      await small.close()
    }
  })

  it('a page reloaded while the gateway is down shows what it had, and reads on when it is back', async () => {
    await rig.gateway.kill()
    await page.reload()
    await page.waitForFunction('window.ready === true')
    await start(120_000)
    await until(async () => (await seen(page)).length === 1015, 20_000, 'the cached messages, offline')
    await rig.gateway.restart()
    await send(5)
    await until(async () => (await seen(page)).length === 1020, 30_000, 'the messages after the gateway came back')
    expect(await seen(page)).toEqual(range(1020))
    expect(await page.evaluate('window.sharedError')).toBeUndefined()
  })
})
