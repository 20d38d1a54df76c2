// Quick start: an embedded log in a temporary directory — create a topic, produce, tail, read history.
// Run: npm run demo   (or: npx tsx examples/quickstart.ts [directory]; run it again on the same
// directory and it appends six more messages: ensureTopic accepts the topic it created last time)
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { open } from 'twainmq'

const dir = process.argv[2] ?? mkdtempSync(join(tmpdir(), 'twainmq-demo-'))
const twain = await open(dir)
console.log(`twainmq ${twain.backend} backend at ${dir}`)

// Keys are u16 integers unless a topic says otherwise: these are strings (customer names).
await twain.ensureTopic('orders', { partitions: 3, keyType: 'string' })
type Order = { item: string; qty: number }

// A live tail, started before we produce: it sees what is sent from now on.
const received: string[] = []
const tailing = (async () => {
  for await (const m of twain.tail<Order, string>('orders')) {
    received.push(`${m.key} -> ${m.value.item} x${m.value.qty}`)
    if (received.length === 6) break // ends this tail and releases its watchers
  }
})()

const producer = twain.producer<Order, string>('orders') // string keys, checked at compile time
// Sends in the same tick are written as one batch per partition.
const written = await Promise.all([
  producer.send('alice', { item: 'apple', qty: 3 }),
  producer.send('bob', { item: 'bread', qty: 1 }),
  producer.send('alice', { item: 'cherry', qty: 12 }),
])
console.log('written at', written.map((w) => `${w.partition}@${w.offset}`).join(', '))
await producer.sendBatch([
  { key: 'carol', value: { item: 'dates', qty: 2 } },
  { key: 'bob', value: { item: 'eggs', qty: 6 }, headers: { source: 'batch' } },
  { key: 'dave', value: { item: 'figs', qty: 4 } },
])

await tailing
console.log('tail received:\n  ' + received.join('\n  '))

console.log('history, partition by partition, oldest first:')
for await (const m of twain.history<Order, string>('orders'))
  console.log(`  ${m.partition}@${m.offset} key=${m.key}`, m.value)

const info = await twain.describeTopic('orders')
console.log(
  'offsets:',
  info.offsets.map((o) => `${o.partition}:[${o.start},${o.end})`).join(' '),
  '| length',
  await twain.length('orders'),
)

await twain.close()
if (process.argv[2] === undefined) rmSync(dir, { recursive: true, force: true })
console.log('done')
