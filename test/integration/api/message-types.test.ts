import { describe, expect, it } from 'vitest'
import {
  open,
  TypeAlreadyRegisteredError,
  UnknownMessageTypeError,
  ValidationError,
  type Message,
  type StandardSchemaV1,
} from '../../../src/index.js'
import { useFileStore } from '../../helpers/file-store.js'

const store = useFileStore()

interface Order {
  id: number
  total: number
}

/** A tiny Standard Schema validator, as zod/valibot/arktype expose. */
const orderSchema: StandardSchemaV1<unknown, Order> = {
  '~standard': {
    version: 1,
    vendor: 'test',
    validate: (v) => {
      const o = v as Partial<Order>
      return typeof o?.id === 'number' && typeof o.total === 'number' && o.total >= 0
        ? { value: { id: o.id, total: o.total } }
        : { issues: [{ message: 'expected { id: number, total: number >= 0 }' }] }
    },
  },
}

async function all<V>(topic: string): Promise<Message<V>[]> {
  const out: Message<V>[] = []
  for await (const m of store.twain.history<V>(topic)) out.push(m)
  return out
}

describe('registered message types', () => {
  it('validates on send, tags the message and validates again on read', async () => {
    store.twain.registerType('Order', orderSchema)
    await store.twain.createTopic('orders')
    const p = store.twain.producer('orders')
    await p.send(1, { id: 7, total: 12.5, extra: 'dropped by the schema' }, { type: 'Order' })
    const [m] = await all<Order>('orders')
    expect(m?.type).toBe('Order')
    expect(m?.value).toEqual({ id: 7, total: 12.5 })
    expect(m?.error).toBeUndefined()
  })

  it('rejects an invalid value on send with ValidationError and writes nothing', async () => {
    store.twain.registerType('Order', orderSchema)
    await store.twain.createTopic('orders')
    await expect(store.twain.producer('orders').send(1, { id: 'x' }, { type: 'Order' })).rejects.toBeInstanceOf(
      ValidationError,
    )
    expect(await store.twain.length('orders')).toBe(0)
  })

  it('rejects an unregistered type on send with UnknownMessageTypeError naming it', async () => {
    await store.twain.createTopic('orders')
    await expect(store.twain.producer('orders').send(1, {}, { type: 'Nope' })).rejects.toThrow(UnknownMessageTypeError)
    await expect(store.twain.producer('orders').send(1, {}, { type: 'Nope' })).rejects.toThrow(/"Nope"/)
  })

  it('refuses a type not listed in the topic messageTypes', async () => {
    store.twain.registerType('Order', orderSchema)
    store.twain.registerType('Refund')
    await store.twain.createTopic('orders', { messageTypes: ['Order'] })
    await expect(store.twain.producer('orders').send(1, {}, { type: 'Refund' })).rejects.toThrow(
      UnknownMessageTypeError,
    )
  })

  it('registering a name twice throws TypeAlreadyRegisteredError', () => {
    store.twain.registerType('Order')
    expect(() => store.twain.registerType('Order')).toThrow(TypeAlreadyRegisteredError)
  })

  it('a value that fails validation on read is delivered with `error` and the stream goes on', async () => {
    // Written by an instance whose validator accepted it …
    const writer = await open(store.dir)
    writer.registerType('Order')
    await writer.createTopic('orders')
    await writer.producer('orders').sendBatch([
      { key: 1, value: { id: 1, total: -5 }, type: 'Order' },
      { key: 1, value: { id: 2, total: 3 }, type: 'Order' },
    ])
    await writer.close()
    // … and read by one whose validator rejects the first.
    store.twain.registerType('Order', orderSchema)
    const msgs = await all<Order>('orders')
    expect(msgs).toHaveLength(2)
    expect(msgs[0]?.error).toBeInstanceOf(ValidationError)
    expect(msgs[0]?.error?.message).toMatch(/orders\/0@0/)
    expect(msgs[0]?.value).toEqual({ id: 1, total: -5 })
    expect(msgs[1]?.error).toBeUndefined()
    expect(msgs[1]?.value).toEqual({ id: 2, total: 3 })
  })

  it('a consumer group delivers a value that fails validation with `error`, the fields as read, and goes on', async () => {
    const writer = await open(store.dir)
    writer.registerType('Order')
    await writer.createTopic('orders')
    await writer.producer('orders').sendBatch([
      { key: 1, value: { id: 1, total: -5 }, type: 'Order', headers: { h: 'v' } },
      { key: 1, value: { id: 2, total: 3 }, type: 'Order' },
    ])
    await writer.close()
    store.twain.registerType('Order', orderSchema)
    const c = store.twain.consumer<Order>('orders', { group: 'g' })
    const got = []
    for await (const m of c) {
      got.push(m)
      m.ack()
      if (got.length === 2) break
    }
    const [bad, good] = got
    expect(bad?.error).toBeInstanceOf(ValidationError)
    expect(bad?.error?.message).toMatch(/orders\/0@0/)
    expect(bad).toMatchObject({
      topic: 'orders',
      partition: 0,
      offset: 0,
      key: 1,
      type: 'Order',
      headers: { h: 'v' },
      value: { id: 1, total: -5 },
      deliveryCount: 1,
    })
    expect(good?.error).toBeUndefined()
    expect(good).toMatchObject({ offset: 1, value: { id: 2, total: 3 }, headers: {}, deliveryCount: 1 })
    // The same own fields, in the same order, as group messages always had (made by the reader now, not copied).
    expect(Object.keys(good as object)).toEqual([
      'topic',
      'partition',
      'offset',
      'key',
      'timestamp',
      'value',
      'type',
      'headers',
      'producerId',
      'error',
      'deliveryCount',
    ])
    await c.close()
  })

  it('a function validator runs on read for tails and consumers too (on send and read: it must be idempotent)', async () => {
    let calls = 0
    store.twain.registerType('Celsius', (v) => {
      calls++
      const c = (v as { celsius?: unknown }).celsius
      if (typeof c !== 'number') throw new Error('celsius must be a number')
      return { celsius: c }
    })
    await store.twain.createTopic('temps')
    await store.twain.producer('temps').send(1, { celsius: 21, note: 'dropped' }, { type: 'Celsius' })
    expect(calls).toBe(1)
    for await (const m of store.twain.tail<{ celsius: number }>('temps', { from: 'start' })) {
      expect(m.value).toEqual({ celsius: 21 })
      break
    }
    const c = store.twain.consumer<{ celsius: number }>('temps', { group: 'g' })
    for await (const m of c) {
      expect(m.value).toEqual({ celsius: 21 })
      m.ack()
      break
    }
    expect(calls).toBe(3) // send, tail, consumer
  })
})
