import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  decodeBatch,
  encodeBatch,
  frameCrcOk,
  readFrameHeader,
  type FrameHeader,
} from '../src/backends/file/batch-format.js'
import type { RecordInput } from '../src/backends/record.js'
import { keyCodec } from '../src/core/keys.js'
import { ValueKind } from '../src/core/values.js'
import type { Message } from '../src/index.js'

const keys = keyCodec('string')
const text = fc.oneof(fc.string({ unit: 'binary', maxLength: 40 }), fc.string({ maxLength: 40 }))

/** A stored value of each kind, as the producer would hand it to the backend, with what it reads back as. */
const valueArb: fc.Arbitrary<{ kind: ValueKind; value: Buffer | string; expect: unknown }> = fc.oneof(
  text.map((s) => ({ kind: ValueKind.Text, value: s, expect: s as unknown })),
  fc
    .uint8Array({ maxLength: 60 })
    .map((b) => ({ kind: ValueKind.Bytes, value: Buffer.from(b), expect: Buffer.from(b) as unknown })),
  fc.jsonValue({ maxDepth: 2 }).map((j) => {
    const s = JSON.stringify(j)
    return { kind: ValueKind.Json, value: s, expect: JSON.parse(s) as unknown }
  }),
)

/** Epoch timestamps: whole milliseconds (Date.now) or microsecond precision (Python TwainMQ). */
const timestampArb = fc.oneof(
  fc.integer({ min: 1_500_000_000_000, max: 2_000_000_000_000 }),
  fc.integer({ min: 1_500_000_000_000_000, max: 2_000_000_000_000_000 }).map((us) => us / 1000),
)

const recordArb = fc.record({
  key: text,
  timestamp: timestampArb,
  value: valueArb,
  type: fc.option(fc.stringMatching(/^[A-Za-z0-9_.~-]{1,30}$/), { nil: undefined }),
  headers: fc.option(fc.dictionary(fc.string({ maxLength: 12 }), text, { maxKeys: 6 }), { nil: undefined }),
  // string values may reach the encoder unmeasured (valueBytes -1): it learns their length as it writes
  measured: fc.boolean(),
})
type GenRecord = typeof recordArb extends fc.Arbitrary<infer R> ? R : never

function toInput(r: GenRecord): RecordInput {
  const valueBytes =
    typeof r.value.value !== 'string'
      ? r.value.value.length
      : r.measured
        ? Buffer.byteLength(r.value.value, 'utf8')
        : -1
  // a typed record stores JSON; keep the generated kind otherwise
  const kind = r.type !== undefined && r.value.kind === ValueKind.Json ? ValueKind.Typed : r.value.kind
  const key = keys.encode(r.key)
  return {
    key,
    keyBytes: key.length,
    timestamp: r.timestamp,
    kind,
    value: r.value.value,
    valueBytes,
    type: r.type,
    headers: r.headers,
  }
}

const frameArb = fc.record({
  records: fc.array(recordArb, { maxLength: 12 }),
  base: fc.integer({ min: 0, max: 2 ** 40 }),
  producerId: fc.string({ unit: 'binary', minLength: 1, maxLength: 30 }),
})

function header(buf: Buffer, pos: number, end: number): FrameHeader {
  const h = readFrameHeader(buf, pos, end)
  if (h === undefined || h === 'short' || h === 'bad') throw new Error(`no whole frame at ${pos}: ${String(h)}`)
  return h
}

describe('batch format properties', () => {
  it('law: decode(encode(records, base, producer)) = records with offsets base..base+n-1, and the header describes the frame', () => {
    fc.assert(
      fc.property(frameArb, ({ records, base, producerId }) => {
        const buf = encodeBatch(records.map(toInput), base, producerId)
        const h = header(buf, 0, buf.length)
        expect(h.length).toBe(buf.length)
        expect(h.count).toBe(records.length)
        expect(h.baseOffset).toBe(base)
        expect(frameCrcOk(buf, 0, h.length)).toBe(true)
        if (records.length > 0) {
          expect(h.firstTimestamp).toBe(Math.min(...records.map((r) => r.timestamp)))
          expect(h.maxTimestamp).toBe(Math.max(...records.map((r) => r.timestamp)))
        }
        const out: Message[] = []
        expect(decodeBatch(buf, 0, h, 'topic', 7, keys, 0, Infinity, out)).toBe(records.length)
        for (const [i, r] of records.entries()) {
          const m = out[i]!
          expect(m.offset).toBe(base + i)
          expect(m.partition).toBe(7)
          expect(m.topic).toBe('topic')
          expect(m.producerId).toBe(producerId)
          expect(m.key).toBe(r.key)
          expect(m.timestamp).toBe(r.timestamp)
          expect(m.type).toBe(r.type)
          expect(m.headers).toEqual(r.headers ?? {})
          expect(m.value).toEqual(r.value.expect)
          if (r.value.kind === ValueKind.Text) expect(typeof m.value).toBe('string')
          expect(Buffer.isBuffer(m.value)).toBe(r.value.kind === ValueKind.Bytes)
        }
      }),
      {
        numRuns: 300,
        // fast-check generates "__proto__" dictionary keys only sometimes; always check that header name
        examples: [
          [
            {
              records: [
                {
                  key: 'k',
                  timestamp: 1_700_000_000_000,
                  value: { kind: ValueKind.Text, value: 'v', expect: 'v' },
                  type: undefined,
                  headers: JSON.parse('{"__proto__":"p","a":"b"}') as Record<string, string>,
                  measured: false,
                },
              ],
              base: 0,
              producerId: 'p',
            },
          ],
        ],
      },
    )
  })

  it('law: concatenated frames parse back one after the other, each with its own offsets and producer', () => {
    fc.assert(
      fc.property(fc.array(frameArb, { minLength: 1, maxLength: 4 }), (frames) => {
        let next = 0
        const bufs = frames.map((f) => {
          const b = encodeBatch(f.records.map(toInput), next, f.producerId)
          next += f.records.length
          return b
        })
        const all = Buffer.concat(bufs)
        let pos = 0
        const offsets: number[] = []
        for (const f of frames) {
          const h = header(all, pos, all.length)
          expect(frameCrcOk(all, pos, h.length)).toBe(true)
          const out: Message[] = []
          decodeBatch(all, pos, h, 't', 0, keys, 0, Infinity, out)
          expect(out.map((m) => m.key)).toEqual(f.records.map((r) => r.key))
          for (const m of out) expect(m.producerId).toBe(f.producerId)
          offsets.push(...out.map((m) => m.offset))
          pos += h.length
        }
        expect(pos).toBe(all.length)
        expect(offsets).toEqual(Array.from({ length: next }, (_, i) => i))
      }),
      { numRuns: 100 },
    )
  })

  it('law: decodeBatch with fromOffset f and limit l returns exactly offsets max(f, base) .. min(end, max(f, base) + l) - 1', () => {
    fc.assert(
      fc.property(frameArb, fc.nat(20), fc.nat(20), ({ records, base, producerId }, skip, limit) => {
        const buf = encodeBatch(records.map(toInput), base, producerId)
        const h = header(buf, 0, buf.length)
        const out: Message[] = []
        decodeBatch(buf, 0, h, 't', 0, keys, base + skip, limit, out)
        const from = Math.min(base + skip, base + records.length)
        const to = Math.min(base + records.length, from + limit)
        expect(out.map((m) => m.offset)).toEqual(Array.from({ length: to - from }, (_, i) => from + i))
      }),
      { numRuns: 200 },
    )
  })

  it('law: flipping any single bit after the length field is detected (bad header or CRC mismatch)', () => {
    fc.assert(
      fc.property(frameArb, fc.nat(), fc.integer({ min: 0, max: 7 }), ({ records, base, producerId }, at, bit) => {
        const buf = encodeBatch(records.map(toInput), base, producerId)
        const i = 8 + (at % (buf.length - 8))
        const bad = Buffer.from(buf)
        bad[i] = (bad[i] as number) ^ (1 << bit)
        const h = readFrameHeader(bad, 0, bad.length)
        const accepted = h !== undefined && h !== 'short' && frameCrcOk(bad, 0, h.length)
        expect(accepted).toBe(false)
      }),
      { numRuns: 300 },
    )
  })
})
