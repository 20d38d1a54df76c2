import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { ValueKind, decodeValue, encodeValue } from '../../src/core/values.js'
import { InvalidArgumentError, open, type Message, type Twain } from '../../src/index.js'
import { collect, makeTmp, rmTmp } from './helpers.js'

describe('value codec (src/core/values.ts)', () => {
  it('stores strings as text, Uint8Array/Buffer as bytes and everything else as JSON', () => {
    expect(encodeValue('{"a":1}').kind).toBe(ValueKind.Text)
    expect(encodeValue(Buffer.from('x')).kind).toBe(ValueKind.Bytes)
    expect(encodeValue(new Uint8Array([1])).kind).toBe(ValueKind.Bytes)
    expect(encodeValue({ a: 1 }).kind).toBe(ValueKind.Json)
    expect(encodeValue(null).kind).toBe(ValueKind.Json)
    expect(encodeValue({ a: 1 }, true).kind).toBe(ValueKind.Typed)
  })

  it('encodes only the viewed part of a Uint8Array that is a window on a larger buffer', () => {
    const big = new Uint8Array([0, 1, 2, 3, 4, 5])
    const view = big.subarray(2, 4)
    const { kind, bytes } = encodeValue(view)
    const stored = Buffer.from(bytes)
    expect([...(decodeValue(kind, stored, 0, stored.length) as Buffer)]).toEqual([2, 3])
  })

  it('decodes bytes into a copy that does not alias the read buffer', () => {
    const buf = Buffer.from([1, 2, 3, 4])
    const v = decodeValue(ValueKind.Bytes, buf, 1, 3) as Buffer
    buf[1] = 99
    expect([...v]).toEqual([2, 3])
  })

  it('rejects an unknown stored value kind with InvalidArgumentError naming it', () => {
    expect(() => decodeValue(9, Buffer.alloc(0), 0, 0)).toThrow(/9/)
    expect(() => decodeValue(9, Buffer.alloc(0), 0, 0)).toThrow(InvalidArgumentError)
  })

  const BAD: Array<[string, unknown]> = [
    ['a function', () => 1],
    ['undefined', undefined],
    ['a symbol', Symbol('s')],
    ['a top-level BigInt', 1n],
    ['a BigInt inside an object', { n: 1n }],
    ['a BigInt inside an array', [1, 2n]],
    ['a cyclic object', (() => { const o: Record<string, unknown> = {}; o.self = o; return o })()],
  ]
  for (const [what, value] of BAD) {
    it(`rejects ${what} with InvalidArgumentError`, () => {
      expect(() => encodeValue(value)).toThrow(InvalidArgumentError)
    })
  }
})

describe('values through a real topic', () => {
  let dir: string
  let twain: Twain
  beforeEach(async () => {
    dir = makeTmp()
    twain = await open(dir)
    await twain.createTopic('vals')
  })
  afterEach(async () => {
    await twain.close()
    rmTmp(dir)
  })

  async function roundTrip(values: unknown[]): Promise<Message[]> {
    const p = twain.producer('vals')
    const before = await twain.length('vals')
    await Promise.all(values.map((value) => p.send(1, value)))
    const all = await collect(twain.history('vals', { from: before }))
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
    const values = [null, 0, -1.5, 1e300, true, false, [], [1, 'a', null, [2]], {}, { a: { b: [1, { c: 'd' }] }, e: null }]
    const got = await roundTrip(values)
    expect(got.map((m) => m.value)).toEqual(values)
  })

  it('fills the message envelope: topic, partition, offset, key, timestamp, headers, producerId, no type', async () => {
    const before = Date.now()
    const p = twain.producer('vals')
    await p.send(7, 'v', { headers: { a: '1', 'ü-h': 'wert 😀' } })
    const [m] = await collect(twain.history('vals'))
    expect(m).toMatchObject({ topic: 'vals', partition: 0, offset: 0, key: 7, value: 'v', headers: { a: '1', 'ü-h': 'wert 😀' }, producerId: twain.clientId })
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
      const p = twain.producer('vals')
      await expect(p.send(1, value)).rejects.toBeInstanceOf(InvalidArgumentError)
      await expect(p.sendBatch([{ key: 1, value: 'fine' }, { key: 2, value }])).rejects.toBeInstanceOf(InvalidArgumentError)
      expect(await twain.length('vals')).toBe(0)
      expect(await collect(twain.history('vals'))).toEqual([])
    })
  }

  it('a bad value in one send does not fail other sends of the same tick', async () => {
    const p = twain.producer('vals')
    const [good, bad, good2] = await Promise.allSettled([p.send(1, 'a'), p.send(1, { n: 1n }), p.send(1, 'b')])
    expect(good.status).toBe('fulfilled')
    expect(bad.status).toBe('rejected')
    expect(good2.status).toBe('fulfilled')
    expect((await collect(twain.history('vals'))).map((m) => m.value)).toEqual(['a', 'b'])
  })
})
