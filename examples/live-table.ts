// A live table: the latest profile of every customer, kept up to date from the `customers` topic,
// joined with orders as they arrive. A second instance changes a customer and deletes another (a
// null value); the table sees both, and `changes()` reports them with the values they replaced.
// Run: npx tsx examples/live-table.ts
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { open } from 'twainmq'

interface Customer {
  name: string
  tier: 'gold' | 'basic'
}

const dir = mkdtempSync(join(tmpdir(), 'twainmq-table-'))
const twain = await open(dir)
await twain.createTopic('customers', { partitions: 2, keyType: 'string' })
await twain.createTopic('orders', { partitions: 2, keyType: 'string' })

// Many updates per customer: the table keeps only the latest.
const customers = twain.producer<Customer | null, string>('customers')
for (let round = 0; round < 50; round++) {
  await Promise.all(
    ['ada', 'bob', 'cy'].map((id) =>
      customers.send(id, { name: `${id}#${round}`, tier: round % 2 ? 'gold' : 'basic' }),
    ),
  )
}

const table = twain.table<Customer, string>('customers')
await table.ready()
console.log(`table ready: ${table.size} customers, ada is ${JSON.stringify(table.get('ada'))}`)

// Follow changes made elsewhere.
const changes: string[] = []
const watching = (async () => {
  for await (const c of table.changes()) {
    changes.push(`${c.key}: ${JSON.stringify(c.previous)} → ${JSON.stringify(c.value)}`)
    if (changes.length === 2) break
  }
})()

const other = await open(dir)
const otherCustomers = other.producer<Customer | null, string>('customers')
await otherCustomers.send('bob', { name: 'Bob', tier: 'gold' })
await otherCustomers.send('cy', null) // a tombstone: cy is removed
await watching
console.log(changes.join('\n'))

// Join orders with the table as they are read.
const orders = other.producer<{ item: string }, string>('orders')
await Promise.all([
  orders.send('ada', { item: 'tea' }),
  orders.send('bob', { item: 'cake' }),
  orders.send('cy', { item: 'jam' }),
])
for await (const o of twain.history<{ item: string }, string>('orders')) {
  const who = table.get(o.key)
  console.log(`order ${o.value.item} by ${o.key}: ${who ? `${who.name} (${who.tier})` : 'unknown customer'}`)
}

await table.close()
await other.close()
await twain.close()
rmSync(dir, { recursive: true, force: true })
console.log('done')
