// A compacted State Protocol stream (`Stream-Compaction: state`) read by `@durable-streams/state`'s
// StreamDB, unchanged. A board's cards change 1,000 times; the gateway keeps each card's latest
// event (and the delete of one), so a new StreamDB downloads the live state, not the history, and
// then follows live changes. TanStack DB's live query keeps the cards of one owner.
// Run: npx tsx examples/http-state.ts [directory]   (needs @durable-streams/state and @tanstack/db)
import { mkdtempSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createLiveQueryCollection, createStateSchema, createStreamDB, eq } from '@durable-streams/state/db'
import { open } from 'twainmq'
import { createGateway } from 'twainmq/gateway'

interface Card {
  id: string
  title: string
  owner: string
  version: number
}

const dir = process.argv[2] ?? mkdtempSync(join(tmpdir(), 'twainmq-state-'))
const twain = await open(dir)
// Compaction passes every second here (default 30 s), so the example need not wait long.
const gateway = createGateway(twain, { compactEveryMs: 1000 })
const server = createServer(gateway.node)
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
const board = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/stream/board`

// Any Standard Schema validator works (Zod, Valibot, …); this one takes every object.
const cardSchema = {
  '~standard': { version: 1 as const, vendor: 'example', validate: (value: unknown) => ({ value: value as Card }) },
}
const schema = createStateSchema({ cards: { schema: cardSchema, type: 'card', primaryKey: 'id' } })
const append = async (events: unknown[]): Promise<void> => {
  const r = await fetch(board, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(events),
  })
  if (!r.ok) throw new Error(`append: ${r.status} ${await r.text()}`)
}

const created = await fetch(board, {
  method: 'PUT',
  headers: { 'content-type': 'application/json', 'stream-compaction': 'state' },
})
console.log('PUT board ->', created.status, 'stream-compaction:', created.headers.get('stream-compaction'))

// Ten cards, each edited 100 times, then one deleted: 1,001 events.
for (let version = 0; version < 100; version++)
  await append(
    Array.from({ length: 10 }, (_, i) =>
      schema.cards[version === 0 ? 'insert' : 'update']({
        value: { id: `c${i}`, title: `card ${i} v${version}`, owner: i % 2 === 0 ? 'ann' : 'bob', version },
      }),
    ),
  )
await append([schema.cards.delete({ key: 'c9' })])

// Wait for the gateway's pass, then a new reader gets 10 events instead of 1,001.
let events: unknown[] = []
for (;;) {
  events = (await (await fetch(board)).json()) as unknown[]
  if (events.length <= 10) break
  await new Promise((resolve) => setTimeout(resolve, 200))
}
console.log(`a new reader downloads ${events.length} events (1001 were appended)`)

const db = createStreamDB({ streamOptions: { url: board, contentType: 'application/json' }, state: schema })
await db.preload()
const anns = createLiveQueryCollection({
  query: (q) => q.from({ card: db.collections.cards }).where(({ card }) => eq(card.owner, 'ann')),
  startSync: true,
})
await anns.preload()
const titles = (cards: Iterable<Card>): string =>
  [...cards]
    .map((c) => c.title)
    .sort()
    .join(', ')
console.log(`StreamDB: ${db.collections.cards.size} cards; ann's: ${titles(anns.values())}`)

// Live: a new card for ann and an edit arrive in the DB and in the live query.
await append([
  schema.cards.insert({ value: { id: 'c10', title: 'card 10 v0', owner: 'ann', version: 0 } }),
  schema.cards.update({ value: { id: 'c0', title: 'card 0 v100', owner: 'ann', version: 100 } }),
])
while (anns.size < 6) await new Promise((resolve) => setTimeout(resolve, 20))
console.log(`live: ann's: ${titles(anns.values())}`)

db.close()
await gateway.close()
server.closeAllConnections()
await new Promise<void>((resolve) => server.close(() => resolve()))
await twain.close()
console.log('done')
