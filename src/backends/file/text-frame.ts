import type { TextFrame } from '../backend.js'
import { RECORD_FIXED, writeTextRecord } from '../record-codec.js'
import { ID_HEADER } from '../record.js'
import { HEADER_BYTES, sealFrame } from './batch-format.js'

const ID_NAME = Buffer.from(ID_HEADER, 'utf8')

/** First size of a frame's buffer; it doubles as records need. */
const FIRST_BYTES = 64 * 1024

/**
 * A native batch frame built record by record (see {@link TextFrame}): the records are written
 * after room for the header and the producer id, and `frame(base)` fills in the header once the
 * appender knows the base offset, so the frame is never copied. The same bytes as `encodeBatch`
 * of those records.
 */
export class NativeTextFrame implements TextFrame {
  count = 0
  private buf = Buffer.allocUnsafe(FIRST_BYTES)
  private pos: number
  private timestamp = 0
  private readonly pid: Buffer
  /** The records' idempotency ids (undefined: none), and where each record starts: kept once a record has an id. */
  ids: Array<string | undefined> | undefined
  private starts: number[] | undefined

  constructor(readonly producerId: string) {
    this.pid = Buffer.from(producerId, 'utf8')
    this.pid.copy(this.buf, HEADER_BYTES)
    this.pos = HEADER_BYTES + this.pid.length
  }

  get bytes(): number {
    return this.pos
  }

  start(timestamp: number): void {
    this.count = 0
    this.pos = HEADER_BYTES + this.pid.length
    this.timestamp = timestamp
    this.ids = this.starts = undefined
  }

  add(key: Buffer | number, keyBytes: number, value: string, id?: string): void {
    let need = this.pos + RECORD_FIXED + keyBytes + value.length * 3
    if (id !== undefined) need += 6 + ID_NAME.length + id.length * 3
    if (need > this.buf.length) {
      const bigger = Buffer.allocUnsafe(Math.max(need, this.buf.length * 2))
      this.buf.copy(bigger, 0, 0, this.pos)
      this.buf = bigger
    }
    if (id !== undefined && this.ids === undefined) {
      this.ids = new Array<string | undefined>(this.count)
      this.starts = []
      // Where the records so far start: walk their length prefixes.
      for (let p = HEADER_BYTES + this.pid.length; p < this.pos; p += 4 + this.buf.readUInt32LE(p)) this.starts.push(p)
    }
    if (this.ids !== undefined) {
      this.ids.push(id)
      ;(this.starts as number[]).push(this.pos)
    }
    this.pos =
      id === undefined
        ? writeTextRecord(this.buf, this.pos, key, keyBytes, value)
        : writeTextRecord(this.buf, this.pos, key, keyBytes, value, ID_NAME, id)
    this.count++
  }

  /**
   * Keep only the records at `keep` (indexes, ascending): the others are moved out (the idempotent
   * path drops the duplicates before the frame is written). The frame must hold ids (`ids`).
   */
  keepOnly(keep: readonly number[]): void {
    const starts = this.starts as number[]
    let to = HEADER_BYTES + this.pid.length
    for (const i of keep) {
      const from = starts[i] as number
      const end = i + 1 < starts.length ? (starts[i + 1] as number) : this.pos
      if (from !== to) this.buf.copy(this.buf, to, from, end)
      to += end - from
    }
    this.pos = to
    this.count = keep.length
    this.ids = this.starts = undefined // no longer valid: the frame is written as it is now
  }

  /** The frame's bytes with `baseOffset` (a view of its buffer: valid until the next `start`). */
  frame(baseOffset: number): Buffer {
    return sealFrame(
      this.buf.subarray(0, this.pos),
      0,
      this.pid.length,
      baseOffset,
      this.count,
      this.timestamp,
      this.timestamp,
    )
  }
}
