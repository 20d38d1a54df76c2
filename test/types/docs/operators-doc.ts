// docs/operators.md's AsyncIterable and IxJS snippets, as written there.
// Kept in step with the docs by test/unit/type-tests.test.ts; compiled under strict by it (test/types/tsconfig.json).
import { ValidationError } from 'twainmq'
import { filter } from 'ix/asynciterable/operators'
import { ack, batch, filterAck, joinTable, retry, pipe } from 'twainmq/operators'
import { from } from 'ix/asynciterable'
import { map } from 'ix/asynciterable/operators'

// Order, Job, twain, consumer, save, … : test/types/docs/snippet-names.d.ts

// docs/operators.md, ts block 2
export async function block2(): Promise<void> {
  // 1. our pipe: pipe(source, op1, op2) is op2(op1(source))
  for await (const m of pipe(consumer, ack(handle))) { /* … */ }

  // 2. IxJS: from(source).pipe(op1, op2), mixed freely with IxJS operators
  for await (const m of from(consumer).pipe(filterAck((m) => m.type === 'Order'), ack(handle))) { /* … */ }
  for await (const id of from(consumer).pipe(ack(handle), map((m) => m.offset))) { /* … */ }

  // 3. a plain call
  for await (const m of ack(handle)(consumer)) { /* … */ }
}

// docs/operators.md, ts block 3
export async function block3(): Promise<void> {
  // Wrong: what filter drops is never acked; with maxInFlight 4 this stalls after 4 dropped messages.
  from(consumer).pipe(filter((m) => m.type === 'Order'), ack(handle))
  // Right: filterAck acks what it drops.
  from(consumer).pipe(filterAck((m) => m.type === 'Order'), ack(handle))
}

// docs/operators.md, ts block 4
export async function block4(): Promise<void> {
  for await (const m of pipe(consumer, ack(async (m) => db.save(m.value), { concurrency: 8 }))) {
    metrics.processed.inc()
  }
}

// docs/operators.md, ts block 5
export async function block5(): Promise<void> {
  for await (const b of pipe(consumer, batch({ size: 500, maxWaitMs: 100 }))) {
    await warehouse.insertMany(b.map((m) => m.value)) // map/filter/slice give plain arrays
    b.ack()
  }
}

// docs/operators.md, ts block 6
export async function block6(): Promise<void> {
  const consumer = twain.consumer<Order>('orders', { group: 'billing', deadLetter: 'orders-dlq' })
  for await (const r of pipe(
    consumer,
    retry((m) => billing.charge(m.value), {
      attempts: 5,
      backoff: { initialMs: 200, maxMs: 10_000 },
      retryIf: (e) => !(e instanceof ValidationError), // no point retrying bad data
    }),
  )) {
    if (!r.ok) log.warn({ offset: r.message.offset, error: r.error }, 'order dead-lettered')
  }
}

// docs/operators.md, ts block 7
export async function block7(): Promise<void> {
  for await (const m of pipe(consumer, filterAck((m) => m.value.total > 0), ack(handle))) {
    console.log('handled', m.offset)
  }
}

// docs/operators.md, ts block 8
export async function block8(): Promise<void> {
  // Handle each message with retries, then write the successes to the warehouse in batches.
  for await (const b of pipe(
    consumer,
    retry(enrich, { attempts: 3 }),        // acks or dead-letters each message itself…
    filter((r) => r.ok),                   // (IxJS filter: safe here, retry has settled every message)
    map((r) => r.message),
    batch({ size: 100, maxWaitMs: 50 }),   // …so these batches are for grouping only
  )) {
    await warehouse.insertMany(b.map((m) => m.value))
  }
}

// docs/operators.md, joinTable
export async function joinTableBlock(): Promise<void> {
  for await (const j of pipe(placedOrders, joinTable(customers, { key: (m) => m.value.customerId, inner: true }))) {
    console.log(j.message.value.id, j.value?.tier)
    j.ack()
  }
}
