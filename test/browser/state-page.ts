// A test page that reads a State Protocol stream with `@durable-streams/state`'s StreamDB, as an
// application would: one collection of rows (type `row`, primary key `id`) and a live query over
// it, every row rendered once the DB is up to date. `openDB(url)` resolves with the time from the
// call to that first complete render and the number of rows; `rows()` gives each row's `n`.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { bundle } from './bundle.js'
import type { TestGateway } from './gateway.js'

const HTML = `<!doctype html><html><head><meta charset="utf-8"><title>twainmq StreamDB test</title></head>
<body><p id="count"></p><ul id="rows"></ul>
<script type="module">
  const { createStreamDB, createStateSchema, createLiveQueryCollection, eq } = await import('/state.js')
  const anyObject = { '~standard': { version: 1, vendor: 'twainmq-test', validate: (value) => ({ value }) } }
  const schema = createStateSchema({ rows: { schema: anyObject, type: 'row', primaryKey: 'id' } })
  window.openDB = async (url) => {
    const t0 = performance.now()
    const db = createStreamDB({ streamOptions: { url, contentType: 'application/json' }, state: schema })
    window.db = db
    await db.preload()
    window.marked = createLiveQueryCollection({
      query: (q) => q.from({ r: db.collections.rows }).where(({ r }) => eq(r.marked, true)),
      startSync: true,
    })
    await window.marked.preload()
    const list = document.getElementById('rows')
    const items = document.createDocumentFragment()
    for (const row of db.collections.rows.values()) {
      const li = document.createElement('li')
      li.textContent = row.id + ' ' + row.n
      items.appendChild(li)
    }
    list.replaceChildren(items)
    document.getElementById('count').textContent = String(db.collections.rows.size)
    await new Promise((resolve) => requestAnimationFrame(() => resolve()))
    return { ms: performance.now() - t0, rows: db.collections.rows.size }
  }
  window.rows = () => Object.fromEntries([...window.db.collections.rows.values()].map((r) => [r.id, r.n]))
  window.markedIds = () => [...window.marked.values()].map((r) => r.id).sort()
  window.closeDB = () => window.db?.close()
  window.ready = true
</script></body></html>`

/** Builds the StreamDB page (`state.html`) and its bundle (`state.js`) into `dir`. */
export async function buildStatePage(dir: string): Promise<void> {
  await bundle(join(import.meta.dirname, 'state-entry.ts'), dir, 'state')
  writeFileSync(join(dir, 'state.html'), HTML)
}

/**
 * Open StreamDB over `stream` in a state page (`openDB`): the response bytes the gateway sent for
 * it, the first complete render's time and the rows rendered then.
 */
export async function readState(
  page: Page,
  gateway: TestGateway,
  stream: string,
): Promise<{ bytes: number; ms: number; rows: number }> {
  gateway.resetBytes()
  const r = (await page.evaluate(`openDB(${JSON.stringify(`${gateway.url}/v1/stream/${stream}`)})`)) as {
    ms: number
    rows: number
  }
  return { bytes: gateway.bytesFor(`/v1/stream/${stream}`), ms: r.ms, rows: r.rows }
}
