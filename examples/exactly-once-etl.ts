// An enrichment ETL with exactly-once outputs: a processor reads clicks, drops the bots' and writes
// each human click, enriched with its user's country, to a second topic. The first processor stops
// part-way (it sent outputs it never acked, as a crash would leave it); the one started after it
// reads those clicks again, and their outputs are recognised, not stored twice. An external sink (a
// Map standing in for a database table) is kept exactly-once the same way, by an upsert keyed by
// the input's position `topic/partition/offset`.
// Run: npx tsx examples/exactly-once-etl.ts
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { open, type ProcessorMessage } from 'twainmq'

type Click = { user: string; page: string; agent: string }
type Enriched = Click & { country: string }

const CLICKS = 300
const countries: Record<string, string> = { alice: 'FR', bob: 'DE', carol: 'JP', dave: 'BR' }
const users = Object.keys(countries)

const dir = mkdtempSync(join(tmpdir(), 'twainmq-etl-'))
const twain = await open(dir)
await twain.createTopic('clicks', { partitions: 3, keyType: 'string' })
await twain.createTopic('clicks.enriched', { partitions: 2, keyType: 'string' })
await twain.producer<Click, string>('clicks').sendBatch(
  Array.from({ length: CLICKS }, (_, i) => {
    const user = users[i % users.length] as string
    const agent = i % 7 === 0 ? 'crawler-bot/2.1' : 'Mozilla/5.0'
    return { key: user, value: { user, page: `/p/${i % 13}`, agent } }
  }),
)

// The external sink: one row per input position, so a click processed twice is written once.
const table = new Map<string, Enriched>()
let duplicates = 0

/** One click: bots are dropped (acked, nothing sent), humans enriched, sent and upserted. */
async function handle(m: ProcessorMessage<Click, string>, ack: boolean): Promise<void> {
  if (!m.value.agent.includes('bot')) {
    const enriched: Enriched = { ...m.value, country: countries[m.value.user] ?? '??' }
    const r = await m.send('clicks.enriched', m.key, enriched) // stored once, whatever happens
    if (r.duplicate) duplicates++
    table.set(`${m.topic}/${m.partition}/${m.offset}`, enriched) // upsert, as INSERT … ON CONFLICT DO UPDATE
  }
  if (ack) m.ack() // committed once the message's outputs are stored
}

const options = { group: 'enrich', commitIntervalMs: 100, sessionTimeoutMs: 3000, drainTimeoutMs: 100 }

// The first run handles 200 clicks but acks only the first 100 of them, then stops.
const first = twain.processor<Click, string>('clicks', options)
let seen = 0
for await (const m of first) {
  await handle(m, seen < 100)
  if (++seen === 200) break
}
await first.close() // commits what was acked; the rest is read again by the next member
const committed = (await twain.describeGroup('enrich')).topics.reduce((n, t) => n + t.committed, 0)
console.log(`first run: handled ${seen} clicks, committed ${committed}`)

// The next run reads from the commits on: its first clicks are ones the first run already handled.
const second = twain.processor<Click, string>('clicks', options)
let left = CLICKS - committed
for await (const m of second) {
  await handle(m, true)
  if (--left === 0) break
}
await second.close()

const humans = Array.from({ length: CLICKS }, (_, i) => i).filter((i) => i % 7 !== 0).length
const stored = await twain.length('clicks.enriched')
const sources = new Set<string>()
for await (const m of twain.history<Enriched>('clicks.enriched')) sources.add(m.headers['x-twain-source'] ?? '')
const lag = (await twain.describeGroup('enrich')).topics.reduce((n, t) => n + t.lag, 0)
console.log(`second run: ${duplicates} outputs were already stored (recognised, not written again)`)
console.log(`enriched topic: ${stored} records for ${humans} human clicks, ${sources.size} distinct sources`)
console.log(`sink table: ${table.size} rows; lag ${lag}`)
await twain.close()
rmSync(dir, { recursive: true, force: true })
if (stored !== humans || sources.size !== humans || table.size !== humans || lag !== 0) process.exit(1)
