import { inflateRawSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import {
  InvalidKeyError,
  InvalidKeyTypeError,
  UnknownMessageTypeError,
  InvalidArgumentError,
  type Key,
} from '../../src/index.js'
import { b85decode, b85encode } from '../../src/compat/twainmq/base85.js'
import { parseJson, stringifyJson } from '../../src/compat/twainmq/json64.js'
import {
  LineError,
  decodeLine,
  decodeSecondsField,
  encodeLine,
  keyBytes,
  keyTypeOfWidth,
  keyWidthOf,
  lineFormat,
  microsOf,
  msToSeconds,
  payloadOf,
  recordKeyBytes,
  recordPayload,
  secondsToMs,
} from '../../src/compat/twainmq/line-codec.js'
import { golden, type ValueSpec } from '../helpers/twainmq.js'

const g = golden()
const TS_1700 = 'LD^LNKmY&$'

/** Key of a golden entry as twainmq holds it. */
function keyOf(width: number, key: number | string): Key {
  if (width === 8) return BigInt(key)
  if (width > 0) return Number(key)
  return key as string
}

function payload(v: ValueSpec): Buffer {
  if (v.kind === 'text') return payloadOf({ text: v.text })
  if (v.kind === 'bytes') return payloadOf({ bytes: Buffer.from(v.hex, 'hex') })
  return payloadOf({ typeId: v.type_id, json: stringifyJson(parseJson(v.json)) })
}

const line = (width: number, key: Key, seconds: number, p: Buffer) =>
  encodeLine(keyBytes(key, width), seconds, p).toString('latin1').slice(0, -1)

/**
 * Our line matches a golden (Python-written) line: KEY and TS byte for byte, and PAYLOAD inflating to
 * the same bytes (Node's bundled zlib may choose other, equivalent deflate codes than CPython's).
 */
function expectSameLine(ours: string, golden: string, width: number): void {
  const head = b85encode(Buffer.alloc(Math.abs(width))).length + 10
  expect(ours.slice(0, head), golden).toBe(golden.slice(0, head))
  const inflate = (s: string) => inflateRawSync(b85decode(s.slice(head))).toString('hex')
  expect(inflate(ours), golden).toBe(inflate(golden))
}

describe('TwainMQ line codec: golden lines (seeds NOTES §1.2)', () => {
  it('produces the documented golden lines (keys and timestamps byte for byte, payloads inflating identically)', () => {
    expectSameLine(line(2, 42, 1700000000, payloadOf({ text: 'hello world' })), '04eLD^LNKmY&$%Sg@1$yX@PFUm;)00', 2)
    expectSameLine(
      line(2, 7, 1700000000, payloadOf({ bytes: Buffer.from('0001726177', 'hex') })),
      '00#LD^LNKmY&$`@_IklvoY`',
      2,
    )
    expectSameLine(line(2, 1, 1700000000, payloadOf({ text: '' })), '009LD^LNKmY&$0{{', 2)
    expectSameLine(
      line(
        4,
        0,
        1700000000,
        payloadOf({
          typeId: 6,
          json: stringifyJson({
            partition_offsets: [
              [0, 0],
              [1, 0],
            ],
          }),
        }),
      ),
      '00000LD^LNKmY&$`^~^styGX$RFYYenV%P*pO#jfT2icJ6&-D$V-TwoZ3rY|YXJ',
      4,
    )
    expectSameLine(
      line(4, 1, 1700000000, payloadOf({ typeId: 0, json: stringifyJson({ tag: 18204373000982585223n }) })),
      '00001LD^LNKmY&$`^~^mtyGeju4H9sVPs%pY;J5|U|?xsWNKk*WMo_m00',
      4,
    )
    expectSameLine(line(4, 1, 1700000000, payloadOf({ typeId: 5, json: '{}' })), '00001LD^LNKmY&$`^~^wT?+s', 4)
  })

  it(`encodes all ${g.lines.length} golden lines of the fixture generator (same keys, timestamps and payload bytes)`, () => {
    for (const l of g.lines)
      expectSameLine(line(l.width, keyOf(l.width, l.key), l.seconds, payload(l.value)), l.line, l.width)
  })

  it('decodes every golden line to its key, timestamp, value kind and value', () => {
    for (const l of g.lines) {
      const types = new Map<string, number>([['T', l.value.kind === 'typed' ? l.value.type_id : 0]])
      const f = lineFormat(l.width, types)
      const d = decodeLine(f, Buffer.from(l.line, 'latin1'), 0, l.line.length)
      expect(d.key).toEqual(keyOf(l.width, l.key))
      expect(d.timestamp).toBe(secondsToMs(l.seconds))
      if (l.value.kind === 'text') expect(d.value).toBe(l.value.text)
      else if (l.value.kind === 'bytes') expect((d.value as Buffer).toString('hex')).toBe(l.value.hex)
      else {
        expect(d.type).toBe('T')
        expect(stringifyJson(d.value)).toBe(
          l.value.json.replace(/[\u007f-\uffff]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0')),
        )
      }
    }
  })

  it('keeps a 64-bit JSON integer exact (the group log tag)', () => {
    const f = lineFormat(4, new Map([['~~TWAIN~~JOINED', 0]]))
    const text = '00001LD^LNKmY&$`^~^mtyGeju4H9sVPs%pY;J5|U|?xsWNKk*WMo_m00'
    const d = decodeLine(f, Buffer.from(text), 0, text.length)
    expect(d).toEqual({
      key: 1,
      timestamp: 1700000000000,
      value: { tag: 18204373000982585223n },
      type: '~~TWAIN~~JOINED',
    })
  })
})

describe('TwainMQ keys', () => {
  it('encodes the documented keys', () => {
    const cases: Array<[number, Key, string]> = [
      [1, 0, '00'],
      [1, 255, '{{'],
      [2, 65535, '|Nj'],
      [4, 1, '00001'],
      [4, 2 ** 32 - 1, '|NsC0'],
      [8, (1n << 64n) - 1n, '|NsC0|NsC0'],
      [-1, 'a', 'VE'],
      [-4, 'ab', 'VPXIP'],
      [-6, 'abc', 'VPazd000'],
      [-8, 'hello', 'Xk~0{ZvX%Q'],
      [-2, 'é', '!>I'],
    ]
    for (const [w, k, text] of cases) {
      expect(b85encode(keyBytes(k, w)), `${w} ${String(k)}`).toBe(text)
      const f = lineFormat(w)
      const withTs = Buffer.from(text + TS_1700 + 'abc')
      expect(f.keyChars).toBe(text.length)
      expect(decodeLine.length).toBe(4)
      expect(() => decodeLine(f, withTs, 0, withTs.length)).toThrow(LineError) // the payload is junk, the key is not
      try {
        decodeLine(f, withTs, 0, withTs.length)
      } catch (e) {
        expect((e as LineError).key).toEqual(typeof k === 'number' && w === 8 ? BigInt(k) : k)
        expect((e as LineError).timestamp).toBe(1700000000000)
      }
    }
  })

  it(`encodes all ${g.keys.length} fixture keys of every width like Python, and their lengths`, () => {
    for (const k of g.keys) {
      const key = keyOf(k.width, k.width > 0 ? k.key : k.key)
      expect(b85encode(keyBytes(key, k.width)), `${k.width} ${k.key}`).toBe(k.b85)
      expect(lineFormat(k.width).keyChars).toBe(k.chars)
    }
  })

  it('pads charN keys with NULs and strips them when reading', () => {
    expect(keyBytes('ab', -6)).toEqual(Buffer.from([0x61, 0x62, 0, 0, 0, 0]))
    expect(recordKeyBytes(Buffer.from('ab'), -6)).toEqual(Buffer.from([0x61, 0x62, 0, 0, 0, 0]))
    expect(recordKeyBytes(258, 2)).toEqual(Buffer.from([1, 2]))
    const f = lineFormat(-6)
    const text = line(-6, 'ab', 1, payloadOf({ text: 'v' }))
    expect(decodeLine(f, Buffer.from(text), 0, text.length).key).toBe('ab')
  })

  it('refuses keys that do not fit, like Python (too long, overflow, negative)', () => {
    expect(() => keyBytes('abc', -2)).toThrow(InvalidKeyError)
    expect(() => keyBytes('é', -1)).toThrow(/too long for 1 byte string/)
    expect(() => keyBytes(256, 1)).toThrow(InvalidKeyError)
    expect(() => keyBytes(-1, 2)).toThrow(InvalidKeyError)
    expect(() => keyBytes(1n << 64n, 8)).toThrow(InvalidKeyError)
    expect(() => keyBytes('1', 2)).toThrow(InvalidKeyError)
  })

  it('maps key widths to key types and back; unbounded string keys have no TwainMQ form', () => {
    for (const [w, t] of [
      [1, 'u8'],
      [2, 'u16'],
      [4, 'u32'],
      [8, 'u64'],
      [-12, 'char12'],
    ] as const) {
      expect(keyTypeOfWidth(w)).toBe(t)
      expect(keyWidthOf(t)).toBe(w)
    }
    expect(() => keyWidthOf('string')).toThrow(InvalidKeyTypeError)
    expect(() => keyTypeOfWidth(3)).toThrow(InvalidKeyTypeError)
    expect(() => keyTypeOfWidth(0)).toThrow(InvalidKeyTypeError)
  })
})

describe('TwainMQ timestamps', () => {
  it('encodes the documented timestamps', () => {
    const ts = (s: number) => line(2, 0, s, payloadOf({ text: '' })).slice(3, 13)
    expect(ts(0)).toBe('0000000000')
    expect(ts(1700000000)).toBe(TS_1700)
    expect(ts(1767323045.123456)).toBe('LE2T#X-DR?')
  })

  it(`reads the microsecond Python stored and writes the same float back (${g.timestamps.length} Python values)`, () => {
    for (const t of g.timestamps) {
      const seconds = decodeSecondsField(Buffer.from(t.b85), 0)
      expect(seconds).toBe(t.seconds)
      const ms = secondsToMs(seconds) // what Message.timestamp holds
      expect(ms).toBe(t.us / 1000)
      expect(microsOf(ms)).toBe(t.us)
      expect(Math.round(ms * 1000)).toBe(t.us)
      expect(msToSeconds(ms)).toBe(t.seconds)
      expect(
        b85encode(
          (() => {
            const b = Buffer.alloc(8)
            b.writeDoubleBE(msToSeconds(ms))
            return b
          })(),
        ),
      ).toBe(t.b85)
    }
  })

  it('writes whole milliseconds as Python writes that instant (µs / 10**6) and reads them back unchanged', () => {
    for (const ms of [0, 1, 999, 537857496136, 1700000000000, 1704067199999, 1767323045123]) {
      expect(msToSeconds(ms)).toBe((ms * 1000) / 1e6)
      expect(secondsToMs(msToSeconds(ms))).toBe(ms)
    }
  })

  it("rounds like Python's datetime.fromtimestamp: the fraction's microseconds, half to even", () => {
    // python3 -c "from datetime import *; d = datetime.fromtimestamp(s, timezone.utc); print(d.second, d.microsecond)"
    const python: Array<[number, number]> = [
      [1.0000005, 1_000_001], // stored just above .5 µs
      [1767323045.123456, 1767323045_123456],
      [0.25e-6, 0],
      [0.75e-6, 1],
      [0.5e-6, 0],
      [1.5e-6, 2],
      [2.5e-6, 2], // a tie: to even
    ]
    for (const [seconds, us] of python) {
      expect(microsOf(secondsToMs(seconds)), String(seconds)).toBe(us)
      expect(secondsToMs(seconds)).toBe(us / 1000)
    }
  })
})

describe('TwainMQ payloads', () => {
  const f = lineFormat(
    2,
    new Map([
      ['Order', 0],
      ['Refund', 3],
    ]),
  )
  const roundTrip = (p: Buffer) => {
    const text = line(2, 5, 1700000000.5, p)
    return decodeLine(f, Buffer.from(text), 0, text.length)
  }

  it('marks bytes with 0xFC and typed JSON with 0xFB + u16 id; text has no marker', () => {
    expect(payloadOf({ text: 'é' })).toEqual(Buffer.from('é'))
    expect(payloadOf({ bytes: Buffer.from([1, 2]) })).toEqual(Buffer.from([0xfc, 1, 2]))
    expect(payloadOf({ typeId: 258, json: '{"a":"é"}' })).toEqual(
      Buffer.concat([Buffer.from([0xfb, 1, 2]), Buffer.from('{"a":"\\u00e9"}')]),
    )
  })

  it('round-trips every value kind, keeping text that looks like JSON a string and bytes bytes', () => {
    expect(roundTrip(payloadOf({ text: '{"a":1}' })).value).toBe('{"a":1}')
    expect(roundTrip(payloadOf({ text: '' })).value).toBe('')
    expect(roundTrip(payloadOf({ bytes: Buffer.from('{"a":1}') })).value).toEqual(Buffer.from('{"a":1}'))
    expect(roundTrip(payloadOf({ bytes: Buffer.from([0xfb, 0, 0]) })).value).toEqual(Buffer.from([0xfb, 0, 0]))
    const typed = roundTrip(payloadOf({ typeId: 3, json: stringifyJson({ n: -(2n ** 63n), f: 0.5, s: 'ü😀' }) }))
    expect(typed).toMatchObject({ type: 'Refund', value: { n: -(2n ** 63n), f: 0.5, s: 'ü😀' } })
    expect(roundTrip(payloadOf({ typeId: 9, json: '[1]' }))).toMatchObject({ unknownTypeId: 9, value: [1] })
  })

  it('encodes stored records: text, bytes, typed by the topic id; JSON values and unknown types are refused', () => {
    expect(recordPayload(f, 't', 0, 'x', undefined)).toEqual(Buffer.from('x'))
    expect(recordPayload(f, 't', 1, Buffer.from([7]), undefined)).toEqual(Buffer.from([0xfc, 7]))
    expect(recordPayload(f, 't', 3, '{"k":"ä"}', 'Refund')).toEqual(
      Buffer.concat([Buffer.from([0xfb, 0, 3]), Buffer.from('{"k":"\\u00e4"}')]),
    )
    expect(() => recordPayload(f, 't', 3, '{}', 'Nope')).toThrow(UnknownMessageTypeError)
    expect(() => recordPayload(f, 't', 2, '{}', undefined)).toThrow(InvalidArgumentError)
  })

  it('reports what is wrong with a corrupt line (and which fields still decoded)', () => {
    const good = line(2, 42, 1700000000, payloadOf({ text: 'hello world' }))
    const bad = (s: string) => () => decodeLine(f, Buffer.from(s, 'latin1'), 0, s.length)
    expect(bad(good.slice(0, 12))).toThrow(/shorter than KEY/)
    expect(bad('"' + good.slice(1))).toThrow(/bad KEY field: bad base85 character at position 0/)
    expect(bad(good.slice(0, 5) + '"' + good.slice(6))).toThrow(/bad TS field/)
    expect(bad(good.slice(0, 13) + '00000')).toThrow(/bad PAYLOAD field/)
    const notUtf8 = line(2, 1, 1, Buffer.from([0xc3, 0x28]))
    expect(bad(notUtf8)).toThrow(/not valid UTF-8/)
    const badJson = line(2, 1, 1, Buffer.from([0xfb, 0, 0, 0x7b]))
    expect(bad(badJson)).toThrow(/bad JSON in typed PAYLOAD/)
  })
})

describe('lossless JSON (Python json.loads / json.dumps)', () => {
  it('parses integers beyond 2^53 as bigint, others as numbers', () => {
    expect(
      parseJson('{"a":18204373000982585223,"b":9007199254740991,"c":-9007199254740993,"d":1.5e300,"e":[1,2]}'),
    ).toEqual({
      a: 18204373000982585223n,
      b: 9007199254740991,
      c: -9007199254740993n,
      d: 1.5e300,
      e: [1, 2],
    })
  })

  it("accepts Python's NaN and Infinity and writes them back the same way", () => {
    const v = parseJson('[NaN,Infinity,-Infinity]') as number[]
    expect(v[0]).toBeNaN()
    expect(v.slice(1)).toEqual([Infinity, -Infinity])
    expect(stringifyJson(v)).toBe('[NaN,Infinity,-Infinity]')
  })

  it('writes compact JSON with ensure_ascii escapes (lowercase \\uXXXX, DEL included)', () => {
    expect(stringifyJson({ s: 'é\u2028\x7f😀', n: 12345678901234567890n, u: undefined, x: null })).toBe(
      '{"s":"\\u00e9\\u2028\\u007f\\ud83d\\ude00","n":12345678901234567890,"x":null}',
    )
  })

  it('keeps "__proto__" as an own key and names the position of a syntax error', () => {
    const o = parseJson('{"__proto__":{"x":12345678901234567890}}') as Record<string, unknown>
    expect(Object.keys(o)).toEqual(['__proto__'])
    expect(() => parseJson('{"a":12345678901234567890,}')).toThrow(/position 26/)
    expect(() => parseJson('[1] x')).toThrow(/Extra data/)
  })

  it('agrees with b85decode on what base85 text a typed golden line holds', () => {
    expect(b85decode('0{{')).toHaveLength(2)
  })
})

describe('microsOf is exported by the package (docs/twainmq.md, "Timestamps")', () => {
  it('is the same function as the codec uses', async () => {
    const api = await import('../../src/index.js')
    expect(api.microsOf).toBe(microsOf)
    expect(api.microsOf(1733000000123.456)).toBe(1733000000123456)
  })
})
