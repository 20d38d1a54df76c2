import type { KeyCodec } from '../../core/keys.js'
import type { Message } from '../../core/types.js'
import { readRawRecord, readRecord, recordEnd, utf8 } from '../record-codec.js'
import { fits, type RawBudget, type RawRecord } from '../record.js'

/**
 * The one decoder of Redis stream entries, in the three shapes they reach this process: an entry's
 * fields as XREAD/XREADGROUP return them, the packed reply of the `read` and `shared-read` scripts,
 * and the flat `{id, delivery count, record, producer id, ...}` lists of the shared-group scripts.
 * An entry twainmq wrote has the ID `<offset>-1` and the fields `r` (the record, see
 * `backends/record-codec.ts`) and `p` (the producer id), in that order (scripts/append-5.lua).
 */

/** The offset of an entry ID `<offset>-1`. */
export function offsetOf(id: Buffer | string): number {
  let n = 0
  if (typeof id === 'string') {
    for (let i = 0; i < id.length; i++) {
      const c = id.charCodeAt(i)
      if (c < 48 || c > 57) break
      n = n * 10 + (c - 48)
    }
    return n
  }
  for (let i = 0; i < id.length; i++) {
    const c = id[i] as number
    if (c < 48 || c > 57) break
    n = n * 10 + (c - 48)
  }
  return n
}

/** Whether an entry ID has the form twainmq writes (`<offset>-1`), so its offset names it. */
export function isOffsetId(id: Buffer): boolean {
  return id.length >= 3 && id[id.length - 1] === 0x31 && id[id.length - 2] === 0x2d
}

/** The entry ID of an offset. */
export const idOf = (offset: number): string => `${offset}-1`

/** Offsets of a list of entry IDs. */
export const offsetsOf = (ids: unknown): number[] => (Array.isArray(ids) ? ids.map((id) => offsetOf(id as Buffer)) : [])

/** An entry's record and producer id fields (undefined: the entry has none, it is not twainmq's). */
export interface EntryFields {
  record: Buffer | undefined
  producer: Buffer | undefined
}

const isField = (f: Buffer | undefined, name: number): boolean => f !== undefined && f.length === 1 && f[0] === name

/** Read an entry's `r` and `p` fields into `out` (reused by the caller: no allocation per entry). */
export function entryFields(fields: readonly Buffer[], out: EntryFields): EntryFields {
  if (fields.length === 4 && isField(fields[0], 0x72) && isField(fields[2], 0x70)) {
    out.record = fields[1] // r, p in the order the append script writes them
    out.producer = fields[3]
    return out
  }
  out.record = undefined
  out.producer = undefined
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const f = fields[i] as Buffer
    if (isField(f, 0x72)) out.record = fields[i + 1]
    else if (isField(f, 0x70)) out.producer = fields[i + 1]
  }
  return out
}

/** The message of one record. */
export function decodeEntry(
  record: Buffer,
  codec: KeyCodec,
  topic: string,
  partition: number,
  offset: number,
  producerId: string,
): Message {
  return readRecord(record, 0, recordEnd(record, 0), 0, codec, topic, partition, offset, producerId)
}

/**
 * The shared-group scripts' entries (`{id, delivery count, record, producer id, ...}`, bulk strings
 * as Buffers), one call each; `record` is empty for an entry without one.
 */
export function eachScripted(
  flat: readonly unknown[],
  f: (id: Buffer, count: number, record: Buffer, producer: Buffer) => void,
): void {
  for (let i = 0; i + 3 < flat.length; i += 4)
    f(flat[i] as Buffer, Number(flat[i + 1]), flat[i + 2] as Buffer, flat[i + 3] as Buffer)
}

/** The packed reply's header (see scripts/read-1.lua). */
export interface PackedHeader {
  count: number
  first: number
  last: number
  /** Producer id changes: entry index → id. */
  changes: Map<number, string>
  /** Where the entries start. */
  body: number
  /** Entries carry their offsets. */
  ids: boolean
}

/** A decimal number at `p` up to `stop`; the stop byte is skipped. */
function num(b: Buffer, at: { p: number }, stop: number): number {
  let n = 0
  let c = b[at.p++] as number
  while (c !== stop) {
    n = n * 10 + (c - 48)
    c = b[at.p++] as number
  }
  return n
}

export function parseHeader(b: Buffer): PackedHeader {
  const at = { p: 0 }
  const count = num(b, at, 32)
  const first = num(b, at, 45) // `<offset>-1 `
  at.p += 2
  const last = num(b, at, 45)
  at.p += 2
  const n = num(b, at, 32)
  const changes = new Map<number, string>()
  for (let i = 0; i < n; i++) {
    const index = num(b, at, 58)
    const len = num(b, at, 58)
    changes.set(index, utf8(b, at.p, at.p + len))
    at.p += len
  }
  return { count, first, last, changes, body: at.p, ids: false }
}

/** Where a partial decode of a packed reply stands: the next entry's index and byte position. */
export interface PackedCursor {
  index: number
  pos: number
  /** The producer id in force at `index`. */
  producerId: string
}

/** A cursor at the packed reply's first entry. */
export const packedStart = (h: PackedHeader): PackedCursor => ({ index: 0, pos: h.body, producerId: '' })

/**
 * Decode up to `max` of the packed reply's entries from `cur` (moved past them) into messages
 * (`codec` given), or into raw records (`codec` null), stopping before a raw record the `budget`
 * has no room for (the cursor is left at it). Returns the offset after the last one decoded.
 */
export function decodePackedFrom(
  b: Buffer,
  h: PackedHeader,
  cur: PackedCursor,
  max: number,
  codec: KeyCodec | null,
  topic: string,
  partition: number,
  out: Array<Message | RawRecord>,
  budget?: RawBudget,
): number {
  let p = cur.pos
  let producerId = cur.producerId
  let offset = h.first + cur.index - 1
  const ids = h.ids
  const stop = Math.min(h.count, cur.index + max)
  let i = cur.index
  for (; i < stop; i++) {
    const at = p
    const pid = h.changes.get(i) ?? producerId
    let o = h.first + i
    if (ids) {
      o = 0
      let c = b[p++] as number
      while (c !== 58) {
        o = o * 10 + (c - 48)
        c = b[p++] as number
      }
    }
    const end = recordEnd(b, p)
    if (codec) out.push(readRecord(b, p, end, 0, codec, topic, partition, o, pid))
    else {
      const r = readRawRecord(b, p, end, 0, o)
      if (!fits(budget, r.end - r.start)) {
        p = at
        break
      }
      out.push(r)
    }
    producerId = pid
    offset = o
    p = end
  }
  cur.index = i
  cur.pos = p
  cur.producerId = producerId
  return i >= h.count ? h.last + 1 : offset + 1
}

/** Decode the packed reply's entries into messages (`codec` given), or into raw records (`codec` null). */
export function decodePacked(
  b: Buffer,
  h: PackedHeader,
  codec: KeyCodec | null,
  topic: string,
  partition: number,
  out: Array<Message | RawRecord>,
): void {
  decodePackedFrom(b, h, packedStart(h), h.count, codec, topic, partition, out)
}

/**
 * The `shared-read` script's reply: a flag byte (`d` dense offsets, `i` an offset before every
 * entry) and then the packed reply; its messages are appended to `out`. Returns the entry count.
 */
export function decodeFlaggedPacked(
  blob: Buffer,
  codec: KeyCodec,
  topic: string,
  partition: number,
  out: Message[],
): number {
  const body = blob.subarray(1)
  const h = parseHeader(body)
  h.ids = blob[0] === 0x69 // 'i'
  decodePacked(body, h, codec, topic, partition, out)
  return h.count
}
