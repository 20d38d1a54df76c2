import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { keyCodec } from '../src/core/keys.js'
import { decodeValue, encodeValue } from '../src/core/values.js'
import { open, type Key, type KeyType } from '../src/index.js'
import { collect, makeTmp, rmTmp } from '../test/unit/helpers.js'

const U64_MAX = (1n << 64n) - 1n

/** Full-range Unicode strings (no lone surrogates, which UTF-8 cannot carry). */
const unicode = (maxLength?: number) =>
  fc.oneof(
    fc.string({ unit: 'binary', maxLength }),
    fc.string({ unit: 'grapheme', maxLength }),
    fc.string({ maxLength }),
  )

function charKey(n: number): fc.Arbitrary<string> {
  return unicode(n).filter((s) => Buffer.byteLength(s, 'utf8') <= n)
}

/** An arbitrary valid key for each key type. */
const KEY_ARBS: Array<[KeyType, fc.Arbitrary<Key>]> = [
  ['u8', fc.integer({ min: 0, max: 255 })],
  ['u16', fc.integer({ min: 0, max: 65535 })],
  ['u32', fc.integer({ min: 0, max: 2 ** 32 - 1 })],
  ['u64', fc.oneof(fc.bigInt({ min: 0n, max: U64_MAX }), fc.constantFrom(0n, U64_MAX, 1n << 63n))],
  ['char1', charKey(1)],
  ['char4', charKey(4)],
  ['char16', charKey(16)],
  ['string', unicode()],
]

/** Values of every kind: text (unicode), bytes, JSON. */
const valueArb: fc.Arbitrary<unknown> = fc.oneof(
  unicode(),
  fc.uint8Array({ maxLength: 64 }),
  fc.jsonValue({ maxDepth: 3 }),
)

/** What a value reads back as: strings and bytes unchanged, anything else as its JSON normalisation. */
function expected(v: unknown): unknown {
  if (typeof v === 'string') return v
  if (v instanceof Uint8Array) return Buffer.from(v)
  return JSON.parse(JSON.stringify(v)) as unknown
}

function expectSameValue(actual: unknown, v: unknown): void {
  if (typeof v === 'string') {
    expect(actual).toBe(v)
  } else if (v instanceof Uint8Array) {
    expect(Buffer.isBuffer(actual)).toBe(true)
    expect([...(actual as Buffer)]).toEqual([...v])
  } else {
    expect(typeof actual).not.toBe('string')
    expect(Buffer.isBuffer(actual)).toBe(false)
    expect(actual).toEqual(expected(v))
  }
}

describe('codec properties', () => {
  for (const [type, arb] of KEY_ARBS) {
    it(`law: decode(encode(k)) = k for every valid ${type} key (and encode is deterministic)`, () => {
      const codec = keyCodec(type)
      fc.assert(
        fc.property(arb, (k) => {
          const bytes = codec.encode(k)
          expect(codec.encode(k).equals(bytes)).toBe(true)
          expect(codec.decode(bytes, 0, bytes.length)).toEqual(k)
          expect(codec.normalise(k)).toEqual(k)
        }),
        { numRuns: 300 },
      )
    })
  }

  it('law: integer keys encode big-endian, so byte order = numeric order (u32, u64)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 32 - 1 }), fc.integer({ min: 0, max: 2 ** 32 - 1 }), (a, b) => {
        const c = keyCodec('u32')
        expect(Math.sign(Buffer.compare(c.encode(a), c.encode(b)))).toBe(Math.sign(a - b))
      }),
    )
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: U64_MAX }), fc.bigInt({ min: 0n, max: U64_MAX }), (a, b) => {
        const c = keyCodec('u64')
        expect(Math.sign(Buffer.compare(c.encode(a), c.encode(b)))).toBe(a < b ? -1 : a > b ? 1 : 0)
      }),
    )
  })

  it('law: decodeValue(encodeValue(v)) = v for strings and bytes, and = JSON normalisation of v for JSON values, preserving the kind', () => {
    fc.assert(
      fc.property(valueArb, (v) => {
        const { kind, bytes } = encodeValue(v)
        const stored = Buffer.from(bytes)
        // decode from inside a larger buffer: offsets must be honoured
        const framed = Buffer.concat([Buffer.from('{"x":'), stored, Buffer.from('}')])
        expectSameValue(decodeValue(kind, framed, 5, 5 + stored.length), v)
      }),
      { numRuns: 500 },
    )
  })

  it('law: for every key type, messages sent through a topic come back with equal key and value of the same kind', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: KEY_ARBS.length - 1 }).chain((i) => {
          const [type, keyArb] = KEY_ARBS[i]!
          return fc.record({
            type: fc.constant(type),
            items: fc.array(fc.record({ key: keyArb, value: valueArb }), { minLength: 1, maxLength: 15 }),
          })
        }),
        async ({ type, items }) => {
          const dir = makeTmp()
          const twain = await open(dir)
          try {
            await twain.createTopic('codec', { keyType: type, partitions: 2 })
            const p = twain.producer('codec')
            const meta = await Promise.all(items.map((it) => p.send(it.key, it.value)))
            const got = await collect(twain.history('codec'))
            expect(got).toHaveLength(items.length)
            for (const [i, it] of items.entries()) {
              const m = got.find((g) => g.partition === meta[i]!.partition && g.offset === meta[i]!.offset)!
              expect(m.key).toEqual(keyCodec(type).normalise(it.key))
              expectSameValue(m.value, it.value)
            }
          } finally {
            await twain.close()
            rmTmp(dir)
          }
        },
      ),
      { numRuns: 25 },
    )
  })
})
