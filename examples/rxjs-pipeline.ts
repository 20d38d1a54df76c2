// An RxJS pipeline over a consumer group: retry a flaky handler with backoff, dead-letter what keeps
// failing, then batch the results for a bulk write — every message is settled exactly once.
// Run: npx tsx examples/rxjs-pipeline.ts
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { bufferCount, from, lastValueFrom, map, take, toArray } from 'rxjs'
import { open, type GroupMessage } from 'twainmq'
import { retryRx } from 'twainmq/rx'

type Payment = { id: number; amount: number }
const dir = mkdtempSync(join(tmpdir(), 'twainmq-rx-pipeline-'))
const twain = await open(dir)
await twain.createTopic('payments', { partitions: 2, keyType: 'u32' })
await twain
  .producer<Payment>('payments')
  .sendBatch(Array.from({ length: 30 }, (_, id) => ({ key: id, value: { id, amount: id * 10 } })))

const consumer = twain.consumer<Payment>('payments', {
  group: 'ledger',
  deadLetter: 'payments.dlq',
  commitIntervalMs: 50,
})

// A handler that fails now and then (and always for payment 13).
const attempts = new Map<number, number>()
async function charge(m: GroupMessage<Payment>): Promise<void> {
  const n = (attempts.get(m.value.id) ?? 0) + 1
  attempts.set(m.value.id, n)
  if (m.value.id === 13) throw new Error('card declined')
  if (m.value.id % 5 === 0 && n < 2) throw new Error('gateway timeout (transient)')
}

const results = await lastValueFrom(
  from(consumer).pipe(
    retryRx(charge, { attempts: 3, backoff: { initialMs: 5, maxMs: 20, multiplier: 2, jitter: 0.1 } }), // ok → ack, exhausted → term → DLQ
    take(30),
    map((r) => ({ id: r.message.value.id, ok: r.ok, attempts: r.attempts })),
    bufferCount(10), // e.g. a bulk insert of 10 results at a time
    toArray(),
  ),
)
const flat = results.flat()
console.log(
  `processed ${flat.length}: ${flat.filter((r) => r.ok).length} ok, ${flat.filter((r) => !r.ok).length} dead-lettered`,
)
console.log(
  `retried: ${flat
    .filter((r) => r.ok && r.attempts > 1)
    .map((r) => r.id)
    .join(', ')}`,
)

await consumer.close() // commits everything settled
for await (const dead of twain.history<Payment>('payments.dlq')) {
  console.log(
    `dead letter: payment ${dead.value.id} (${dead.headers['x-dead-letter-reason']}) from ${dead.headers['x-original-topic']}/${dead.headers['x-original-partition']}@${dead.headers['x-original-offset']}`,
  )
}
const g = await twain.describeGroup('ledger')
console.log(`lag after close: ${g.topics.reduce((n, t) => n + t.lag, 0)}`)
await twain.close()
rmSync(dir, { recursive: true, force: true })
