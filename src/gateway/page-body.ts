import type { RawRecord } from '../backends/record.js'
import { ValueKind, decodeValue } from '../core/values.js'
import { isJson, jsonText } from './content.js'

const OPEN = 0x5b // [
const COMMA = 0x2c
const CLOSE = 0x5d // ]

/**
 * The body of a read, built as records arrive: one JSON array in JSON mode (each value's JSON
 * text), else the values' bytes back to back. Stored JSON and text bytes are copied as they are
 * (no decode and re-encode); only a value stored in another form than the body needs (bytes or
 * text in a JSON stream) is converted.
 */
export class PageBody {
  readonly json: boolean
  /** Data messages added. */
  count = 0
  /** Value bytes added (what pages are sized by). */
  bytes = 0
  private buf: Buffer
  private len = 0

  constructor(contentType: string, expectBytes = 4096) {
    this.json = isJson(contentType)
    this.buf = Buffer.allocUnsafe(Math.max(64, Math.min(expectBytes, 1 << 20) + 2))
    if (this.json) this.buf[this.len++] = OPEN
  }

  /** The size `raw` would add, for paging (before adding it). */
  sizeOf(raw: RawRecord): number {
    if (this.json && raw.kind !== ValueKind.Json && raw.kind !== ValueKind.Typed) return Buffer.byteLength(jsonText(decodeValue(raw.kind, raw.buf, raw.start, raw.end)))
    return raw.end - raw.start
  }

  /** Add a stored record's value. */
  addRaw(raw: RawRecord): void {
    if (this.json && raw.kind !== ValueKind.Json && raw.kind !== ValueKind.Typed) {
      this.addText(jsonText(decodeValue(raw.kind, raw.buf, raw.start, raw.end)))
      return
    }
    const n = raw.end - raw.start
    this.separate(n)
    raw.buf.copy(this.buf, this.len, raw.start, raw.end)
    this.len += n
    this.bytes += n
  }

  /** The whole body. */
  finish(): Buffer {
    if (this.json) {
      this.room(1)
      this.buf[this.len++] = CLOSE
    }
    return this.buf.subarray(0, this.len)
  }

  private addText(text: string): void {
    const n = Buffer.byteLength(text)
    this.separate(n)
    this.len += this.buf.write(text, this.len, 'utf8')
    this.bytes += n
  }

  /** Room for `n` more value bytes (and the comma before them in JSON mode). */
  private separate(n: number): void {
    this.room(n + 2)
    if (this.json && this.count > 0) this.buf[this.len++] = COMMA
    this.count++
  }

  private room(n: number): void {
    if (this.len + n <= this.buf.length) return
    const grown = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.len + n))
    this.buf.copy(grown, 0, 0, this.len)
    this.buf = grown
  }
}
