import { describe, expect, it } from 'vitest'
import {
  FLAG_SEAL,
  HEADER_BYTES,
  MAGIC,
  decodeBatch,
  rawBatch,
  encodeBatch,
  encodeSeal,
  frameCrcOk,
  readFrameHeader,
  type FrameHeader,
} from '../../src/backends/file/batch-format.js'
import type { RawRecord, RecordInput } from '../../src/backends/record.js'
import { SOURCE_HEADER, SourceHeaders, sourceHeader } from '../../src/backends/source-header.js'
import { keyCodec } from '../../src/core/keys.js'
import { ValueKind, decodeValue, encodeValue } from '../../src/core/values.js'
import type { Message } from '../../src/index.js'

const T0 = 1_700_000_000_000

function rec(key: Buffer, value: unknown, timestamp: number, extra: Partial<RecordInput> = {}): RecordInput {
  const typed = extra.type !== undefined
  const { kind, bytes, length } = encodeValue(value, typed)
  return { key, keyBytes: key.length, timestamp, kind, value: bytes, valueBytes: length, ...extra }
}

function header(buf: Buffer, pos = 0): FrameHeader {
  const h = readFrameHeader(buf, pos, buf.length)
  if (h === undefined || h === 'short' || h === 'bad') throw new Error(`no frame header: ${String(h)}`)
  return h
}

function decodeAll(buf: Buffer, keyType: Parameters<typeof keyCodec>[0], from = 0, limit = Infinity): Message[] {
  const out: Message[] = []
  decodeBatch(buf, 0, header(buf), 't', 3, keyCodec(keyType), from, limit, out)
  return out
}

const u16 = keyCodec('u16')
const str = keyCodec('string')

describe('batch format (src/backends/file/batch-format.ts)', () => {
  const records: RecordInput[] = [
    rec(u16.encode(1), 'text ü 😀', T0 + 5),
    rec(u16.encode(65535), Buffer.from([0, 1, 2, 255]), T0, { headers: { a: '1', bé: 'välue 😀', empty: '' } }),
    rec(u16.encode(0), { nested: [1, { x: null }] }, T0 + 10.5),
    rec(u16.encode(7), { id: 9 }, T0 + 3, { type: 'Order', headers: { trace: 'abc' } }),
    rec(u16.encode(8), '', T0 + 3),
  ]

  it("an added header goes on every record as it is encoded, in place of a record's own header by that name", () => {
    const withOwn = [...records, rec(u16.encode(9), 'v', T0 + 1, { headers: { [SOURCE_HEADER]: 'own', b: '2' } })]
    const source = {
      group: 'g-ü',
      topic: 'in',
      incarnation: T0,
      partition: 3,
      epoch: 7,
      committed: 2 ** 40,
      deadline: 0,
    }
    // The largest numbers a position holds, and the digits' edges.
    const positions = [0, 9, 10, 2 ** 31 - 1, Number.MAX_SAFE_INTEGER, 99_999].map((offset, i) => ({
      offset,
      seq: [0, 9, 10, 99, 2 ** 31 - 1, 2 ** 32 - 2][i] as number,
    }))
    const values = positions.map((p) => sourceHeader(source, p))
    const added = SourceHeaders.of(source, positions)
    const buf = encodeBatch(withOwn, 7, 'p', 0, undefined, added)
    expect(frameCrcOk(buf, 0, header(buf).length)).toBe(true)
    const got = decodeAll(buf, 'u16')
    expect(got.map((m) => m.headers)).toEqual(
      withOwn.map((r, i) => ({
        ...Object.fromEntries(Object.entries(r.headers ?? {}).filter(([k]) => k !== SOURCE_HEADER)),
        [SOURCE_HEADER]: values[i],
      })),
    )
    // The same bytes as the records copied with the header added (the record's own by that name dropped, the added one last).
    const copied = withOwn.map((r, i) => {
      const { [SOURCE_HEADER]: _own, ...rest } = r.headers ?? {}
      return { ...r, headers: { ...rest, [SOURCE_HEADER]: values[i] as string } }
    })
    expect(buf.equals(encodeBatch(copied, 7, 'p'))).toBe(true)
    // A part of the call (the records written when the others were stored before): their own positions' values.
    const picked = encodeBatch([withOwn[1], withOwn[4]] as RecordInput[], 7, 'p', 0, undefined, added.pick([1, 4]))
    expect(decodeAll(picked, 'u16').map((m) => m.headers[SOURCE_HEADER])).toEqual([values[1], values[4]])
  })

  it('encode → decode returns every record with dense offsets, keys, values, kinds, types, headers, timestamps', () => {
    const buf = encodeBatch(records, 100, 'producer-é')
    const h = header(buf)
    expect(h).toMatchObject({
      length: buf.length,
      flags: 0,
      baseOffset: 100,
      count: 5,
      firstTimestamp: T0,
      maxTimestamp: T0 + 10.5,
    })
    expect(buf.readUInt32LE(0)).toBe(MAGIC)
    expect(frameCrcOk(buf, 0, h.length)).toBe(true)
    const msgs = decodeAll(buf, 'u16')
    expect(msgs.map((m) => m.offset)).toEqual([100, 101, 102, 103, 104])
    expect(msgs.map((m) => m.key)).toEqual([1, 65535, 0, 7, 8])
    expect(msgs.map((m) => m.timestamp)).toEqual([T0 + 5, T0, T0 + 10.5, T0 + 3, T0 + 3])
    expect(msgs[0]?.value).toBe('text ü 😀')
    expect(Buffer.isBuffer(msgs[1]?.value)).toBe(true)
    expect([...(msgs[1]?.value as Buffer)]).toEqual([0, 1, 2, 255])
    expect(msgs[2]?.value).toEqual({ nested: [1, { x: null }] })
    expect(msgs[3]?.value).toEqual({ id: 9 })
    expect(msgs[4]?.value).toBe('')
    expect(msgs.map((m) => m.type)).toEqual([undefined, undefined, undefined, 'Order', undefined])
    expect(msgs.map((m) => m.headers)).toEqual([{}, { a: '1', bé: 'välue 😀', empty: '' }, {}, { trace: 'abc' }, {}])
    for (const m of msgs) {
      expect(m.producerId).toBe('producer-é')
      expect(m.topic).toBe('t')
      expect(m.partition).toBe(3)
      if (m.type === undefined) expect('type' in m).toBe(false)
    }
  })

  it('round-trips string and u64 keys, including empty and max keys', () => {
    const sk = ['', 'user-1', '日本語 😀', 'k'.repeat(1000)]
    const sbuf = encodeBatch(
      sk.map((k, i) => rec(str.encode(k), i, T0)),
      0,
      'p',
    )
    expect(decodeAll(sbuf, 'string').map((m) => m.key)).toEqual(sk)
    const u64 = keyCodec('u64')
    const bk = [0n, 1n, (1n << 64n) - 1n]
    const bbuf = encodeBatch(
      bk.map((k) => rec(u64.encode(k), 'v', T0)),
      0,
      'p',
    )
    expect(decodeAll(bbuf, 'u64').map((m) => m.key)).toEqual(bk)
  })

  it('unmeasured string values (valueBytes -1) are sized by their bound and framed exactly, in or out of a scratch buffer', () => {
    const values = ['plain ascii', 'é'.repeat(30), '😀 and \ud800 (a lone surrogate)', '']
    const input = values.map(
      (v, i) =>
        ({
          key: u16.encode(i),
          keyBytes: 2,
          timestamp: T0,
          kind: ValueKind.Text,
          value: v,
          valueBytes: -1,
        }) as RecordInput,
    )
    const measured = input.map((r) => ({ ...r, valueBytes: Buffer.byteLength(r.value as string, 'utf8') }))
    const exact = encodeBatch(measured, 5, 'p')
    // no scratch: a buffer of the bound, trimmed to the frame
    const fresh = encodeBatch(input, 5, 'p')
    expect(fresh.equals(exact)).toBe(true)
    expect(header(fresh).length).toBe(fresh.length)
    // a scratch buffer large enough for the exact frame but not for the bound is not used
    const small = Buffer.alloc(exact.length + 8)
    const outside = encodeBatch(input, 5, 'p', 0, small)
    expect(outside.buffer).not.toBe(small.buffer)
    expect(outside.equals(exact)).toBe(true)
    // a large enough scratch buffer is used, and the result is exactly the frame's bytes
    const big = Buffer.alloc(64 * 1024)
    const inside = encodeBatch(input, 5, 'p', 0, big)
    expect(inside.buffer).toBe(big.buffer)
    expect(inside.equals(exact)).toBe(true)
    expect(decodeAll(inside, 'u16').map((m) => m.value)).toEqual(
      values.map((v) => Buffer.from(v, 'utf8').toString('utf8')),
    )
  })

  it('decodeBatch skips offsets below fromOffset and stops after limit', () => {
    const buf = encodeBatch(records, 100, 'p')
    expect(decodeAll(buf, 'u16', 102).map((m) => m.offset)).toEqual([102, 103, 104])
    expect(decodeAll(buf, 'u16', 101, 2).map((m) => m.offset)).toEqual([101, 102])
    const out: Message[] = []
    expect(decodeBatch(buf, 0, header(buf), 't', 0, u16, 0, 3, out)).toBe(3)
  })

  it('rawBatch gives offsets, types, kinds and the stored value bytes, which decode to the values', () => {
    const buf = encodeBatch(records, 100, 'p')
    const raw: RawRecord[] = []
    expect(rawBatch(buf, 0, header(buf), 101, 3, raw)).toBe(3)
    const full = decodeAll(buf, 'u16', 101, 3)
    expect(raw.map((r) => r.offset)).toEqual([101, 102, 103])
    expect(raw.map((r) => r.type)).toEqual(full.map((m) => m.type))
    expect(raw.map((r) => r.kind)).toEqual([ValueKind.Bytes, ValueKind.Json, ValueKind.Typed])
    expect(raw.map((r) => decodeValue(r.kind, r.buf, r.start, r.end))).toEqual(full.map((m) => m.value))
    expect(raw[1]!.buf.toString('utf8', raw[1]!.start, raw[1]!.end)).toBe('{"nested":[1,{"x":null}]}')
    expect(raw.map((r) => [r.timestamp, r.headers])).toEqual(
      full.map((m) => [m.timestamp, Object.keys(m.headers).length > 0 ? m.headers : undefined]),
    )
  })

  it('decodes a frame that starts in the middle of a buffer', () => {
    const a = encodeBatch(records.slice(0, 2), 0, 'pa')
    const b = encodeBatch(records.slice(2), 2, 'pb')
    const both = Buffer.concat([a, b])
    const hb = readFrameHeader(both, a.length, both.length) as FrameHeader
    expect(hb.baseOffset).toBe(2)
    expect(frameCrcOk(both, a.length, hb.length)).toBe(true)
    const out: Message[] = []
    decodeBatch(both, a.length, hb, 't', 0, u16, 0, Infinity, out)
    expect(out.map((m) => [m.offset, m.key, m.producerId])).toEqual([
      [2, 0, 'pb'],
      [3, 7, 'pb'],
      [4, 8, 'pb'],
    ])
  })

  it('detects any single flipped byte after the length field through the CRC', () => {
    const buf = encodeBatch(records, 0, 'producer')
    const h = header(buf)
    for (let i = 8; i < buf.length; i++) {
      const bad = Buffer.from(buf)
      bad[i] = (bad[i] as number) ^ 0x01
      const hb = readFrameHeader(bad, 0, bad.length)
      // a flipped version byte makes the header itself invalid; everything else fails the CRC
      const ok = hb !== undefined && hb !== 'short' && frameCrcOk(bad, 0, hb.length)
      expect(ok, `flip at byte ${i} went unnoticed`).toBe(false)
    }
    expect(frameCrcOk(buf, 0, h.length)).toBe(true)
  })

  it('rejects a bad magic and reports a truncated frame as short', () => {
    const buf = encodeBatch(records, 0, 'p')
    const bad = Buffer.from(buf)
    bad[0] = 0
    expect(readFrameHeader(bad, 0, bad.length)).toBe('bad')
    expect(readFrameHeader(buf, 0, buf.length - 1)).toBe('short')
    expect(readFrameHeader(buf, 0, HEADER_BYTES - 1)).toBe('short')
    expect(readFrameHeader(buf, 0, 0)).toBeUndefined()
  })

  it('a seal frame carries the next base offset, no records and the seal flag', () => {
    const seal = encodeSeal(1234, 'p')
    const h = header(seal)
    expect(h.flags & FLAG_SEAL).toBe(FLAG_SEAL)
    expect(h.baseOffset).toBe(1234)
    expect(h.count).toBe(0)
    expect(frameCrcOk(seal, 0, h.length)).toBe(true)
  })

  it('an empty batch encodes and decodes to no records', () => {
    const buf = encodeBatch([], 5, 'p')
    expect(header(buf).count).toBe(0)
    expect(decodeAll(buf, 'u16')).toEqual([])
  })

  it('keeps the value kind: JSON-looking text stays text, JSON-looking bytes stay bytes', () => {
    const buf = encodeBatch(
      [
        {
          key: u16.encode(1),
          keyBytes: 2,
          timestamp: T0,
          kind: ValueKind.Text,
          value: Buffer.from('{"a":1}'),
          valueBytes: 7,
        },
        {
          key: u16.encode(1),
          keyBytes: 2,
          timestamp: T0,
          kind: ValueKind.Bytes,
          value: Buffer.from('{"a":1}'),
          valueBytes: 7,
        },
        { key: u16.encode(1), keyBytes: 2, timestamp: T0, kind: ValueKind.Json, value: '{"a":1}', valueBytes: 7 },
      ],
      0,
      'p',
    )
    const [t, b, j] = decodeAll(buf, 'u16')
    expect(t?.value).toBe('{"a":1}')
    expect(Buffer.isBuffer(b?.value) && (b?.value as Buffer).toString()).toBe('{"a":1}')
    expect(j?.value).toEqual({ a: 1 })
  })
})
