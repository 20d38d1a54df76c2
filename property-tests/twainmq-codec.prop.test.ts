import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { Key } from '../src/index.js'
import { b85decode, b85encode, b85Length } from '../src/compat/twainmq/base85.js'
import { parseJson, stringifyJson } from '../src/compat/twainmq/json64.js'
import {
  decodeLine,
  encodeLine,
  keyBytes,
  lineFormat,
  microsOf,
  msToSeconds,
  payloadOf,
  secondsToMs,
} from '../src/compat/twainmq/line-codec.js'

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~'

/** The textbook rule with BigInt, as a reference: pad to 4, 5 digits per word, cut the padding. */
function referenceB85(b: Uint8Array): string {
  const pad = (4 - (b.length % 4)) % 4
  const padded = Buffer.concat([Buffer.from(b), Buffer.alloc(pad)])
  let out = ''
  for (let i = 0; i < padded.length; i += 4) {
    let v = BigInt(padded.readUInt32BE(i))
    let group = ''
    for (let k = 0; k < 5; k++) {
      group = ALPHABET[Number(v % 85n)] + group
      v /= 85n
    }
    out += group
  }
  return pad ? out.slice(0, out.length - pad) : out
}

const unicode = (maxLength?: number) =>
  fc.oneof(fc.string({ unit: 'binary', maxLength }), fc.string({ unit: 'grapheme', maxLength }))

/** JSON values with 64-bit integers, as TwainMQ typed payloads may hold. */
const json64: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    // (an integral double beyond 2^53 reads back as a bigint, as Python reads it as an int)
    fc
      .double({ noNaN: true, noDefaultInfinity: true })
      .filter((d) => !Object.is(d, -0) && !(Number.isInteger(d) && !Number.isSafeInteger(d) && Math.abs(d) < 1e21)),
    fc
      .bigInt({ min: -(2n ** 64n), max: 2n ** 64n })
      .filter((b) => b > BigInt(Number.MAX_SAFE_INTEGER) || b < BigInt(Number.MIN_SAFE_INTEGER)),
    unicode(20),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(
      unicode(8).filter((k) => k !== '__proto__'),
      tie('value'),
      { maxKeys: 4 },
    ),
  ),
})).value

describe('TwainMQ codecs (properties)', () => {
  it('base85 equals the textbook rule, has the documented length and decodes back', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 80 }), (b) => {
        const text = b85encode(b)
        expect(text).toBe(referenceB85(b))
        expect(text.length).toBe(b85Length(b.length))
        expect(b85decode(text).equals(Buffer.from(b))).toBe(true)
      }),
      { numRuns: 500 },
    )
  })

  it('lossless JSON: parse(stringify(v)) is v, 64-bit integers included', () => {
    fc.assert(
      fc.property(json64, (v) => {
        const text = stringifyJson(v)
        expect(text).toMatch(/^[\x20-\x7e]*$/) // ensure_ascii
        expect(parseJson(text)).toEqual(v)
      }),
      { numRuns: 500 },
    )
  })

  const keyArb = (width: number): fc.Arbitrary<Key> => {
    if (width === 8) return fc.bigInt({ min: 0n, max: 2n ** 64n - 1n })
    if (width > 0) return fc.integer({ min: 0, max: 2 ** (8 * width) - 1 })
    // Keys ending in NUL cannot round-trip (TwainMQ strips the padding NULs), nor can they be told apart.
    return unicode(-width).filter((s) => Buffer.byteLength(s) <= -width && !s.endsWith('\0'))
  }

  it('timestamps: whole ms and µs-precise ms survive ms → seconds (what Python stores) → ms exactly', () => {
    const timestamps = fc.oneof(
      fc.integer({ min: 0, max: 4_102_444_800_000 }), // Date.now() values, until 2100
      fc.integer({ min: 0, max: 4_102_444_800_000_000 }).map((us) => us / 1000), // µs-precise ms
    )
    fc.assert(
      fc.property(timestamps, (ms) => {
        const seconds = msToSeconds(ms)
        expect(seconds).toBe(microsOf(ms) / 1e6) // the float Python stores for that microsecond
        expect(secondsToMs(seconds)).toBe(ms)
      }),
      { numRuns: 5000 },
    )
  })

  it('timestamps: any stored float reads as the microsecond Python reads from it', () => {
    fc.assert(
      fc.property(fc.double({ min: 0, max: 4.1e9, noNaN: true }), (seconds) => {
        const ms = secondsToMs(seconds)
        const us = microsOf(ms)
        expect(Number.isInteger(us)).toBe(true)
        expect(Math.abs(us - seconds * 1e6)).toBeLessThanOrEqual(0.5 + seconds * 1e6 * 2 ** -52)
        expect(secondsToMs(msToSeconds(ms))).toBe(ms) // and is stable from then on
      }),
      { numRuns: 5000 },
    )
  })

  for (const width of [1, 2, 4, 8, -1, -3, -8, -20]) {
    it(`a line round-trips key, µs timestamp and value (key_width ${width})`, () => {
      const f = lineFormat(width, new Map([['T', 65535]]))
      const value = fc.oneof(
        unicode(60).map((text) => ({
          p: payloadOf({ text }),
          v: text as unknown,
          type: undefined as string | undefined,
        })),
        fc
          .uint8Array({ maxLength: 60 })
          .map((b) => ({ p: payloadOf({ bytes: b }), v: Buffer.from(b) as unknown, type: undefined })),
        json64.map((j) => ({
          p: payloadOf({ typeId: 65535, json: stringifyJson(j) }),
          v: j,
          type: 'T' as string | undefined,
        })),
      )
      fc.assert(
        fc.property(keyArb(width), fc.integer({ min: 0, max: 4_102_444_800_000_000 }), value, (key, us, val) => {
          const seconds = us / 1e6 // what Python stores for that microsecond
          const line = encodeLine(keyBytes(key, width), seconds, val.p)
          expect(line[line.length - 1]).toBe(10)
          expect(line.subarray(0, -1).includes(10)).toBe(false)
          const d = decodeLine(f, line, 0, line.length - 1)
          expect(d.key).toEqual(key)
          expect(d.timestamp).toBe(us / 1000)
          expect(microsOf(d.timestamp)).toBe(us) // the microsecond Python stored, to the year 2100
          expect(msToSeconds(d.timestamp)).toBe(seconds) // written back as the same float
          expect(d.value).toEqual(val.v)
          expect(d.type).toBe(val.type)
        }),
        { numRuns: 150 },
      )
    })
  }
})
