import { closeSync, openSync, readSync } from 'node:fs'
import { TopicCorruptError, UnknownMessageTypeError, backendError, type LogRollbackError } from '../../core/errors.js'
import type { Key, Message } from '../../core/types.js'
import type { PartitionReader } from '../../backends/backend.js'
import { fits, rawOf, type RawBudget, type RawRecord } from '../../backends/record.js'
import { chunkFor, type Chunk, type ChunkDirectory } from './chunks.js'
import type { LineIndexCache } from './line-index.js'
import { LineError, decodeLine, type LineFormat } from './line-codec.js'

const WINDOW = 256 * 1024

/** What a reader reports about a line it could not fully decode (the message carries the same error). */
export type LineProblemHook = (error: Error, message: Message) => void

/** The key a corrupt line reports when its KEY field is unreadable. */
function placeholderKey(f: LineFormat): Key {
  return f.keyWidth < 0 ? '' : f.keyWidth === 8 ? 0n : 0
}

/**
 * Reads one partition of a TwainMQ topic forward: a line's offset is its index in the partition
 * (the chunk's start offset + its line number in the chunk). Only complete, `\n`-terminated lines
 * are read; a line still being written is read once its `\n` arrives.
 *
 * Lines that cannot be decoded are **delivered**, at their own offset, with `message.error` set (the
 * error also carries `file` and 1-based `line`, and `typeId` for an unknown type) — so
 * later offsets never shift (TwainMQ's bug 5) and a consumer group can ack, commit or dead-letter
 * past them:
 * - a corrupt line (bad base85, bad deflate, bad UTF-8, too short): `TopicCorruptError` naming the
 *   file and line number; `value` is the raw line (bytes), `key`/`timestamp` are those fields when
 *   they decoded (else 0 / 0n / "" and 0);
 * - a registered-type id missing from the topic's `message_types`: `UnknownMessageTypeError` with
 *   the offset; `value` is the decoded JSON, `type` is absent.
 *
 * Moving between chunks: a chunk's lines end where the next chunk (by start offset, then day)
 * starts. A torn last line of a finished chunk (no `\n`, a later chunk exists) is delivered as
 * corrupt at its offset, since Python's producer counted it when it started the next chunk.
 */
export class TwainmqPartitionReader implements PartitionReader {
  private fd: number | undefined
  private chunk: Chunk | undefined
  /** Byte position and offset of the next line of the current chunk to look at. */
  private pos = 0
  private cur = 0
  /** File bytes [winPos, winPos + winLen) are in `buf`. */
  private winPos = 0
  private winLen = 0
  private buf = Buffer.allocUnsafe(WINDOW)
  private closed = false

  constructor(
    private readonly dir: ChunkDirectory,
    private readonly lines: LineIndexCache,
    readonly topic: string,
    readonly partition: number,
    private readonly format: LineFormat,
    public next: number,
    private readonly onProblem?: LineProblemHook,
    /** Called once, by the first `close()` (the store that opened it forgets it). */
    private readonly onClose?: () => void,
  ) {}

  seek(offset: number): void {
    this.next = offset
    this.release()
  }

  async read(max: number): Promise<Message[]> {
    const out: Message[] = []
    if (this.closed || max <= 0) return out
    let chunks = this.dir.partition(this.partition)
    if (this.fd === undefined && !this.locate(chunks)) return out
    while (out.length < max) {
      const c = this.chunk as Chunk
      const following = after(chunks, c)
      const limit = following ? following.start : Infinity
      if (this.cur >= limit) {
        this.open(following as Chunk, true)
        continue
      }
      let rel = this.pos - this.winPos
      let nl = rel >= 0 && rel < this.winLen ? newline(this.buf, rel, this.winLen) : -1
      if (nl < 0) {
        this.winLen = readSync(this.fd as number, this.buf, 0, this.buf.length, this.pos)
        this.winPos = this.pos
        rel = 0
        nl = newline(this.buf, 0, this.winLen)
        if (nl < 0) {
          if (this.winLen === this.buf.length) {
            this.buf = Buffer.allocUnsafe(this.buf.length * 2) // a line longer than the window
            this.winLen = 0
            continue
          }
          // The end of this chunk's complete lines: is there a later chunk?
          chunks = this.dir.partition(this.partition)
          const next = after(chunks, c)
          if (!next) return out
          if (this.winLen > 0 && this.cur < next.start) {
            // A torn last line of a finished chunk: it occupies its offset.
            if (this.cur >= this.next) this.deliver(out, 0, this.winLen, c)
            this.cur++
          }
          this.open(next, true)
          continue
        }
      }
      while (nl >= 0 && out.length < max && this.cur < limit) {
        if (this.cur >= this.next) this.deliver(out, rel, nl, c)
        this.cur++
        rel = nl + 1
        nl = newline(this.buf, rel, this.winLen)
      }
      this.pos = this.winPos + rel
    }
    return out
  }

  /**
   * `read`, its values encoded again as the producer stores them (a TwainMQ line keeps JSON text or
   * base85 bytes, not twainmq's stored form). A record the budget has no room for is read again next time.
   */
  async readRaw(max: number, budget?: RawBudget): Promise<RawRecord[]> {
    if (budget?.full === true) return []
    const out: RawRecord[] = []
    for (const m of await this.read(max)) {
      const r = rawOf(m)
      if (!fits(budget, r.end - r.start)) {
        this.seek(m.offset)
        break
      }
      out.push(r)
    }
    return out
  }

  /** Damage in a TwainMQ chunk is reported by `read` itself, where it meets it: nothing is left to check at the end. */
  async verifyEnd(): Promise<void> {}

  /** A directory's log never moves back. */
  takeRollback(): LogRollbackError | undefined {
    return undefined
  }

  private deliver(out: Message[], start: number, end: number, c: Chunk): void {
    out.push(this.message(start, end, c))
    this.next = this.cur + 1
  }

  private message(start: number, end: number, c: Chunk): Message {
    const offset = this.cur
    try {
      const d = decodeLine(this.format, this.buf, start, end)
      const m: Message = {
        topic: this.topic,
        partition: this.partition,
        offset,
        key: d.key,
        timestamp: d.timestamp,
        value: d.value,
        headers: {},
        producerId: '',
      }
      if (d.type !== undefined) m.type = d.type
      if (d.unknownTypeId !== undefined) {
        const where = { file: this.dir.path(c), line: offset - c.start + 1, typeId: d.unknownTypeId }
        m.error = new UnknownMessageTypeError(
          `Message at offset ${offset} of TwainMQ topic "${this.topic}" partition ${this.partition} (line ${where.line} of ${where.file}) has type id ${d.unknownTypeId}, which is not in the topic's message_types`,
          where,
        )
        this.onProblem?.(m.error, m)
      }
      return m
    } catch (e) {
      if (!(e instanceof LineError)) throw e
      const where = { file: this.dir.path(c), line: offset - c.start + 1 }
      const error = Object.assign(
        new TopicCorruptError(
          `Line ${where.line} of ${where.file} (offset ${offset} of TwainMQ topic "${this.topic}" partition ${this.partition}) is corrupt: ${e.message}`,
          {
            cause: e,
          },
        ),
        where,
      )
      const m: Message = {
        topic: this.topic,
        partition: this.partition,
        offset,
        key: e.key ?? placeholderKey(this.format),
        timestamp: e.timestamp ?? 0,
        value: Buffer.from(this.buf.subarray(start, end)),
        headers: {},
        producerId: '',
        error,
      }
      this.onProblem?.(error, m)
      return m
    }
  }

  /** Open the chunk holding `next`; false when the partition has no chunk yet. */
  private locate(chunks: readonly Chunk[]): boolean {
    if (chunks.length === 0) return false
    const first = chunks[0] as Chunk
    if (this.next < first.start) this.next = first.start
    this.open(chunks[chunkFor(chunks, this.next)] as Chunk, false)
    return true
  }

  /**
   * Open chunk `c`: at its first line when moving on from the previous chunk (a gap before its
   * start is skipped), else at line `next` (found through the line index; past the end of its
   * complete lines: at that end, and lines below `next` are skipped as they arrive).
   */
  private open(c: Chunk, fromStart: boolean): void {
    this.release()
    const path = this.dir.path(c)
    try {
      this.fd = openSync(path, 'r')
    } catch (e) {
      throw backendError(`Cannot open ${path}`, e)
    }
    this.chunk = c
    if (fromStart || this.next <= c.start) {
      this.pos = 0
      this.cur = c.start
      if (this.next < c.start) this.next = c.start
      return
    }
    const idx = this.lines.get(path).refresh(this.fd)
    const k = Math.min(this.next - c.start, idx.lines)
    this.pos = idx.positionOf(k, this.fd)
    this.cur = c.start + k
  }

  private release(): void {
    const fd = this.fd
    this.fd = undefined
    this.chunk = undefined
    this.winLen = 0
    if (fd !== undefined) {
      try {
        closeSync(fd)
      } catch {
        /* already closed */
      }
    }
  }

  async close(): Promise<void> {
    const first = !this.closed
    this.closed = true
    this.release()
    if (first) this.onClose?.()
  }
}

/** The chunk after `c` in `chunks` (matched by name: listings are rebuilt), if any. */
function after(chunks: readonly Chunk[], c: Chunk): Chunk | undefined {
  for (let i = 0; i < chunks.length; i++) if ((chunks[i] as Chunk).name === c.name) return chunks[i + 1]
  return undefined
}

/** Index of the first `\n` in `buf[from, end)`, or -1. */
function newline(buf: Buffer, from: number, end: number): number {
  if (from >= end) return -1
  // Search a view of the window only: bytes past `end` are stale.
  return (end === buf.length ? buf : buf.subarray(0, end)).indexOf(10, from)
}
