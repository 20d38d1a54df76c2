// The dashboard in a real (headless, Debian) Chromium over the real gateway, file and Redis: it
// renders topics and groups, its lag chart's data moves as a Node producer writes and the group
// consumes, the live tail shows new values (and resumes after a pause with nothing missed or
// repeated), JSON is pretty-printed, history pages, and a token without read access gets a visible
// error. A screenshot of each is kept under test-artifacts/.
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { raw } from '../gateway/http.js'
import { serve } from '../gateway/serve.js'
import { tempDir } from '../helpers/tmp.js'
import { until } from '../helpers/wait.js'
import {
  ARTIFACTS,
  buildUi,
  launchChromium,
  READER,
  startStore,
  WRITER,
  type DashboardStore,
} from './dashboard-fixture.js'

let browser: Browser
let ui: { dir: string; remove: () => void }
beforeAll(async () => {
  ui = await buildUi()
  browser = await launchChromium()
}, 60_000)
afterAll(async () => {
  await browser?.close()
  ui?.remove()
})

/** How long the tail may take to show what it was sent: a loaded machine's bound, far below LIVE_MS. */
const SHOWN_MS = 30_000

/** The lag chart's last values (`"<group> <stream>": lag`). */
const lastLag = async (page: Page): Promise<Record<string, number | null>> =>
  JSON.parse((await page.locator('#lag-chart').getAttribute('data-last')) ?? '{}') as Record<string, number | null>

/** Whether a live read of `stream` made after the `since`-th response is open at the gateway. */
const liveReadOpen = (s: DashboardStore, stream: string, since: number): boolean =>
  s.gw.responses
    .slice(since)
    .some(
      (r) =>
        !r.writableEnded &&
        !r.destroyed &&
        /[?&]live=/.test(r.req.url ?? '') &&
        (r.req.url ?? '').startsWith(`/v1/stream/${stream}?`),
    )

describe('dashboard files', () => {
  let s: DashboardStore
  beforeAll(async () => {
    s = await startStore('file', ui.dir)
  })
  afterAll(async () => {
    await s?.stop()
  })

  it('are served at / and /assets/ with a content security policy; other paths are 404', async () => {
    const index = await fetch(`${s.gw.url}/`)
    expect(index.status).toBe(200)
    expect(index.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(index.headers.get('content-security-policy')).toMatch(/default-src 'self'/)
    const html = await index.text()
    const script = /src="\.\/(assets\/[^"]+\.js)"/.exec(html)?.[1]
    expect(script).toBeDefined()
    const js = await fetch(`${s.gw.url}/${script}`)
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8')
    expect(js.headers.get('cache-control')).toMatch(/immutable/)
    expect((await js.text()).length).toBeGreaterThan(1000)
    for (const bad of ['/assets/nope.js', '/assets/..%2Fpackage.json', '/assets/../../package.json', '/assets/.env'])
      expect((await raw(s.gw.url, 'GET', bad)).status).toBe(404)
    expect((await fetch(`${s.gw.url}/`, { method: 'POST' })).status).toBe(405)
  })

  it('with no consumer group, say there is nothing to chart instead of drawing empty axes', async () => {
    // Before: an empty uPlot chart over a time axis of uPlot's own choosing (2027 to 2029).
    const dir = tempDir('twainmq-dashboard-empty-')
    const gw = await serve(dir.dir, { ui: ui.dir, statsIntervalMs: 100 })
    await gw.twain.createTopic('orders')
    const page = await browser.newPage()
    try {
      await page.goto(`${gw.url}/`)
      await page.locator('#status[data-state="live"]').waitFor()
      await expect.poll(() => page.locator('#lag-chart').getAttribute('data-points'), { timeout: 10_000 }).not.toBe('0')
      expect(await page.locator('#lag-chart .empty').textContent()).toMatch(/^Nothing to chart: no consumer group/)
      expect(await page.locator('#lag-chart canvas').count()).toBe(0)
    } finally {
      await page.close()
      await gw.stop()
      dir.remove()
    }
  })
})

describe.each(['file', 'redis'] as const)('dashboard over %s', (kind) => {
  let s: DashboardStore
  let page: Page
  beforeAll(async () => {
    s = await startStore(kind, ui.dir)
    await s.send(10)
    await s.consume(4)
    page = await browser.newPage({ viewport: { width: 1400, height: 1000 } })
    await page.goto(`${s.gw.url}/#token=${READER}`)
  }, 30_000)
  afterAll(async () => {
    await page?.close()
    await s?.stop()
  })

  it('renders topics with partitions, streams and offsets, and groups with members, committed and lag', async () => {
    await page.locator('#status[data-state="live"]').waitFor()
    expect(page.url()).not.toContain(READER) // the token is taken out of the address bar
    const p0 = page.locator('#topics tr[data-stream="orders~0"]')
    await expect.poll(() => p0.locator('.end').textContent()).toBe('5')
    await expect.poll(() => page.locator('#topics tr[data-stream="orders~1"] .end').textContent()).toBe('5')
    expect(await p0.locator('.start').textContent()).toBe('0')
    const group = page.locator('#groups [data-group="billing"]')
    await expect.poll(() => group.locator('.members li').first().textContent()).toMatch(/^billing-1 → orders\[[01]\]/)
    const lags = await group.locator('td.lag').allTextContents()
    expect(lags.map(Number).reduce((a, b) => a + b, 0)).toBe(6)
    // Each lagging partition shows how old its oldest message not committed is (the exact ms as its title).
    const ages = await group.locator('td.lag-age').evaluateAll((tds) => tds.map((td) => td.getAttribute('title')))
    expect(ages).toHaveLength(2)
    for (const a of ages) expect(a).toMatch(/^\d+ ms$/)
  })

  it('moves the lag chart as the producer writes and the group consumes', async () => {
    await until(async () => Object.keys(await lastLag(page)).length === 2, 10_000, 'two lag series')
    expect((await page.locator('#lag-chart').getAttribute('data-series'))?.split(',')).toEqual([
      'billing orders~0',
      'billing orders~1',
    ])
    expect(await page.locator('#lag-chart canvas').count()).toBeGreaterThan(0)
    const total = async () => Object.values(await lastLag(page)).reduce<number>((a, b) => a + (b ?? 0), 0)
    expect(await total()).toBe(6)
    const points = Number(await page.locator('#lag-chart').getAttribute('data-points'))
    await s.send(8)
    await until(async () => (await total()) === 14, 10_000, 'lag 14 after 8 more messages')
    await s.consume(14)
    await until(async () => (await total()) === 0, 10_000, 'lag 0 after the group consumed everything')
    expect(Number(await page.locator('#lag-chart').getAttribute('data-points'))).toBeGreaterThan(points + 1)
    await page.screenshot({ path: new URL(`dashboard-${kind}.png`, ARTIFACTS).pathname, fullPage: true })
  })

  it('tails a stream live, pauses and resumes with nothing missed or repeated, pretty-prints JSON', async () => {
    // The page already tails the first stream (since the first snapshot); choose another and come back, for an empty log.
    await page.selectOption('#tail-stream', 'orders~1')
    const before = s.gw.responses.length
    await page.selectOption('#tail-stream', 'orders~0')
    await until(() => liveReadOpen(s, 'orders~0', before), 10_000, 'the tail to reach the gateway')
    // Appended once the tail's SSE request has reached the gateway: before its read takes its view of
    // the stream, between that view and its watch, or after; each must show the record. On Redis the
    // read's watch joins the consumer group's (whose XREAD BLOCK already covers the partition) and
    // gets no wake-up of its own: a record appended between the view and the watch was missed until
    // the read looked again 20 s later; this test failed so under load, twice, before live reads
    // looked again once watching (test/gateway/live-read-race.test.ts appends at that moment).
    // No product timer rescues a missed wake-up here (the fixture's LIVE_MS), so it shows no record
    // at all; the bound need only outlast a loaded machine (0.1 to 0.7 s seen at load average 16-25).
    await s.producer.send(1, { n: 1000, tag: 'live' }, { partition: 0 })
    const log = page.locator('#tail-log li pre')
    await expect
      .poll(() => log.allTextContents(), { timeout: SHOWN_MS })
      .toEqual([JSON.stringify({ n: 1000, tag: 'live' }, null, 2)])
    await page.click('#tail-pause')
    await page.locator('#tail-state[data-state="paused"]').waitFor()
    await until(() => !liveReadOpen(s, 'orders~0', before), 10_000, 'the paused tail to end its request')
    await s.producer.send(1, { n: 1001 }, { partition: 0 })
    await s.producer.send(1, { n: 1002 }, { partition: 0 })
    await page.click('#tail-pause')
    await expect.poll(() => log.allTextContents(), { timeout: SHOWN_MS }).toHaveLength(3)
    await page.uncheck('#tail-pretty')
    expect(await log.allTextContents()).toEqual(['{"n":1002}', '{"n":1001}', '{"n":1000,"tag":"live"}'])
    await page.check('#tail-pretty')
  }, 120_000)

  it('pages through history', async () => {
    await page.fill('#history-limit', '3')
    await page.selectOption('#history-stream', 'orders~1')
    await page.click('#history-first')
    const page1 = page.locator('#history-page[data-page="1"][data-state="ready"]')
    await page1.waitFor()
    const values = () => page.locator('#history-log li pre').allTextContents()
    expect((await values()).map((t) => (JSON.parse(t) as { n: number }).n)).toEqual([1, 3, 5])
    await page.click('#history-next')
    await page.locator('#history-page[data-page="2"][data-state="ready"]').waitFor()
    expect((await values()).map((t) => (JSON.parse(t) as { n: number }).n)).toEqual([7, 9, 11])
    expect(await page.locator('#history-log li .offset').allTextContents()).toEqual(['3', '4', '5'])
    await page.click('#history-prev')
    await page1.waitFor()
    expect((await values()).map((t) => (JSON.parse(t) as { n: number }).n)).toEqual([1, 3, 5])
  })

  it('shows a visible error to a token without read access, and to none', async () => {
    for (const [hash, text] of [
      [`#token=${WRITER}`, /Forbidden \(403\).*writer may not read any stream/],
      ['', /Unauthorized \(401\).*bearer token is required/],
    ] as const) {
      const other = await browser.newPage()
      try {
        await other.goto(`${s.gw.url}/${hash}`)
        await other.locator('#status[data-state="refused"]').waitFor()
        const banner = other.locator('#error')
        expect(await banner.isVisible()).toBe(true)
        expect(await banner.textContent()).toMatch(text)
        expect(await other.locator('#topics tbody tr').count()).toBe(0)
        if (hash) await other.screenshot({ path: new URL(`dashboard-${kind}-forbidden.png`, ARTIFACTS).pathname })
      } finally {
        await other.close()
      }
    }
  })
})
