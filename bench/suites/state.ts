/*
 * `npm run bench -- state`: a State Protocol stream read by `@durable-streams/state`'s StreamDB in
 * headless Chromium, compacted (`Stream-Compaction: state`) against the same events in a plain
 * stream. Both streams get `--messages` upserts (default 1,000,000) over messages / 100 keys
 * (10,000), through the gateway over a directory, in POSTs of 2,000 events, written side by side;
 * then one compaction pass over the compacted stream. A new page per stream then opens a StreamDB
 * over it: the bytes the gateway sent until the DB was up to date, and the time from the call to
 * the first complete render of every row (a live query included). Repeated `--repeat` times over
 * the same streams.
 */
import type { Browser } from 'playwright-core'
import { backendOf } from '../../src/facade/twain.js'
import { TestGateway } from '../../test/browser/gateway.js'
import { launch, openPage, servePage } from '../../test/browser/page.js'
import { buildStatePage, readState } from '../../test/browser/state-page.js'
import { log, logGoals, logRunHeader } from '../lib/report.js'
import { fmtNum, median } from '../lib/stats.js'
import type { Suite, SuiteOptions } from '../lib/suite.js'
import { renderTable } from '../lib/table.js'
import { makeTempDir, removeTempDir } from '../lib/tmp.js'

const PER_POST = 2000
const COMPACTED = 'state-compacted'
const PLAIN = 'state-plain'

interface Read {
  bytes: number
  ms: number
  rows: number
}

const event = (id: number, n: number) => ({
  type: 'row',
  key: `k${id}`,
  value: { id: `k${id}`, n, marked: id % 100 === 0, label: `row ${id} version ${n}` },
  headers: { operation: n === 0 ? 'insert' : 'update' },
})

/** Writes the events to `stream`, created with `headers`; resolves with the events per second. */
async function fill(url: string, headers: Record<string, string>, messages: number, keys: number): Promise<number> {
  const put = await fetch(url, { method: 'PUT', headers: { 'content-type': 'application/json', ...headers } })
  if (put.status !== 201) throw new Error(`PUT ${url}: ${put.status} ${await put.text()}`)
  const t0 = performance.now()
  for (let i = 0; i < messages; i += PER_POST) {
    const batch = []
    for (let j = i; j < Math.min(messages, i + PER_POST); j++) batch.push(event(j % keys, Math.floor(j / keys)))
    const r = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(batch),
    })
    if (!r.ok) throw new Error(`POST ${url}: ${r.status} ${await r.text()}`)
  }
  return messages / ((performance.now() - t0) / 1000)
}

async function read(browser: Browser, site: string, gateway: TestGateway, stream: string): Promise<Read> {
  const page = await openPage(browser, `${site}state.html`)
  try {
    const r = await readState(page, gateway, stream)
    await page.evaluate('closeDB()')
    return r
  } finally {
    await page.close()
  }
}

const suite: Suite = {
  name: 'state',
  description: 'StreamDB in Chromium over a compacted State Protocol stream vs the same events uncompacted',
  async run(o: SuiteOptions): Promise<void> {
    logRunHeader('state', o.command)
    const messages = o.messages
    const keys = Math.max(1, Math.floor(messages / 100))
    log(
      `setup:   ${fmtNum(messages, 0)} upserts over ${fmtNum(keys, 0)} keys into each of two streams (file store, gateway in process); ${o.repeat} read(s) of each by a new page`,
    )
    log('')
    const files = makeTempDir('state-page')
    const store = makeTempDir('state')
    await buildStatePage(files)
    const site = await servePage(files)
    const browser = await launch()
    const gateway = await TestGateway.start(store)
    const reads: Record<string, Read[]> = { [COMPACTED]: [], [PLAIN]: [] }
    try {
      const base = `${gateway.url}/v1/stream/`
      const [compactedRate, plainRate] = await Promise.all([
        fill(`${base}${COMPACTED}`, { 'stream-compaction': 'state' }, messages, keys),
        fill(`${base}${PLAIN}`, {}, messages, keys),
      ])
      const t0 = performance.now()
      const pass = await backendOf(gateway.twain).compact(COMPACTED)
      const passMs = performance.now() - t0
      log(
        `  written: compacted ${fmtNum(compactedRate, 0)} events/s, plain ${fmtNum(plainRate, 0)} events/s (side by side); compaction pass ${fmtNum(passMs, 0)} ms: ${fmtNum(pass.before.records, 0)} → ${fmtNum(pass.after.records, 0)} records`,
      )
      for (let r = 0; r < o.repeat; r++)
        for (const stream of [PLAIN, COMPACTED]) {
          const x = await read(browser, site.url, gateway, stream)
          if (x.rows !== keys) throw new Error(`${stream}: ${x.rows} rows rendered, expected ${keys}`)
          reads[stream]!.push(x)
          log(`  read ${r + 1} of ${stream}: ${fmtNum(x.bytes, 0)} B, first complete render ${fmtNum(x.ms, 0)} ms`)
        }
    } finally {
      await browser.close()
      await site.close()
      await gateway.kill()
      removeTempDir(files)
      removeTempDir(store)
    }
    const row = (stream: string, label: string) => {
      const xs = reads[stream]!
      return [label, fmtNum(median(xs.map((x) => x.bytes)), 0), fmtNum(median(xs.map((x) => x.ms)), 0)]
    }
    const ratio = Math.max(...reads[COMPACTED]!.map((x) => x.bytes)) / Math.min(...reads[PLAIN]!.map((x) => x.bytes))
    const speed = median(reads[PLAIN]!.map((x) => x.ms)) / median(reads[COMPACTED]!.map((x) => x.ms))
    log('')
    log(
      renderTable(
        [
          ['StreamDB reader (new page)', 'bytes', 'first complete render, ms'],
          row(PLAIN, 'plain stream (every event)'),
          row(COMPACTED, 'compacted (Stream-Compaction: state)'),
        ],
        [false, true, true],
      ),
    )
    log('')
    logGoals([
      [
        `a new StreamDB reader of a compacted ${fmtNum(messages, 0)}-upsert / ${fmtNum(keys, 0)}-key stream downloads ≤ 2% of the uncompacted bytes`,
        ratio <= 0.02,
        `${fmtNum(100 * ratio, 2)}% (first render ${fmtNum(speed, 1)}× as fast)`,
      ],
    ])
  },
}

export default suite
