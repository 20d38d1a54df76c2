// Key type parameters (compiled by tsc: `npx tsc --noEmit -p .` and test/unit/type-tests.test.ts).
import type { GroupMessage, Key, KeyOf, Message, Twain } from 'twainmq'

interface Order {
  id: number
}
declare const twain: Twain
declare const order: Order

/** `true` only when A and B are the same type. */
type Equal<A, B> = (<X>() => X extends A ? 1 : 2) extends <X>() => X extends B ? 1 : 2 ? true : false
const same = <A, B>(ok: Equal<A, B>): Equal<A, B> => ok

export async function keys(): Promise<void> {
  const byNumber = twain.producer<Order, number>('orders')
  await byNumber.send(1, order)
  // @ts-expect-error a string key on a number-keyed producer
  await byNumber.send('alice', order)
  // @ts-expect-error a bigint key on a number-keyed producer
  await byNumber.sendBatch([{ key: 1n, value: order }])

  const byString = twain.producer<Order, string>('orders')
  await byString.send('alice', order)
  // @ts-expect-error a number key on a string-keyed producer
  await byString.send(7, order)

  // Without a key type parameter any key is accepted (checked at run time against the topic's key type).
  const any = twain.producer<Order>('orders')
  await any.send(1, order)
  await any.send('alice', order)
  await any.send(1n, order)

  for await (const m of twain.tail<Order, number>('orders')) same<typeof m.key, number>(true)
  for await (const m of twain.history<Order, string>('orders')) same<typeof m.key, string>(true)
  for await (const m of twain.history<Order>('orders')) same<typeof m.key, Key>(true)
  for await (const m of twain.tail('orders')) same<typeof m, Message<unknown, Key>>(true)

  const consumer = twain.consumer<Order, bigint>('orders', { group: 'g' })
  for await (const m of consumer) {
    same<typeof m.key, bigint>(true)
    same<typeof m, GroupMessage<Order, bigint>>(true)
  }
  same<ReturnType<typeof consumer.poll>, GroupMessage<Order, bigint> | undefined>(true)
  same<ReturnType<typeof consumer.pollMany>, GroupMessage<Order, bigint>[]>(true)
  const shared = twain.consumer<Order, string>('orders', { group: 'g', mode: 'shared' })
  for await (const m of shared) same<typeof m.key, string>(true)
  for await (const m of twain.consumer<Order>('orders', { group: 'g' })) same<typeof m.key, Key>(true)

  // KeyOf maps a topic's key type to its keys' TypeScript type.
  same<KeyOf<'u8'>, number>(true)
  same<KeyOf<'u16'>, number>(true)
  same<KeyOf<'u32'>, number>(true)
  same<KeyOf<'u64'>, bigint>(true)
  same<KeyOf<'char16'>, string>(true)
  same<KeyOf<'string'>, string>(true)
  const typed = twain.producer<Order, KeyOf<'u64'>>('orders')
  await typed.send(42n, order)
  // @ts-expect-error u64 keys are bigints
  await typed.send(42, order)
}
