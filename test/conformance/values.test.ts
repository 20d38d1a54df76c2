// Conformance: keys of every type, value kinds, headers, message types, size limits — on both backends.
import { describe, expect, it } from 'vitest'
import {
  InvalidKeyError,
  MessageTooLargeError,
  UnknownMessageTypeError,
  ValidationError,
  type Key,
  type KeyType,
  type Message,
  type Twain,
} from '../../src/index.js'
import { backends, perTest } from './backends.js'

async function roundTrip<V>(
  twain: Twain,
  topic: string,
  items: Array<{ key: Key; value: V; headers?: Record<string, string>; type?: string }>,
): Promise<Message<V>[]> {
  const sent = await twain.producer<V>(topic).sendBatch(items.map((i) => ({ ...i, partition: 0 })))
  const out: Message<V>[] = []
  for await (const m of twain.history<V>(topic, { partition: 0, from: sent[0]?.offset ?? 0 })) out.push(m)
  return out
}

describe.each(backends())('keys and values on $name', (kind) => {
  kind.hooks()
  const ctx = perTest(kind)

  const keyCases: Array<[KeyType, Key[], unknown[]]> = [
    ['u8', [0, 1, 255], [256, -1, 1.5, '1']],
    ['u16', [0, 42, 65535], [65536, 1n]],
    ['u32', [0, 12345, 2 ** 32 - 1], [2 ** 32, NaN]],
    ['u64', [0n, 42n, 2n ** 64n - 1n], [2n ** 64n, -1n, 'x']],
    ['char8', ['', 'abc', 'exactly8', 'ñé'], ['ninechars', 5]],
    ['string', ['', 'user-1', 'x'.repeat(1000), '日本語 🎉'], [1, null]],
  ]

  for (const [keyType, good, bad] of keyCases) {
    it(`keys of type ${keyType} round-trip; invalid ones throw InvalidKeyError`, async () => {
      await ctx.twain.createTopic('k', { keyType })
      const got = await roundTrip(
        ctx.twain,
        'k',
        good.map((key, i) => ({ key, value: `v${i}` })),
      )
      expect(got.map((m) => m.key)).toEqual(good)
      const p = ctx.twain.producer('k')
      for (const key of bad) await expect(p.send(key as Key, 'x')).rejects.toBeInstanceOf(InvalidKeyError)
    })
  }

  it('values keep their kind: text (also JSON-looking), bytes, JSON values', async () => {
    await ctx.twain.createTopic('v')
    const values: unknown[] = [
      'plain',
      '{"a":1}',
      '123',
      '',
      'ünï©ødé 🎉',
      { a: 1, b: [true, null] },
      [1, 'two'],
      42,
      1.5,
      true,
      null,
      Buffer.from([0, 255, 10]),
      new Uint8Array([7, 8]),
    ]
    const got = await roundTrip<unknown>(
      ctx.twain,
      'v',
      values.map((value, i) => ({ key: i, value })),
    )
    expect(got.map((m) => m.value)).toEqual(values.map((v) => (v instanceof Uint8Array ? Buffer.from(v) : v)))
    expect(Buffer.isBuffer(got[11]?.value)).toBe(true)
    expect(typeof got[1]?.value).toBe('string')
    expect(typeof got[2]?.value).toBe('string')
  })

  it('large values and many headers round-trip', async () => {
    await ctx.twain.createTopic('big', { maxMessageBytes: 4 * 1024 * 1024 })
    const big = 'x'.repeat(2 * 1024 * 1024)
    const headers = JSON.parse('{"__proto__":"p","content-type":"text/plain","ünï":"cödé"}') as Record<string, string>
    for (let i = 0; i < 50; i++) headers[`h${i}`] = `v${i}`
    const got = await roundTrip<unknown>(ctx.twain, 'big', [
      { key: 1, value: big, headers },
      { key: 2, value: Buffer.alloc(100_000, 3) },
    ])
    expect(got[0]?.value).toBe(big)
    expect(got[0]?.headers).toEqual(headers)
    expect(Object.keys(got[0]?.headers ?? {})).toContain('__proto__')
    expect((got[1]?.value as Buffer).length).toBe(100_000)
  })

  it('producerId is the clientId; timestamps are the send time', async () => {
    const other = await ctx.open({ clientId: 'producer-b' })
    await ctx.twain.createTopic('t')
    const before = Date.now()
    await other.producer('t').send(1, 'x')
    const [m] = await roundTrip(ctx.twain, 't', []).then(async () => {
      const out: Message[] = []
      for await (const x of ctx.twain.history('t')) out.push(x)
      return out
    })
    expect(m?.producerId).toBe('producer-b')
    expect(m?.timestamp).toBeGreaterThanOrEqual(before - 1)
    expect(m?.timestamp).toBeLessThanOrEqual(Date.now() + 1)
  })

  it('registered message types are validated, tagged and come back typed', async () => {
    await ctx.twain.createTopic('typed', { messageTypes: ['Order'] })
    ctx.twain.registerType<{ id: number }>('Order', (v) => {
      if (typeof (v as { id?: unknown }).id !== 'number') throw new Error('id must be a number')
      return v as { id: number }
    })
    const got = await roundTrip<unknown>(ctx.twain, 'typed', [
      { key: 1, value: { id: 7 }, type: 'Order' },
      { key: 2, value: 'untyped' },
    ])
    expect(got.map((m) => [m.type, m.value])).toEqual([
      ['Order', { id: 7 }],
      [undefined, 'untyped'],
    ])
    await expect(ctx.twain.producer('typed').send(1, { id: 'x' }, { type: 'Order' })).rejects.toBeInstanceOf(
      ValidationError,
    )
    await expect(ctx.twain.producer('typed').send(1, {}, { type: 'Nope' })).rejects.toBeInstanceOf(
      UnknownMessageTypeError,
    )
  })

  it('maxMessageBytes counts key + headers + value and names the sizes', async () => {
    await ctx.twain.createTopic('small', { maxMessageBytes: 100 })
    const p = ctx.twain.producer('small')
    await p.send(1, 'x'.repeat(98)) // 2-byte key + 98
    const e = await p.send(1, 'x'.repeat(99)).catch((x: unknown) => x)
    expect(e).toBeInstanceOf(MessageTooLargeError)
    expect((e as Error).message).toMatch(/101/)
    await expect(p.send(1, 'x', { headers: { h: 'y'.repeat(100) } })).rejects.toBeInstanceOf(MessageTooLargeError)
    expect(await ctx.twain.length('small')).toBe(1)
  })
})
