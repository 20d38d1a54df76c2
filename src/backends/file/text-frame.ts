import type { TextFrame } from '../backend.js'
import { RECORD_FIXED, writeTextRecord } from '../record-codec.js'
import { HEADER_BYTES, sealFrame } from './batch-format.js'

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
  }

  add(key: Buffer | number, keyBytes: number, value: string): void {
    const need = this.pos + RECORD_FIXED + keyBytes + value.length * 3
    if (need > this.buf.length) {
      const bigger = Buffer.allocUnsafe(Math.max(need, this.buf.length * 2))
      this.buf.copy(bigger, 0, 0, this.pos)
      this.buf = bigger
    }
    this.pos = writeTextRecord(this.buf, this.pos, key, keyBytes, value)
    this.count++
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
