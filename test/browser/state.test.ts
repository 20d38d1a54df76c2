// `@durable-streams/state`'s StreamDB in a real headless Chromium, unchanged, over a compacted
// State Protocol stream (`Stream-Compaction: state`) and over the same events in a plain stream:
// both render the same rows, the compacted one from a small fraction of the bytes (counted at the
// gateway), and live changes (a delete too) reach the page after the first render.
import type { Page } from 'playwright-core'
import { afterAll, describe, expect, it } from 'vitest'
import { backendOf } from '../../src/facade/twain.js'
import { until } from '../helpers/wait.js'
import { chromiumRig } from './rig.js'
import { openPage } from './page.js'
import { buildStatePage, readState } from './state-page.js'

const rig = chromiumRig('state', {}, buildStatePage)

const KEYS = 200
const ROUNDS = 100
const PAD = 'x'.repeat(40)
const upsert = (id: number, n: number) => ({
  type: 'row',
  key: `k${id}`,
  value: { id: `k${id}`, n, marked: id % 50 === 0, pad: PAD },
  headers: { operation: n === 0 ? 'insert' : 'update' },
})
const remove = (id: number) => ({ type: 'row', key: `k${id}`, headers: { operation: 'delete' } })

async function write(stream: string, events: unknown[]): Promise<void> {
  const r = await fetch(`${rig.gateway.url}/v1/stream/${stream}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(events),
  })
  expect(r.ok).toBe(true)
}

const openState = (): Promise<Page> => openPage(rig.browser, `${rig.site}state.html`)

describe('StreamDB over a compacted state stream (Chromium)', () => {
  const pages: Page[] = []
  afterAll(async () => {
    for (const p of pages) await p.close()
  })

  it('renders the same rows as over the whole history, from ≤ 2% of its bytes; live changes follow', async () => {
    for (const [name, compaction] of [
      ['rows-compacted', { 'stream-compaction': 'state' }],
      ['rows-history', {}],
    ] as const) {
      const put = await fetch(`${rig.gateway.url}/v1/stream/${name}`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json', ...compaction },
      })
      expect(put.status).toBe(201)
      for (let n = 0; n < ROUNDS; n++)
        await write(
          name,
          Array.from({ length: KEYS }, (_, id) => upsert(id, n)),
        )
      await write(name, [remove(0), remove(1)])
    }
    await backendOf(rig.gateway.twain).compact('rows-compacted')
    const expected = Object.fromEntries(Array.from({ length: KEYS - 2 }, (_, i) => [`k${i + 2}`, ROUNDS - 1]))
    const read = async (stream: string) => {
      const page = await openState()
      pages.push(page)
      const render = await readState(page, rig.gateway, stream)
      const bytes = render.bytes
      expect(render.rows).toBe(KEYS - 2)
      expect(await page.evaluate('rows()')).toEqual(expected)
      expect(await page.evaluate('markedIds()')).toEqual(['k100', 'k150', 'k50'])
      return { page, bytes, ms: render.ms }
    }
    const history = await read('rows-history')
    const compacted = await read('rows-compacted')
    console.log(
      `StreamDB render: compacted ${compacted.bytes} B in ${compacted.ms.toFixed(0)} ms, history ${history.bytes} B in ${history.ms.toFixed(0)} ms`,
    )
    expect(compacted.bytes).toBeLessThanOrEqual(history.bytes * 0.02)
    // Live: an update, a delete and a new row reach the page that rendered the compacted stream.
    await write('rows-compacted', [upsert(2, 500), remove(3), upsert(1, 0), upsert(100, 501)])
    const live = compacted.page
    await until(async () => ((await live.evaluate('rows()')) as Record<string, number>)['k1'] === 0)
    const now = (await live.evaluate('rows()')) as Record<string, number>
    expect(now).toEqual({ ...expected, k1: 0, k2: 500, k3: undefined, k100: 501 })
    expect(await live.evaluate('markedIds()')).toEqual(['k100', 'k150', 'k50'])
  }, 120_000)
})
