// docs/operators.md's RxJS snippets, as written there.
// Kept in step with the docs by test/unit/type-tests.test.ts; compiled under strict by it (test/types/tsconfig.json).
import { from, concatMap, take } from 'rxjs'
import { ackRx, batchRx, filterAckRx, retryRx } from 'twainmq/rx'

// Order, Job, twain, consumer, save, … : test/types/docs/snippet-names.d.ts

// docs/operators.md, ts block 9
export async function block9(): Promise<void> {

  from(consumer).pipe(ackRx((m) => save(m.value), { concurrency: 4 })).subscribe()
  from(consumer).pipe(batchRx({ size: 100, maxWaitMs: 50 }), concatMap(async (b) => { await store(b); b.ack() })).subscribe()
  from(consumer).pipe(retryRx(deliver, { attempts: 5 }), take(1000)).subscribe((r) => r.ok || alert(r.error))
  from(consumer).pipe(filterAckRx((m) => m.type === 'Order'), ackRx(handle)).subscribe()
}
