import type { RawRecord } from '../../backends/record.js'
import { ValueKind, decodeValue } from '../../core/values.js'
import { isJson, jsonText } from '../transport/content.js'
import { ValueRun } from './value-run.js'
import { H_EVENT } from '../stream/records.js'

const OPEN = 0x5b // [
const COMMA = 0x2c
const CLOSE = 0x5d // ]

/**
 * The body of a read, built as records arrive: one JSON array in JSON mode (each value's JSON
 * text), else the values' bytes back to back. Stored JSON and text bytes are copied as they are
 * (no decode and re-encode), a run of them at a time (see {@link ValueRun}); only a value stored in
 * another form than the body needs (bytes or text in a JSON stream) is converted.
 */
export class PageBody {
  readonly json: boolean
  /** Data messages added. */
  count = 0
  /** Value bytes added (what pages are sized by). */
  bytes = 0
  private buf: Buffer
  private len = 0
  /** Values in the body so far (the run's are not yet). */
  private written = 0
  private readonly run = new ValueRun()

  /**
   * `expectBytes`: the value bytes the page will likely hold. Room is made for them, the brackets
   * and a comma per value of 16 bytes or more, so a full page of such values is built without
   * growing (growing copies the whole body so far); at most 16 MiB is reserved up front. `events`:
   * the stream is a compacted state stream, whose deletes are served as the events they were.
   */
  constructor(
    contentType: string,
    expectBytes = 4096,
    private readonly events = false,
  ) {
    this.json = isJson(contentType)
    const expect = Math.min(expectBytes, 1 << 24)
    this.buf = Buffer.allocUnsafe(Math.max(64, expect + (this.json ? (expect >> 4) + 2 : 0)))
    if (this.json) this.buf[this.len++] = OPEN
  }

  /** The size `raw` would add, for paging (before adding it). */
  sizeOf(raw: RawRecord): number {
    const event = this.eventOf(raw)
    if (event !== undefined) return Buffer.byteLength(event)
    if (this.json && raw.kind !== ValueKind.Json && raw.kind !== ValueKind.Typed)
      return Buffer.byteLength(jsonText(decodeValue(raw.kind, raw.buf, raw.start, raw.end)))
    return raw.end - raw.start
  }

  /**
   * Add a stored record's value. Its bytes are read by the next `flush` (or `finish`): call it
   * before they may change (a raw read's records are valid until that reader's next read).
   */
  addRaw(raw: RawRecord): void {
    const event = this.eventOf(raw)
    if (event !== undefined) {
      // A compacted stream's delete, stored as a tombstone: served as the event it was.
      this.flush()
      this.addText(event)
      return
    }
    if (this.json && raw.kind !== ValueKind.Json && raw.kind !== ValueKind.Typed) {
      this.flush()
      this.addText(jsonText(decodeValue(raw.kind, raw.buf, raw.start, raw.end)))
      return
    }
    if (!this.run.fits(raw.buf, raw.start, raw.end)) this.flush()
    this.run.add(raw.buf, raw.start, raw.end)
    this.count++
    this.bytes += raw.end - raw.start
  }

  /** Copy the values added since the last flush into the body. */
  flush(): void {
    const n = this.run.count
    if (n === 0) return
    this.room(this.run.bytes + n + 1)
    this.len = this.run.flush(this.buf, this.len, this.json ? COMMA : -1, this.written > 0)
    this.written += n
  }

  /** The whole body. */
  finish(): Buffer {
    this.flush()
    if (this.json) {
      this.room(1)
      this.buf[this.len++] = CLOSE
    }
    return this.buf.subarray(0, this.len)
  }

  /** On a compacted state stream (`events`), a delete's tombstone: the event it is served as. */
  private eventOf(raw: RawRecord): string | undefined {
    if (!this.events || raw.kind !== ValueKind.Json || raw.end - raw.start !== 4) return undefined
    return raw.headers?.[H_EVENT]
  }

  private addText(text: string): void {
    const n = Buffer.byteLength(text)
    this.room(n + 2)
    if (this.json && this.written > 0) this.buf[this.len++] = COMMA
    this.len += this.buf.write(text, this.len, 'utf8')
    this.count++
    this.written++
    this.bytes += n
  }

  private room(n: number): void {
    if (this.len + n <= this.buf.length) return
    const grown = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.len + n))
    this.buf.copy(grown, 0, 0, this.len)
    this.buf = grown
  }
}
