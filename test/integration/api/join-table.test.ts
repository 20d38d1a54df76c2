// Stream–table joins through the public API (`joinTable` of twainmq/operators, `joinTableRx` of
// twainmq/rx; README "Tables"), on a directory and on Redis: a processor's orders joined with a
// customer table of a topic with another partition count; every enriched order stored once with
// the customer's tier as the table held it when the order was handed on; an inner join acks the
// orders of unknown customers (the group commits past them); the RxJS form gives the same.
import { from, lastValueFrom, take, toArray } from 'rxjs'
import { describe, expect, it } from 'vitest'
import { joinTable, pipe } from '../../../src/operators/index.js'
import { joinTableRx } from '../../../src/operators/rx/index.js'
import { backends } from '../../conformance/backends.js'
import { until } from '../../helpers/wait.js'
import { twain, useGroupStore } from '../groups/groups-fixtures.js'

const kinds = backends().filter((k) => k.name === 'file' || k.name === 'redis')

interface Order {
  customer: string
  total: number
}

describe.each(kinds)('joinTable on $name', (kind) => {
  useGroupStore(kind)

  async function setup(): Promise<void> {
    await twain.createTopic('customers', { partitions: 3, keyType: 'string' })
    await twain.createTopic('orders', { partitions: 2, keyType: 'string' })
    await twain.createTopic('enriched', { partitions: 1, keyType: 'string' })
    await twain.producer<string, string>('customers').sendBatch([
      { key: 'ann', value: 'gold' },
      { key: 'bob', value: 'silver' },
    ])
  }

  const order = (id: number, customer: string) => ({ key: `o${id}`, value: { customer, total: id } })

  async function enriched(): Promise<Array<[string, string]>> {
    const out: Array<[string, string]> = []
    for await (const m of twain.history<{ tier: string }, string>('enriched')) out.push([m.key, m.value.tier])
    return out.sort()
  }

  it('each order once, with its customer as the table held it when the order was handed on; unknown ones dropped and committed', async () => {
    await setup()
    const orders = twain.producer<Order, string>('orders')
    await orders.sendBatch([order(1, 'ann'), order(2, 'bob'), order(3, 'zed')])
    const customers = twain.table<string, string>('customers')
    const proc = twain.processor<Order, string>('orders', { group: 'enrich', from: 'start' })
    let handled = 0
    const run = (async () => {
      for await (const j of pipe(proc, joinTable(customers, { key: (m) => m.value.customer, inner: true }))) {
        await j.message.send('enriched', j.message.key, { tier: j.value })
        j.ack()
        handled++
      }
    })()
    await until(() => handled === 2, 30_000, 'the first two orders')
    await twain.producer<string, string>('customers').send('ann', 'platinum')
    await until(() => customers.get('ann') === 'platinum', 30_000, 'the table to follow the update')
    await orders.sendBatch([order(4, 'ann'), order(5, 'zed'), order(6, 'bob')])
    await until(() => handled === 4, 30_000, 'the next two orders')
    await until(
      async () => {
        const d = await twain.describeGroup('enrich')
        return d.topics.length === 2 && d.topics.every((p) => p.end === p.committed)
      },
      30_000,
      'the group to commit past every order, the dropped ones too',
    )
    await proc.close()
    await run
    await customers.close()
    expect(await enriched()).toEqual([
      ['o1', 'gold'],
      ['o2', 'silver'],
      ['o4', 'platinum'],
      ['o6', 'silver'],
    ])
  })

  it('joinTableRx: a left join over an RxJS pipeline', async () => {
    await setup()
    await twain.producer<Order, string>('orders').sendBatch([order(1, 'bob'), order(2, 'zed')])
    const customers = twain.table<string, string>('customers')
    const proc = twain.processor<Order, string>('orders', { group: 'enrich-rx', from: 'start' })
    const got = await lastValueFrom(
      from(proc).pipe(joinTableRx(customers, { key: (m) => m.value.customer }), take(2), toArray()),
    )
    for (const j of got) j.ack()
    await proc.close()
    await customers.close()
    expect(got.map((j) => [j.message.key, j.value]).sort()).toEqual([
      ['o1', 'silver'],
      ['o2', undefined],
    ])
  })
})
