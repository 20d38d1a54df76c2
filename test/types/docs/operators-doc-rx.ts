// docs/operators.md's RxJS snippets, as written there.
// Kept in step with the docs by test/unit/type-tests.test.ts; compiled under strict by it (test/types/tsconfig.json).
import type { Consumer, Twain } from 'twainmq'
import { from, concatMap, take } from 'rxjs'
import { ackRx, batchRx, filterAckRx, retryRx } from 'twainmq/rx'

interface Order { id: number; total: number }
interface Job { id: number }
declare function save(v: Order): Promise<void>
declare function bulk(b: readonly unknown[]): Promise<void>
declare function charge(m: { value: Order }): Promise<void>
declare function handle(m: { value: Order }): Promise<void>
declare function bill(v: Order): Promise<void>
declare function run(v: Job): Promise<void>
declare const order: Order
declare const orders: Order[]
declare const a: Order
declare const b: Order
declare const orderSchema: (v: unknown) => Order
declare const db: { save(v: Order): Promise<void> }
declare const warehouse: { insertMany(v: Order[]): Promise<void> }
declare const billing: { charge(v: Order): Promise<void> }
declare const log: { warn(o: object, s: string): void }
declare const metrics: { processed: { inc(): void } }
declare function enrich(m: { value: Order }): Promise<void>
declare function store(b: readonly unknown[]): Promise<void>
declare function deliver(m: { value: Order }): Promise<void>
declare function alert(e: unknown): void
declare const twain: Twain
declare const consumer: Consumer<Order>

// docs/operators.md, ts block 9
export async function block9(): Promise<void> {

  from(consumer).pipe(ackRx((m) => save(m.value), { concurrency: 4 })).subscribe()
  from(consumer).pipe(batchRx({ size: 100, maxWaitMs: 50 }), concatMap(async (b) => { await store(b); b.ack() })).subscribe()
  from(consumer).pipe(retryRx(deliver, { attempts: 5 }), take(1000)).subscribe((r) => r.ok || alert(r.error))
  from(consumer).pipe(filterAckRx((m) => m.type === 'Order'), ackRx(handle)).subscribe()
}
