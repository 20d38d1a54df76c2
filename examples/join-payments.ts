// Orders paired with their payments by event time, exactly once: `joinStreams` pairs each order
// with a payment of the same key (the order id) made at most 10 minutes before or after it, and
// sends one record per pair to 'paid-orders'; a payment more than 10 minutes after its order pairs
// with nothing. The first run pairs the payments sent so far and stops; the rest are sent, and the
// next run pairs them with the orders the first one kept in the join's state (restored from its
// changelog), so no pair is sent twice or missed.
// Run: npx tsx examples/join-payments.ts
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { joinStreams, open, type Twain } from 'twainmq'

interface Order {
  id: number
  total: number
}
interface Payment {
  orderId: number
  amount: number
}

const ORDERS = 200
const T0 = Date.UTC(2026, 0, 1, 12)
const MINUTE = 60_000
/** Order i is placed at minute i; three in four are paid, 0 to 14 minutes later. */
const delay = (i: number): number => ((i * 7) % 15) * MINUTE

const dir = mkdtempSync(join(tmpdir(), 'twainmq-join-'))
const twain = await open(dir)
for (const topic of ['orders', 'payments']) await twain.createTopic(topic, { partitions: 2, keyType: 'string' })
await twain.createTopic('paid-orders', { partitions: 2, keyType: 'string' })
const ids = Array.from({ length: ORDERS }, (_, i) => i)
await twain
  .producer<Order, string>('orders')
  .sendBatch(ids.map((i) => ({ key: `order-${i}`, value: { id: i, total: 10 + i }, timestamp: T0 + i * MINUTE })))
// Payments come in the order they were made; the first half is sent now, the rest after the first run.
const paidAt = (i: number): number => T0 + i * MINUTE + delay(i)
const payments = ids.filter((i) => i % 4 !== 0).sort((a, b) => paidAt(a) - paidAt(b))
const pay = (some: number[]) =>
  twain
    .producer<Payment, string>('payments')
    .sendBatch(some.map((i) => ({ key: `order-${i}`, value: { orderId: i, amount: 10 + i }, timestamp: paidAt(i) })))
const half = payments.length / 2
await pay(payments.slice(0, half))
/** How many pairs `payments` make: each pays its own order, if within 10 minutes. */
const pairsOf = (some: number[]): number => some.filter((i) => delay(i) <= 10 * MINUTE).length
const expected = pairsOf(payments)

/** Run the join on `store` until `enough()` (checked after each pair and every 100 ms). */
async function pairs(store: Twain, enough: () => Promise<boolean>): Promise<void> {
  const stop = new AbortController()
  const paid = joinStreams<Order, Payment, { order: number; total: number; paid: number }, string>(store, {
    left: 'orders',
    right: 'payments',
    group: 'orders-paid',
    withinMs: 10 * MINUTE,
    latenessMs: MINUTE,
    to: 'paid-orders',
    join: (order, payment) => ({ order: order.id, total: order.total, paid: payment.amount }),
    processors: { from: 'start', sessionTimeoutMs: 3000, signal: stop.signal }, // aborting it closes the join
  })
  const check = async () => {
    if (!stop.signal.aborted && (await enough())) stop.abort()
  }
  const timer = setInterval(() => void check(), 100)
  try {
    let shown = 0
    for await (const p of paid) {
      if (shown++ < 2) console.log(`  ${p.key}: ${p.value.paid} paid ${(p.rightTime - p.leftTime) / MINUTE} min after`)
      await check()
    }
  } catch (e) {
    if (!stop.signal.aborted) throw e // aborted: the stream ends with AbortError
  } finally {
    clearInterval(timer)
  }
}

// The first run pairs the payments sent so far, then stops.
const other = await open(dir)
await pairs(other, async () => (await twain.length('paid-orders')) >= pairsOf(payments.slice(0, half)))
await other.close()
const first = await twain.length('paid-orders')
console.log(`first run: ${first} pairs stored`)
// The rest of the payments; the next run pairs them with the orders the first one kept in its state.
await pay(payments.slice(half))
await pairs(twain, async () => (await twain.length('paid-orders')) >= expected)
console.log(`second run: ${(await twain.length('paid-orders')) - first} more pairs stored`)

const seen = new Set<number>()
let records = 0
for await (const m of twain.history<{ order: number; total: number; paid: number }, string>('paid-orders')) {
  records++
  seen.add(m.value.order)
}
console.log(`paid-orders: ${records} records, ${seen.size} orders, expected ${expected}`)
await twain.close()
rmSync(dir, { recursive: true, force: true })
