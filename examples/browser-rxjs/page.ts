// The page's script: an RxJS pipeline over a live tail of the "prices" topic a Node producer writes.
// Bundled for the browser by serve.ts (vite); twainmq/browser brings no RxJS of its own.
// Open it in several tabs: they share one live request (shareTabs). Reload one: it renders from
// its cache at once and fetches only the prices sent since (cache). The stock table is a StreamDB
// (@durable-streams/state, loaded on demand) over a compacted state stream: the page downloads
// each product's latest level, not every change.
import { bufferTime, filter, from, map, scan } from 'rxjs'
import { connect } from 'twainmq/browser'

type Price = { sku: string; cents: number }
type Totals = { count: number; total: number; last?: Price }

// The page is served by the same server as the gateway, so its own origin is the gateway's.
// (The repository type-checks without the DOM library, hence the typed look-ups of the globals.)
const page = globalThis as unknown as {
  location: { origin: string }
  document: { getElementById(id: string): { textContent: string | null } }
}
type Stock = { sku: string; level: number }
const client = connect(page.location.origin, { shareTabs: true })
const doc = page.document
const show = (id: string, text: string | number): void => void (doc.getElementById(id).textContent = String(text))
let renders = 0

from(client.tail<Price>('prices', { cache: true }))
  .pipe(
    map((m) => m.value),
    filter((p) => p.cents >= 100),
    scan<Price, Totals>((t, p) => ({ count: t.count + 1, total: t.total + p.cents, last: p }), { count: 0, total: 0 }),
    bufferTime(250),
    filter((batch) => batch.length > 0),
    map((batch) => batch[batch.length - 1]!),
  )
  .subscribe({
    next: (t) => {
      show('count', t.count)
      show('total', t.total)
      show('average', (t.total / t.count).toFixed(1))
      show('last', `${t.last!.sku} at ${t.last!.cents}`)
      show('renders', ++renders)
    },
    error: (e: Error & { status?: number }) =>
      show('error', `${e.name}${e.status ? ` (HTTP ${e.status})` : ''}: ${e.message}`),
  })

// The stock: a StreamDB over the compacted state stream "stock"; its rows re-rendered on each change.
void (async () => {
  const { createStateSchema, createStreamDB } = await import('@durable-streams/state/db')
  const anyStock = {
    '~standard': { version: 1 as const, vendor: 'example', validate: (value: unknown) => ({ value: value as Stock }) },
  }
  const db = createStreamDB({
    streamOptions: { url: `${page.location.origin}/v1/stream/stock`, contentType: 'application/json' },
    state: createStateSchema({ stock: { schema: anyStock, type: 'stock', primaryKey: 'sku' } }),
  })
  const render = (): void => {
    const rows = [...db.collections.stock.values()].sort((a, b) => a.sku.localeCompare(b.sku))
    show('stock', rows.map((r) => `${r.sku} ${r.level}`).join(', '))
    show('stock-count', rows.length)
  }
  await db.preload()
  render()
  db.collections.stock.subscribeChanges(render)
})().catch((e: Error) => show('error', `stock: ${e.message}`))
