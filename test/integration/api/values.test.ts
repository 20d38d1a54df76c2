import { describe, expect, it } from 'vitest'
import { InvalidArgumentError, type Message } from '../../../src/index.js'
import { collect } from '../../unit/helpers.js'
import { useFileStore } from '../../helpers/file-store.js'

describe('values through a real topic', () => {
  const store = useFileStore({}, async (twain) => {
    await twain.createTopic('vals')
  })

  async function roundTrip(values: unknown[]): Promise<Message[]> {
    const p = store.twain.producer('vals')
    const before = await store.twain.length('vals')
    await Promise.all(values.map((value) => p.send(1, value)))
    const all = await collect(store.twain.history('vals', { from: before }))
    expect(all).toHaveLength(values.length)
    return all
  }

  it('keeps a JSON-looking string a string', async () => {
    const [m] = await roundTrip(['{"a":1}'])
    expect(m?.value).toBe('{"a":1}')
  })

  it('keeps strings (empty, unicode, large) exactly', async () => {
    const values = ['', 'plain', 'ünïcødé 😀 日本語', 'x'.repeat(100_000), '[1,2]', 'null', '42']
    const got = await roundTrip(values)
    expect(got.map((m) => m.value)).toEqual(values)
    for (const m of got) expect(typeof m.value).toBe('string')
  })

  it('keeps JSON-looking bytes as bytes (Buffer) with the same content', async () => {
    const json = Buffer.from('{"a":1}')
    const [m] = await roundTrip([json])
    expect(Buffer.isBuffer(m?.value)).toBe(true)
    expect((m?.value as Buffer).equals(json)).toBe(true)
  })

  it('keeps a plain Uint8Array (and an empty one) as bytes', async () => {
    const raw = new Uint8Array([0, 1, 2, 250, 255])
    const [a, b] = await roundTrip([raw, new Uint8Array(0)])
    expect(a?.value).toBeInstanceOf(Uint8Array)
    expect([...(a?.value as Uint8Array)]).toEqual([...raw])
    expect(b?.value).toBeInstanceOf(Uint8Array)
    expect((b?.value as Uint8Array).length).toBe(0)
  })

  it('round-trips JSON values: null, numbers, booleans, arrays, nested objects', async () => {
    const values = [
      null,
      0,
      -1.5,
      1e300,
      true,
      false,
      [],
      [1, 'a', null, [2]],
      {},
      { a: { b: [1, { c: 'd' }] }, e: null },
    ]
    const got = await roundTrip(values)
    expect(got.map((m) => m.value)).toEqual(values)
  })

  it('fills the message envelope: topic, partition, offset, key, timestamp, headers, producerId, no type', async () => {
    const before = Date.now()
    const p = store.twain.producer('vals')
    await p.send(7, 'v', { headers: { a: '1', 'ü-h': 'wert 😀' } })
    const [m] = await collect(store.twain.history('vals'))
    expect(m).toMatchObject({
      topic: 'vals',
      partition: 0,
      offset: 0,
      key: 7,
      value: 'v',
      headers: { a: '1', 'ü-h': 'wert 😀' },
      producerId: store.twain.clientId,
    })
    expect(m?.type).toBeUndefined()
    expect(m?.timestamp).toBeGreaterThanOrEqual(before)
    expect(m?.timestamp).toBeLessThanOrEqual(Date.now())
  })

  for (const [what, value] of [
    ['a function', () => 1],
    ['a BigInt inside an object', { n: 1n }],
    ['undefined', undefined],
  ] as Array<[string, unknown]>) {
    it(`rejects sending ${what} with InvalidArgumentError and writes nothing`, async () => {
      const p = store.twain.producer('vals')
      await expect(p.send(1, value)).rejects.toBeInstanceOf(InvalidArgumentError)
      await expect(
        p.sendBatch([
          { key: 1, value: 'fine' },
          { key: 2, value },
        ]),
      ).rejects.toBeInstanceOf(InvalidArgumentError)
      expect(await store.twain.length('vals')).toBe(0)
      expect(await collect(store.twain.history('vals'))).toEqual([])
    })
  }

  it('a bad value in one send does not fail other sends of the same tick', async () => {
    const p = store.twain.producer('vals')
    const [good, bad, good2] = await Promise.allSettled([p.send(1, 'a'), p.send(1, { n: 1n }), p.send(1, 'b')])
    expect(good.status).toBe('fulfilled')
    expect(bad.status).toBe('rejected')
    expect(good2.status).toBe('fulfilled')
    expect((await collect(store.twain.history('vals'))).map((m) => m.value)).toEqual(['a', 'b'])
  })
})
