// Conformance: ensureTopic creates a topic or checks that the existing one has the requested
// options, so a setup script (the Quick start) can run again and again — on both backends.
import { describe, expect, it } from 'vitest'
import { InvalidArgumentError, InvalidTopicNameError, type CreateTopicOptions } from '../../src/index.js'
import { backends, perTest } from './backends.js'

const FULL: CreateTopicOptions = {
  partitions: 3,
  keyType: 'string',
  messageTypes: ['Order', 'Refund'],
  retention: { maxMessages: 100, maxAgeMs: 60_000 },
  maxMessageBytes: 4096,
}

describe.each(backends())('ensureTopic on $name', (kind) => {
  kind.hooks()
  const ctx = perTest(kind)

  it('creates a missing topic, then accepts the same call again and keeps the data', async () => {
    const created = await ctx.twain.ensureTopic('orders', FULL)
    expect(created).toMatchObject({
      name: 'orders',
      partitions: 3,
      keyType: 'string',
      messageTypes: ['Order', 'Refund'],
      retention: { maxMessages: 100, maxAgeMs: 60_000 },
      maxMessageBytes: 4096,
    })
    await ctx.twain.producer<string, string>('orders').send('alice', 'hello')
    const again = await ctx.twain.ensureTopic('orders', FULL)
    expect(again.partitions).toBe(3)
    expect(await ctx.twain.length('orders')).toBe(1)
    const other = await ctx.open()
    expect((await other.ensureTopic('orders', FULL)).keyType).toBe('string')
  })

  it('checks only the options given: omitted ones are whatever the topic has', async () => {
    await ctx.twain.createTopic('orders', FULL)
    expect((await ctx.twain.ensureTopic('orders')).partitions).toBe(3)
    expect((await ctx.twain.ensureTopic('orders', { keyType: 'string' })).partitions).toBe(3)
    // message types are a set: their order does not matter
    await ctx.twain.ensureTopic('orders', { messageTypes: ['Refund', 'Order'] })
  })

  it('a mismatch is an InvalidArgumentError naming the field, the existing and the requested value', async () => {
    await ctx.twain.createTopic('orders', FULL)
    const cases: Array<[CreateTopicOptions, RegExp]> = [
      [{ partitions: 6 }, /Topic "orders" exists with partitions 3, not 6 as requested/],
      [{ keyType: 'u32' }, /Topic "orders" exists with keyType "string", not "u32" as requested/],
      [
        { messageTypes: ['Order'] },
        /Topic "orders" exists with messageTypes \["Order","Refund"\], not \["Order"\] as requested/,
      ],
      [
        { retention: { maxMessages: 100 } },
        /Topic "orders" exists with retention \{"maxMessages":100,"maxAgeMs":60000\}, not \{"maxMessages":100\} as requested/,
      ],
      [{ maxMessageBytes: 1024 }, /Topic "orders" exists with maxMessageBytes 4096, not 1024 as requested/],
    ]
    for (const [options, text] of cases) {
      const e = await ctx.twain.ensureTopic('orders', { ...FULL, ...options }).then(
        () => undefined,
        (err: unknown) => err,
      )
      expect(e).toBeInstanceOf(InvalidArgumentError)
      expect((e as Error).message).toMatch(text)
    }
    // the default key type is compared too when it is given explicitly
    await ctx.twain.createTopic('plain')
    await expect(ctx.twain.ensureTopic('plain', { keyType: 'string' })).rejects.toThrow(
      /exists with keyType "u16", not "string"/,
    )
    expect((await ctx.twain.describeTopic('orders')).partitions).toBe(3) // nothing was changed
  })

  it('validates its options even when the topic exists', async () => {
    await ctx.twain.createTopic('orders', FULL)
    await expect(ctx.twain.ensureTopic('orders', { partitions: 0 })).rejects.toBeInstanceOf(InvalidArgumentError)
    await expect(ctx.twain.ensureTopic('orders', { partition: 3 } as CreateTopicOptions)).rejects.toThrow(/partition/)
    await expect(ctx.twain.ensureTopic('../x')).rejects.toBeInstanceOf(InvalidTopicNameError)
  })

  it('two instances ensuring the same topic at once both succeed and one topic exists', async () => {
    const other = await ctx.open()
    const [a, b] = await Promise.all([
      ctx.twain.ensureTopic('race', { partitions: 2 }),
      other.ensureTopic('race', { partitions: 2 }),
    ])
    expect([a.partitions, b.partitions]).toEqual([2, 2])
    expect(await ctx.twain.listTopics()).toEqual(['race'])
  })
})
