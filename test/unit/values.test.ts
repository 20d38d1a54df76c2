import { describe, expect, it } from 'vitest'
import { ValueKind, decodeValue, encodeValue } from '../../src/core/values.js'
import { InvalidArgumentError } from '../../src/index.js'

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
    [
      'a cyclic object',
      (() => {
        const o: Record<string, unknown> = {}
        o.self = o
        return o
      })(),
    ],
  ]
  for (const [what, value] of BAD) {
    it(`rejects ${what} with InvalidArgumentError`, () => {
      expect(() => encodeValue(value)).toThrow(InvalidArgumentError)
    })
  }
})
