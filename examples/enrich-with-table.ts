// Orders enriched with their customer's tier, exactly once: a processor of 'orders' joined with a
// table of 'customers' (a compacted topic, its own partition count) through `joinTable`. Each
// order is sent to 'orders-enriched' with the tier the table held when the order was handed on;
// an order of a customer the table does not know is acked and dropped (an inner join). A customer
// upgraded part-way is seen by the orders after it.
// Run: npx tsx examples/enrich-with-table.ts
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { open } from 'twainmq'
import { joinTable, pipe } from 'twainmq/operators'

interface Order {
  customer: string
  total: number
}

const dir = mkdtempSync(join(tmpdir(), 'twainmq-enrich-'))
const twain = await open(dir)
await twain.createTopic('customers', { partitions: 1, keyType: 'string', compact: true })
await twain.createTopic('orders', { partitions: 2, keyType: 'string' })
await twain.createTopic('orders-enriched', { partitions: 2, keyType: 'string' })

const tiers = twain.producer<string, string>('customers')
await tiers.sendBatch([
  { key: 'ada', value: 'gold' },
  { key: 'bob', value: 'silver' },
])
const orders = twain.producer<Order, string>('orders')
await orders.sendBatch([
  { key: 'o1', value: { customer: 'ada', total: 120 } },
  { key: 'o2', value: { customer: 'bob', total: 35 } },
  { key: 'o3', value: { customer: 'eve', total: 99 } }, // unknown customer: dropped
])

const customers = twain.table<string, string>('customers')
const proc = twain.processor<Order, string>('orders', { group: 'enrich', from: 'start' })
let handled = 0
const done = (async () => {
  for await (const j of pipe(proc, joinTable(customers, { key: (m) => m.value.customer, inner: true }))) {
    const m = j.message
    await m.send('orders-enriched', m.key, { ...m.value, tier: j.value })
    m.ack()
    console.log(`${m.key}: ${m.value.customer} is ${j.value}`)
    if (++handled === 4) break
  }
})()

// Two orders in, bob becomes gold; the table follows the topic live, and the next order sees it.
while (handled < 2) await new Promise((r) => setTimeout(r, 20))
await tiers.send('bob', 'gold')
while (customers.get('bob') !== 'gold') await new Promise((r) => setTimeout(r, 20))
await orders.sendBatch([
  { key: 'o4', value: { customer: 'bob', total: 18 } },
  { key: 'o5', value: { customer: 'ada', total: 7 } },
])
await done
await proc.close()
await customers.close()

let stored = 0
for await (const _ of twain.history('orders-enriched')) stored++
console.log(`orders-enriched: ${stored} orders`)
await twain.close()
rmSync(dir, { recursive: true, force: true })
