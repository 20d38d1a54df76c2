// JSON values are stored only when JSON keeps them as they are: what JSON.stringify would silently
// change (NaN → null, a Map → {}, a function dropped, …) is refused with InvalidArgumentError naming
// where it is in the value.
import { describe, expect, it } from 'vitest'
import { encodeValue } from '../../src/core/values.js'
import { jsonTextDepth, MAX_JSON_DEPTH } from '../../src/core/json-depth.js'
import { InvalidArgumentError } from '../../src/index.js'

class Customer {
  constructor(readonly name: string) {}
}

const REFUSED: Array<[string, unknown, RegExp]> = [
  ['NaN', { a: { b: NaN } }, /\$\.a\.b is NaN, which JSON stores as null/],
  ['Infinity', { total: Infinity }, /\$\.total is Infinity, which JSON stores as null/],
  ['-Infinity in an array', [1, -Infinity], /\$\[1\] is -Infinity, which JSON stores as null/],
  ['a top-level NaN', NaN, /\$ is NaN, which JSON stores as null/],
  ['a Map', { m: new Map([['k', 1]]) }, /\$\.m is a Map, which JSON stores as \{\}/],
  ['a Set', { tags: new Set(['x']) }, /\$\.tags is a Set, which JSON stores as \{\}/],
  ['a function inside an object', { id: 1, run: () => 1 }, /\$\.run is a function, which JSON drops/],
  ['a symbol inside an object', { s: Symbol('s') }, /\$\.s is a symbol, which JSON drops/],
  ['a function in an array', [() => 1], /\$\[0\] is a function, which JSON stores as null/],
  ['undefined in an array', [1, undefined, 3], /\$\[1\] is undefined, which JSON stores as null/],
  ['a hole in a sparse array', [1, , 3], /\$\[1\] is undefined, which JSON stores as null/],
  [
    'a class instance without toJSON',
    { customer: new Customer('alice') },
    /\$\.customer is a Customer object, which JSON stores as a plain object/,
  ],
  ['a RegExp', { re: /x/ }, /\$\.re is a RegExp object/],
  ['an Error', { err: new Error('boom') }, /\$\.err is an Error object/],
  [
    'bytes inside an object',
    { data: new Uint8Array([1, 2]) },
    /\$\.data is a Uint8Array, which JSON stores as an object of indices/,
  ],
  ['a Buffer inside an array (its toJSON gives { type, data })', [Buffer.from('x')], /\$\[0\] is a Buffer/],
  ['a BigInt, with its path', { order: { n: 12n } }, /\$\.order\.n is a bigint \(12n\), which JSON cannot store/],
  ['a key that is not an identifier', { 'a b': [{ 'c-d': NaN }] }, /\$\["a b"\]\[0\]\["c-d"\] is NaN/],
]

describe('JSON values: silent coercions are refused (src/core/values.ts)', () => {
  for (const [what, value, text] of REFUSED) {
    it(`refuses ${what}, naming where it is`, () => {
      expect(() => encodeValue(value)).toThrow(InvalidArgumentError)
      expect(() => encodeValue(value)).toThrow(text)
      expect(() => encodeValue(value, true)).toThrow(text) // registered types follow the same rule
    })
  }

  it('keeps what JSON keeps: plain objects, arrays, null, finite numbers, nested values', () => {
    const v = {
      a: [1, 2.5, -0.25, null, true, 'x', { b: [] }],
      c: null,
      d: Object.assign(Object.create(null) as object, { e: 1 }),
    }
    expect(JSON.parse(encodeValue(v).bytes as string)).toEqual(JSON.parse(JSON.stringify(v)))
  })

  it('leaves out object properties that are undefined, as JSON does (optional fields)', () => {
    expect(encodeValue({ a: 1, b: undefined }).bytes).toBe('{"a":1}')
  })

  it('stores an object with toJSON() as what toJSON returns: a Date becomes its ISO string', () => {
    const at = new Date('2024-05-01T12:00:00.000Z')
    expect(encodeValue({ at }).bytes).toBe('{"at":"2024-05-01T12:00:00.000Z"}')
    expect(encodeValue(at).bytes).toBe('"2024-05-01T12:00:00.000Z"')
    class Money {
      constructor(readonly cents: number) {}
      toJSON() {
        return { cents: this.cents }
      }
    }
    expect(encodeValue({ price: new Money(250) }).bytes).toBe('{"price":{"cents":250}}')
    expect(encodeValue({ v: { toJSON: () => 'own' } }).bytes).toBe('{"v":"own"}')
  })

  it('still refuses cycles, with the JSON error as the reason', () => {
    const o: Record<string, unknown> = { a: 1 }
    o.self = o
    expect(() => encodeValue(o)).toThrow(InvalidArgumentError)
    expect(() => encodeValue(o)).toThrow(/circular/i)
  })
})

describe(`JSON values nest at most ${MAX_JSON_DEPTH} levels (src/core/json-depth.ts)`, () => {
  const nested = (levels: number): unknown => JSON.parse('['.repeat(levels) + ']'.repeat(levels))

  it(`stores a value nested ${MAX_JSON_DEPTH} levels and refuses ${MAX_JSON_DEPTH + 1} and 100,000 with InvalidArgumentError naming the limit`, () => {
    expect(encodeValue(nested(MAX_JSON_DEPTH)).bytes).toBe('['.repeat(MAX_JSON_DEPTH) + ']'.repeat(MAX_JSON_DEPTH))
    for (const levels of [MAX_JSON_DEPTH + 1, 5000, 100_000]) {
      expect(() => encodeValue(nested(levels))).toThrow(InvalidArgumentError)
      expect(() => encodeValue(nested(levels))).toThrow(
        `The value nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep; twainmq stores JSON values up to ${MAX_JSON_DEPTH} levels`,
      )
      expect(() => encodeValue(nested(levels), true)).toThrow(
        /The typed value nests arrays and objects more than 1000 levels deep/,
      )
    }
  })

  it('objects count as levels as arrays do', () => {
    let v: unknown = 1
    for (let i = 0; i < MAX_JSON_DEPTH + 1; i++) v = i % 2 ? { a: v } : [v]
    expect(() => encodeValue(v)).toThrow(/more than 1000 levels deep/)
  })

  it('jsonTextDepth counts brackets outside strings only', () => {
    expect(jsonTextDepth('1')).toBe(0)
    expect(jsonTextDepth('[[{"a":[]}],[]]')).toBe(4)
    expect(jsonTextDepth('["[[[[", "\\"[[[", {"}": "]"}]')).toBe(2)
  })
})
