import type { KeyCodec } from '../../core/keys.js'
import type { Message } from '../../core/types.js'
import type { MessageFactory, RawBudget, RawRecord } from '../record.js'
import { FLAG_SEAL, HEADER_BYTES, decodeBatch, rawBatch, type FrameHeader, type RecordCursor } from './batch-format.js'

/**
 * What a file reader remembers of the frame its last read stopped inside (a consumer takes a few
 * hundred records at a time from 1,000-record frames): the frame's CRC was checked, and where its
 * next record lies. A read continuing there neither checks the CRC again nor scans the records
 * before it. Valid only for the bytes in the reader's buffer: the reader clears it whenever it
 * refills the buffer, seeks, or closes or switches its segment.
 */
export class FrameResume {
  /** Buffer position of the frame (-1: none). */
  private frame = -1
  /** The offset the read stopped before. */
  private offset = -1
  /** Where that offset's record is (handed to the decoders). */
  readonly cursor: RecordCursor = { at: -1, index: 0 }
  /**
   * The raw records of the reader's reads, reused by its next read (raw records are valid only
   * until then): a catch-up read of 100,000 records makes no garbage per record.
   */
  private readonly slots: RawRecord[] = []

  /**
   * Whether a reader at offset `next` checks the CRC of frame `h` at buffer position `rel`: a frame
   * it decodes (`wanted`), unless its last read stopped inside it and checked it then; a seal; and
   * a version 1 frame, whose header has no CRC of its own. A version 2 frame wholly below `next` is
   * passed over unchecked: its records are not wanted.
   */
  mustCheck(rel: number, h: FrameHeader, next: number, wanted: boolean): boolean {
    if (wanted) return !this.continues(rel, next)
    return (h.flags & FLAG_SEAL) !== 0 || h.headerBytes !== HEADER_BYTES
  }

  /**
   * Whether a read of offset `next` from the frame at buffer position `rel` continues the last one:
   * then `cursor` points at its record; else `cursor` is reset (decode from the frame's first record).
   */
  private continues(rel: number, next: number): boolean {
    if (rel === this.frame && next === this.offset) return true
    this.cursor.at = -1
    return false
  }

  /** The read stopped inside the frame at `rel`, before offset `next` (where `cursor` now points). */
  private stopped(rel: number, next: number): void {
    this.frame = rel
    this.offset = next
  }

  /**
   * Decode the records of frame `h` (at buffer position `rel`) from offset `next`, at most `limit`,
   * into `out`: messages with `keys` (made by `make` when given), else `RawRecord`s (within
   * `budget`). Returns the offset after
   * the last one pushed (`next` when none); when `limit` or `budget` stopped it inside the frame,
   * remembers where (see `continues`).
   */
  decode(
    buf: Buffer,
    rel: number,
    h: FrameHeader,
    next: number,
    limit: number,
    out: Array<Message | RawRecord>,
    keys: KeyCodec | undefined,
    at: { readonly topic: string; readonly partition: number },
    budget?: RawBudget,
    make?: MessageFactory,
  ): number {
    const n = keys
      ? decodeBatch(buf, rel, h, at.topic, at.partition, keys, next, limit, out as Message[], this.cursor, make)
      : rawBatch(buf, rel, h, next, limit, out as RawRecord[], this.cursor, budget, this.slots)
    const after = n > 0 ? (out[out.length - 1] as Message | RawRecord).offset + 1 : next
    if ((n === limit || budget?.full === true) && after < h.baseOffset + h.count) this.stopped(rel, after)
    return after
  }

  clear(): void {
    this.frame = -1
    this.cursor.at = -1
  }

  /** `clear`, and drop the reused raw records (they hold on to the reader's buffer). */
  reset(): void {
    this.clear()
    this.slots.length = 0
  }
}
