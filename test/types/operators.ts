// Operators keep the source's message type (compiled by tsc: `npx tsc --noEmit -p .` and test/unit/type-tests.test.ts).
import { from as ixFrom } from 'ix/asynciterable'
import { filter } from 'ix/asynciterable/operators'
import { from as rxFrom, type Observable } from 'rxjs'
import type { Consumer, GroupMessage } from 'twainmq'
import { ack, batch, pipe, retry, type MessageBatch, type RetryResult } from 'twainmq/operators'
import { ackRx, batchRx, retryRx } from 'twainmq/rx'

interface Order {
  id: number
  total: number
}
type M = GroupMessage<Order>
declare const consumer: Consumer<Order>
/** A handler that needs only part of a message. */
declare function handle(m: { value: Order }): Promise<void>
/** A handler written for any group message. */
declare function logAny(m: GroupMessage): void

type Equal<A, B> = (<X>() => X extends A ? 1 : 2) extends <X>() => X extends B ? 1 : 2 ? true : false
const same = <A, B>(ok: Equal<A, B>): Equal<A, B> => ok
type Item<I> = I extends AsyncIterable<infer T> ? T : I extends Observable<infer T> ? T : never

// A direct call keeps the source's message type, whatever the handler's parameter type.
const a1 = ack(handle)(consumer)
const a2 = ack(logAny)(consumer)
const a3 = ack()(consumer)
const a4 = ack({ concurrency: 2 })(consumer)
const r1 = retry(handle, { attempts: 3 })(consumer)
const b1 = batch({ size: 10 })(consumer)
same<Item<typeof a1>, M>(true)
same<Item<typeof a2>, M>(true)
same<Item<typeof a3>, M>(true)
same<Item<typeof a4>, M>(true)
same<Item<typeof r1>, RetryResult<M>>(true)
same<Item<typeof b1>, MessageBatch<M>>(true)

// In a pipe (ours, IxJS's, RxJS's) an un-annotated handler gets the source's message type.
const p1 = pipe(
  consumer,
  ack(async (m) => same<typeof m, M>(true)),
)
const p2 = pipe(consumer, ack(logAny), batch({ size: 10 }))
const p3 = pipe(
  consumer,
  retry((m) => m.value.total, { attempts: 2 }),
)
same<Item<typeof p1>, M>(true)
same<Item<typeof p2>, MessageBatch<M>>(true)
same<Item<typeof p3>, RetryResult<M>>(true)
const i1 = ixFrom(consumer).pipe(
  filter((m) => m.value.total > 0),
  ack(handle),
)
const i2 = ixFrom(consumer).pipe(ack((m) => m.value.total))
same<Item<typeof i1>, M>(true)
same<Item<typeof i2>, M>(true)
const x1 = rxFrom(consumer).pipe(ackRx((m) => m.value.total))
const x2 = rxFrom(consumer).pipe(ackRx(handle), batchRx({ size: 5 }))
const x3 = rxFrom(consumer).pipe(retryRx(handle, { attempts: 2 }))
const x4 = ackRx(handle)(rxFrom(consumer))
same<Item<typeof x1>, M>(true)
same<Item<typeof x2>, MessageBatch<M>>(true)
same<Item<typeof x3>, RetryResult<M>>(true)
same<Item<typeof x4>, M>(true)

// A handler that cannot take the source's messages is refused.
declare function wantsText(m: { value: string }): void
// @ts-expect-error Order values are not strings
ack(wantsText)(consumer)
// In a pipe, a mismatched operator falls through to the pipes' untyped catch-all overloads: the result is not typed as messages.
// @ts-expect-error Order values are not strings
export const badPipe: AsyncIterable<RetryResult<M>> = pipe(consumer, retry(wantsText, { attempts: 2 }))
// @ts-expect-error Order values are not strings
export const badRx: Observable<M> = rxFrom(consumer).pipe(ackRx(wantsText))
// prettier-ignore
// @ts-expect-error there is no such field
pipe(consumer, ack((m) => m.value.nope))

// A handler typed with exactly the source's message type.
declare function exact(m: M): void
same<Item<ReturnType<ReturnType<typeof ack<M>>>>, M>(true)
export const e1 = ack(exact)(consumer)
export const e2 = retry(exact, { attempts: 1 })(consumer)
export const e3 = ackRx(exact)(rxFrom(consumer))
same<Item<typeof e1>, M>(true)
same<Item<typeof e2>, RetryResult<M>>(true)
same<Item<typeof e3>, M>(true)
