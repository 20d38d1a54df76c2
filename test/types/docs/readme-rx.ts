// The README's RxJS snippets, as written there.
// Kept in step with the docs by test/unit/type-tests.test.ts; compiled under strict by it (test/types/tsconfig.json).
import { from, filter, take } from 'rxjs'
import { pullMap, retryRx } from 'twainmq/rx'

// Order, Job, twain, consumer, save, … : test/types/docs/snippet-names.d.ts

// README.md, ts block 5
export async function block5(): Promise<void> {
  from(twain.tail<Order>('orders')).pipe(filter((m) => m.value.total > 100), take(5)).subscribe(console.log)
  twain.tail('orders').asObservable()      // the same bridge, explicitly
}

// README.md, ts block of "A backlog through RxJS"
export async function blockBacklog(): Promise<void> {
  pullMap(twain.tail<Order>('orders', { from: 'start' }), (m) => save(m.value), { concurrency: 4 })
    .subscribe({ error: (e) => console.error(e) })
}

// README.md, ts block 9
export async function block9(): Promise<void> {
  from(consumer).pipe(retryRx(charge, { attempts: 3 })).subscribe((r) => console.log(r.ok))
}
