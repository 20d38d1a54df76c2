// Tails shared between the pages of an origin (connect's `shareTabs`) in a real headless Chromium
// against the real gateway: ten pages tailing one stream hold one live request at the gateway
// (its live-read count), the leader page closing hands the read to another, and every page sees
// every message once, in order, including pages that joined after the stream had history.
import type { BrowserContext, Page } from 'playwright-core'
import { afterAll, describe, expect, it } from 'vitest'
import { TokenAuth } from '../../src/gateway/index.js'
import type { Producer } from '../../src/index.js'
import { until } from '../helpers/wait.js'
import { openPage } from './page.js'
import { chromiumRig } from './rig.js'

const READER = 'tabs-reader-0123456789'
const auth = TokenAuth.from({ tokens: [{ name: 'reader', token: READER, read: ['*'] }] })

const rig = chromiumRig('tabs', { auth, sseMaxMs: 3_000 })

const seen = (page: Page): Promise<number[]> => page.evaluate('window.seen') as Promise<number[]>
const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i)
/** Sends the page to the background, as far as its scripts can tell (`document.hidden`, `visibilitychange`). */
const hide = (page: Page): Promise<unknown> =>
  page.evaluate(`
    Object.defineProperty(document, 'hidden', { configurable: true, get: () => true })
    Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => 'hidden' })
    document.dispatchEvent(new Event('visibilitychange'))`)

/** Runs `body` with a new browser context (closed after it) and a producer of `topic`, created first. */
async function inNewContext(
  topic: string,
  body: (ctx: BrowserContext, producer: Producer<number>) => Promise<void>,
): Promise<void> {
  const ctx = await rig.browser.newContext()
  try {
    await rig.twain.createTopic(topic)
    await body(ctx, rig.twain.producer<number>(topic))
  } finally {
    await ctx.close()
  }
}

/** Starts the page's shared tail of `stream` from the start. */
const startShared = (page: Page, stream: string): Promise<unknown> =>
  page.evaluate(`startShared(${JSON.stringify(rig.gateway.url)}, '${stream}', '${READER}', 'start')`)

describe('tails shared between the pages of an origin (shareTabs)', () => {
  let context: BrowserContext
  const pages: Page[] = []
  afterAll(async () => {
    await context?.close()
  })

  it('ten pages hold one live request; closing the leader hands the read over with no gap and no repeat', async () => {
    await rig.twain.createTopic('ticks')
    const producer = rig.twain.producer<number>('ticks')
    let sent = 0
    const send = async (n: number) => {
      for (let i = 0; i < n; i++) await producer.send(0, sent++)
    }
    await send(20) // history the pages catch up on with plain GETs
    context = await rig.browser.newContext()
    for (let i = 0; i < 10; i++) pages.push(await openPage(context, rig.site))
    const all = async (live: Page[], n: number) => {
      for (const p of live) await until(async () => (await seen(p)).length >= n, 20_000, `a page to see ${n} messages`)
    }
    // The first page takes the lock (and the live read); the others queue behind it in order.
    await startShared(pages[0]!, 'ticks')
    await all([pages[0]!], 20)
    await until(() => rig.gateway.watches('ticks') === 1, 10_000, 'the leader’s live read')
    for (const p of pages.slice(1)) await startShared(p, 'ticks')
    await all(pages, 20)
    await send(30)
    await all(pages, 50)
    // One live read: a reconnect (every sseMaxMs) may be between two, never more than one.
    expect(rig.gateway.watches('ticks')).toBeLessThanOrEqual(1)
    for (const p of pages) expect(await seen(p)).toEqual(range(50))

    // The leader closes: the next page in the lock's queue reads on from the last shared batch.
    await pages.shift()!.close()
    await send(10)
    await all(pages, 60)
    await until(() => rig.gateway.watches('ticks') === 1, 10_000, 'one live read after the hand-over')
    // And again, while messages are being sent.
    const sending = send(40)
    await pages.shift()!.close()
    await sending
    await all(pages, 100)
    await until(() => rig.gateway.watches('ticks') === 1, 10_000, 'one live read after the second hand-over')
    for (const p of pages) {
      expect(await seen(p)).toEqual(range(100))
      expect(await p.evaluate('window.sharedError')).toBeUndefined()
    }
  })

  it('a leader page that goes to the background hands the read to a visible page (hidden pages pause their reads)', async () => {
    await inNewContext('hidden', async (ctx, producer) => {
      const trio: Page[] = []
      for (let i = 0; i < 3; i++) trio.push(await openPage(ctx, rig.site))
      for (const p of trio) {
        await startShared(p, 'hidden')
        await until(() => rig.gateway.watches('hidden') === 1, 10_000, 'the trio’s live read')
      }
      await producer.send(0, 0)
      for (const p of trio) await until(async () => (await seen(p)).length === 1, 20_000, 'the first message')
      // The leader (the first page) is hidden: its read pauses, and a visible page takes over.
      await hide(trio[0]!)
      for (let i = 1; i <= 5; i++) await producer.send(0, i)
      for (const p of trio)
        await until(async () => (await seen(p)).length === 6, 20_000, 'the messages after the leader hid')
      for (const p of trio) expect(await seen(p)).toEqual(range(6))
      await until(() => rig.gateway.watches('hidden') === 1, 10_000, 'one live read, the visible leader’s')
    })
  })

  it('a page that opens while the leader is already hidden takes the read', async () => {
    await inNewContext('hidden-first', async (ctx, producer) => {
      const first = await openPage(ctx, rig.site)
      await startShared(first, 'hidden-first')
      await until(() => rig.gateway.watches('hidden-first') === 1, 10_000, 'the first page’s live read')
      await hide(first)
      const second = await openPage(ctx, rig.site)
      await startShared(second, 'hidden-first')
      for (let i = 0; i < 3; i++) await producer.send(0, i)
      await until(async () => (await seen(second)).length === 3, 20_000, 'live messages in the new, visible page')
      expect(await seen(second)).toEqual(range(3))
    })
  })

  it('a leader whose live read starts past a message its page has not read tells the page, which reads it', async () => {
    await inNewContext('late', async (ctx, producer) => {
      const page = await openPage(ctx, rig.site)
      // The page's tail catches up with a plain GET from the start (offset -1) while its share's
      // leader, with no position to go on yet, reads live from 'now'. That request is held until
      // the catch-up has ended and message 0 is written: the live read starts past message 0, and
      // no batch of it brings message 0 to the page.
      let caughtUp = false
      page.on('requestfinished', (r) => {
        const q = new URL(r.url()).searchParams
        if (q.get('offset') === '-1' && !q.has('live')) caughtUp = true
      })
      const heldNow: string[] = []
      await page.route(
        (u) => u.pathname.endsWith('/late') && u.searchParams.get('offset') === 'now',
        async (route) => {
          heldNow.push(route.request().url())
          if (heldNow.length === 1) {
            await until(() => caughtUp, 10_000, 'the page’s catch-up')
            await producer.send(0, 0)
          }
          await route.continue()
        },
      )
      await startShared(page, 'late')
      await until(() => heldNow.length > 0, 10_000, 'the leader’s read from now')
      await until(async () => (await seen(page)).length === 1, 20_000, 'message 0')
      await producer.send(0, 1)
      await until(async () => (await seen(page)).length === 2, 20_000, 'message 1')
      expect(await seen(page)).toEqual(range(2))
      expect(await page.evaluate('window.sharedError')).toBeUndefined()
    })
  })

  it('a page that stops its tail leaves the others reading; the last one out ends the live read', async () => {
    const producer = rig.twain.producer<number>('ticks')
    for (const p of pages.slice(0, 4)) await p.evaluate('stopShared()')
    await producer.send(0, 100)
    for (const p of pages.slice(4))
      await until(async () => (await seen(p)).length === 101, 20_000, 'the rest still fed')
    for (const p of pages.slice(4)) await p.evaluate('stopShared()')
    await until(() => rig.gateway.watches() === 0, 10_000, 'no live read once no page tails')
    for (const p of pages.slice(0, 4)) expect((await seen(p)).length).toBe(100)
  })
})
