// Consumer groups in one process: nack, term, maxDeliveries and dead letters. Public API only (DESIGN §3.6); shared fixtures in groups-fixtures.ts.
import { describe, expect, it } from 'vitest'
import { sleep, until } from '../../helpers/wait.js'
import { FAST, committed, expectTermRefused, fill, pollN, twain, useGroupStore } from './groups-fixtures.js'
import { everyStore } from '../../conformance/backends.js'

describe.each(everyStore())('consumer groups on $name', (kind) => {
  useGroupStore(kind)

  describe('settlement: nack, term and dead letters', () => {
    it('nack({ delayMs }) redelivers after the delay with deliveryCount + 1', async () => {
      await twain.createTopic('t')
      await fill('t', 0, 1)
      const c = twain.consumer<string>('t', { group: 'g', ...FAST })
      const [m] = await pollN(c, 1)
      expect(m!.deliveryCount).toBe(1)
      const t0 = Date.now()
      m!.nack({ delayMs: 400 })
      await sleep(250) // time is the subject: not redelivered before the delay
      expect(c.poll()).toBeUndefined()
      const [again] = await pollN(c, 1, 2000)
      expect(Date.now() - t0).toBeGreaterThanOrEqual(390)
      expect(again!.offset).toBe(0)
      expect(again!.value).toBe('p0-0')
      expect(again!.deliveryCount).toBe(2)
      again!.nack()
      const [third] = await pollN(c, 1, 1000)
      expect(third!.deliveryCount).toBe(3)
      third!.ack()
      await c.commit()
      expect(await committed('g', 't')).toEqual([1])
      await c.close()
    })

    it('nack redelivers in a for await view too', async () => {
      await twain.createTopic('t')
      await fill('t', 0, 2)
      const c = twain.consumer<string>('t', { group: 'g', ...FAST })
      const seen: Array<[number, number]> = []
      for await (const m of c) {
        seen.push([m.offset, m.deliveryCount])
        if (m.offset === 0 && m.deliveryCount === 1) m.nack({ delayMs: 50 })
        else m.ack()
        if (seen.length === 3) break
      }
      expect(seen).toEqual([
        [0, 1],
        [1, 1],
        [0, 2],
      ])
      await c.close()
    })

    // twainmq-v1 stores no headers, so neither a dead letter: its term() is refused (expectTermRefused).
    it('term(reason) writes a dead letter with the x- headers, the original key/value/type/headers, then acks it', async () => {
      if (!kind.caps.headers) {
        await twain.createTopic('orders', { partitions: 3, keyType: 'char16' }) // no 'string' keys in the TwainMQ format
        await twain.producer<string>('orders').send('order-7', 'seven', { partition: 2 })
        const c = twain.consumer<string>('orders', { group: 'g', deadLetter: 'orders-dlq', ...FAST })
        await expectTermRefused(c, (await pollN(c, 1))[0]!, 'bad order')
        await c.commit()
        expect((await committed('g', 'orders'))[2]).toBe(1)
        expect(await twain.length('orders-dlq')).toBe(0)
        return c.close()
      }
      await twain.createTopic('orders', { partitions: 3, keyType: 'string' })
      twain.registerType('Order')
      const p = twain.producer<{ id: number }>('orders')
      const sent = await p.send(
        'order-7',
        { id: 7 },
        { type: 'Order', headers: { trace: 'abc', 'x-custom': '1' }, partition: 2 },
      )
      await p.send('order-8', { id: 8 }, { partition: 2 })
      const c = twain.consumer<{ id: number }>('orders', { group: 'g', deadLetter: 'orders-dlq', ...FAST })
      const [m, next] = await pollN(c, 2)
      expect(m!.type).toBe('Order')
      m!.term('bad order')
      next!.ack()
      await until(
        async () => (await twain.topicExists('orders-dlq')) && (await twain.length('orders-dlq')) === 1,
        3000,
        'the dead letter',
      )
      const info = await twain.describeTopic('orders-dlq')
      expect(info.partitions).toBe(1)
      expect(info.keyType).toBe('string')
      const dead = []
      for await (const d of twain.history<{ id: number }>('orders-dlq')) dead.push(d)
      expect(dead).toHaveLength(1)
      const d = dead[0]!
      expect(d.key).toBe('order-7')
      expect(d.value).toEqual({ id: 7 })
      expect(d.type).toBe('Order')
      expect(d.headers).toEqual({
        trace: 'abc',
        'x-custom': '1',
        'x-dead-letter-reason': 'bad order',
        'x-original-topic': 'orders',
        'x-original-partition': '2',
        'x-original-offset': String(sent.offset),
        'x-delivery-count': '1',
      })
      // termed = acked: the commit passes it
      await c.commit()
      expect((await committed('g', 'orders'))[2]).toBe(2)
      await c.close()
    })

    it('a dead letter of a u64-keyed topic keeps the bigint key and the bytes value', async () => {
      await twain.createTopic('big', { keyType: 'u64' })
      await twain.producer('big').send(2n ** 63n + 5n, new Uint8Array([1, 2, 3]))
      const c = twain.consumer('big', { group: 'g', deadLetter: 'big-dlq', ...FAST })
      const [m] = await pollN(c, 1)
      if (!kind.caps.headers) return expectTermRefused(c, m!).then(() => c.close())
      m!.term()
      await until(
        async () => (await twain.topicExists('big-dlq')) && (await twain.length('big-dlq')) === 1,
        3000,
        'the dead letter',
      )
      expect((await twain.describeTopic('big-dlq')).keyType).toBe('u64')
      const [d] = await (async () => {
        const out = []
        for await (const x of twain.history('big-dlq')) out.push(x)
        return out
      })()
      expect(d!.key).toBe(2n ** 63n + 5n)
      expect(d!.value).toBeInstanceOf(Uint8Array)
      expect([...(d!.value as Uint8Array)]).toEqual([1, 2, 3])
      await c.close()
    })

    it('term() without a dead-letter topic just acks the message', async () => {
      await twain.createTopic('t')
      await fill('t', 0, 2)
      const c = twain.consumer<string>('t', { group: 'g', ...FAST })
      const ms = await pollN(c, 2)
      ms[0]!.term('nope')
      ms[1]!.ack()
      await c.commit()
      expect(await committed('g', 't')).toEqual([2])
      expect(await twain.listTopics()).toEqual(['t'])
      await c.close()
    })

    it('maxDeliveries terms a message that was delivered that many times (to the dead-letter topic)', async () => {
      await twain.createTopic('t')
      await fill('t', 0, 2)
      const c = twain.consumer<string>('t', { group: 'g', deadLetter: 'dlq', maxDeliveries: 2, ...FAST })
      const errors: Error[] = []
      c.on('error', (e) => errors.push(e))
      const counts: number[] = []
      const first = await pollN(c, 2)
      first[1]!.ack()
      counts.push(first[0]!.deliveryCount)
      first[0]!.nack()
      const second = await pollN(c, 1)
      counts.push(second[0]!.deliveryCount)
      second[0]!.nack()
      await sleep(300) // not delivered a third time within 300 ms
      expect(c.pollMany(10)).toEqual([]) // not delivered a third time
      expect(counts).toEqual([1, 2])
      if (!kind.caps.headers) {
        // the automatic term's dead letter is refused: reported, and offset 0 stays uncommitted
        await until(() => errors.length > 0, 3000, "the dead-letter write's 'error'")
        expect((errors[0]!.cause as Error).message).toMatch(/cannot store headers/)
        await c.commit()
        expect(await committed('g', 't')).toEqual([0])
        return c.close()
      }
      expect(errors).toEqual([])
      await until(
        async () => (await twain.topicExists('dlq')) && (await twain.length('dlq')) === 1,
        3000,
        'the dead letter',
      )
      const dead = []
      for await (const d of twain.history<string>('dlq')) dead.push(d)
      expect(dead[0]!.value).toBe('p0-0')
      expect(dead[0]!.headers['x-original-offset']).toBe('0')
      expect(dead[0]!.headers['x-dead-letter-reason']).toBeTruthy()
      // it was delivered twice
      expect(dead[0]!.headers['x-delivery-count']).toBe('2')
      await c.commit()
      expect(await committed('g', 't')).toEqual([2])
      await c.close()
    })

    it("a failing dead-letter write is reported on 'error' and the message is not lost", async () => {
      await twain.createTopic('t', { keyType: 'u16' })
      await twain.createTopic('dlq', { keyType: 'u8' }) // cannot hold key 1000
      await twain.producer<string>('t').send(1000, 'x')
      const c = twain.consumer<string>('t', { group: 'g', deadLetter: 'dlq', ...FAST })
      const errors: Error[] = []
      c.on('error', (e) => errors.push(e))
      const [m] = await pollN(c, 1)
      m!.term('bad')
      await until(() => errors.length > 0, 3000, "an 'error' event")
      await c.commit()
      expect(await committed('g', 't')).toEqual([0])
      // it comes back
      const [again] = await pollN(c, 1, 3000)
      expect(again!.offset).toBe(0)
      again!.ack()
      await c.close()
    })
  })
})
