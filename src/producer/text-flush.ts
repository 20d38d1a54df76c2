import type { IdempotentOutcome, TextFrame, TextFrames } from '../backends/backend.js'
import { TopicNotFoundError } from '../core/errors.js'
import type { RecordMetadata } from '../core/types.js'
import { MAX_BATCH_BYTES } from './partition-batches.js'
import type { Preparer } from './prepare.js'
import type { SendItem, SendRecord } from './send-record.js'

/** Largest frame kept for reuse. */
const KEEP_BYTES = 8 * 1024 * 1024
/** What a part written at once returns (its sends are settled already). */
const DONE: Promise<void> = Promise.resolve()

/** A queued `sendBatch`: its items and how to settle it. */
export interface BatchSend {
  items: SendItem[]
  resolve: (r: RecordMetadata[]) => void
  reject: (e: unknown) => void
}

/**
 * A `sendBatch` item the frame path takes: a string value, and no type, headers, id or timestamp
 * of its own (DESIGN §3.12's per-message `timestamp`: an item giving one is left to the general
 * path, which knows what to do with it).
 */
function isPlainText(item: SendItem | null | undefined): boolean {
  return (
    item !== null &&
    typeof item === 'object' &&
    typeof item.value === 'string' &&
    item.type === undefined &&
    item.headers === undefined &&
    item.id === undefined &&
    (item as { timestamp?: unknown }).timestamp === undefined
  )
}

/** One partition's part of a text flush: its frame and its sends, in send order. */
interface Part {
  partition: number
  frame: TextFrame
  sends: SendRecord[]
  /** Some of its sends have an idempotency id (the frame is appended with `appendIdempotent`). */
  ids: boolean
}

/**
 * The producer's path for a flush of plain text sends (string values, no headers but an idempotency
 * id, no type) on a
 * store with the text-frame capability (`TopicStore.frames`): each send is checked as any other and its
 * record encoded straight into its partition's frame, one pass, no record objects; each frame is
 * one append. A send settles with its partition's append, as on the general path. A flush of one
 * `sendBatch` of plain text items (`writeBatch`) is written the same way. Frames are reused once
 * their append has settled.
 */
export class TextFlusher {
  private readonly free: TextFrame[] = []

  constructor(
    private readonly frames: TextFrames,
    private readonly topic: string,
    private readonly producerId: string,
  ) {}

  /** An empty frame, or undefined when the topic takes none (then the general path writes). */
  private take(timestamp: number): TextFrame | undefined {
    const f = this.free.pop() ?? this.frames.frame(this.topic, this.producerId)
    f?.start(timestamp)
    return f
  }

  /**
   * Write `batch`; false (nothing done) when the topic takes no frames. `issued` is called once
   * every append is issued; `onNotFound` when the topic turned out missing.
   */
  write(
    batch: SendRecord[],
    prep: Preparer,
    issued: () => void,
    onNotFound: () => void,
    windowMs: number,
  ): Promise<void> | false {
    const first = this.take(prep.now)
    if (first === undefined) return false
    const parts = new Map<number, Part>()
    let last: Part | undefined
    for (const r of batch) {
      try {
        prep.text(r)
      } catch (e) {
        r.reject(e)
        continue
      }
      const partition = r.partition
      let part = last !== undefined && last.partition === partition ? last : parts.get(partition)
      if (part === undefined) {
        const frame = parts.size === 0 ? first : (this.take(prep.now) as TextFrame)
        parts.set(partition, (part = { partition, frame, sends: [], ids: false }))
      }
      last = part
      if (r.id === undefined) part.frame.add(r.key, r.keyBytes, r.value as string)
      else {
        part.frame.add(r.key, r.keyBytes, r.value as string, r.id)
        part.ids = true
      }
      part.sends.push(r)
    }
    if (parts.size === 0) this.free.push(first)
    if (parts.size === 1) {
      const only = this.append(parts.values().next().value as Part, onNotFound, windowMs)
      issued()
      return only
    }
    const writes: Array<Promise<void>> = []
    for (const part of parts.values()) writes.push(this.append(part, onNotFound, windowMs))
    issued()
    return Promise.all(writes).then(() => undefined)
  }

  /**
   * Write a `sendBatch` whose items are all plain text (see `isPlainText`) as one frame per
   * partition, settling it; false (nothing done) when an item is not plain text, the batch is more
   * than one write takes (`maxBatch` records, `MAX_BATCH_BYTES`) or the topic takes no frames: the
   * general path writes it then. Every item is checked before anything is written, so one bad item
   * writes nothing, as on the general path; no record object is made per item.
   */
  writeBatch(
    batch: BatchSend,
    prep: Preparer,
    issued: () => void,
    onNotFound: () => void,
    maxBatch: number,
  ): Promise<void> | false {
    const items = batch.items
    const n = items.length
    if (n > maxBatch) return false
    let units = 0
    for (let i = 0; i < n; i++) {
      const item = items[i] as SendItem
      if (!isPlainText(item)) return false
      units += (item.value as string).length
    }
    if (units * 3 + n * 64 >= MAX_BATCH_BYTES) return false
    const first = this.take(prep.now)
    if (first === undefined) return false
    // Each item's metadata, its offset first the record's index in its frame (the base is added once written).
    const out = new Array<RecordMetadata>(n)
    const parts = new Map<number, Part>()
    let last: Part | undefined
    try {
      for (let i = 0; i < n; i++) {
        const item = items[i] as SendItem
        const partition = prep.textItem(item)
        let part = last !== undefined && last.partition === partition ? last : parts.get(partition)
        if (part === undefined) {
          const frame = parts.size === 0 ? first : (this.take(prep.now) as TextFrame)
          parts.set(partition, (part = { partition, frame, sends: [], ids: false }))
        }
        last = part
        out[i] = { partition, offset: part.frame.count }
        part.frame.add(prep.key, prep.keyBytes, item.value as string)
      }
    } catch (e) {
      if (parts.size === 0) this.release(first)
      for (const part of parts.values()) this.release(part.frame)
      issued()
      batch.reject(e)
      return DONE
    }
    if (parts.size === 1) {
      const written = this.appendBatchPart(last as Part, onNotFound)
      issued()
      if (typeof written === 'number') {
        for (let i = 0; i < n; i++) (out[i] as RecordMetadata).offset += written
        batch.resolve(out)
        return DONE
      }
      return written.then((base) => {
        for (let i = 0; i < n; i++) (out[i] as RecordMetadata).offset += base
        batch.resolve(out)
      }, batch.reject)
    }
    const writes: Array<number | Promise<number>> = []
    for (const part of parts.values()) writes.push(this.appendBatchPart(part, onNotFound))
    issued()
    // A partition that failed fails the batch (the others' records stay written), as on the general path.
    return Promise.all(writes).then((bases) => {
      const baseOf = new Map<number, number>()
      let k = 0
      for (const partition of parts.keys()) baseOf.set(partition, bases[k++] as number)
      for (let i = 0; i < n; i++) {
        const m = out[i] as RecordMetadata
        m.offset += baseOf.get(m.partition) as number
      }
      batch.resolve(out)
    }, batch.reject)
  }

  /**
   * Append one part of a `sendBatch`: its base offset, at once when the store writes now
   * (`frames.appendNow`), else a promise of it; a failure rejects. Its frame is released either way.
   */
  private appendBatchPart(part: Part, onNotFound: () => void): number | Promise<number> {
    const done = (e?: unknown): void => {
      this.release(part.frame)
      if (e instanceof TopicNotFoundError) onNotFound()
    }
    let base: number | undefined
    try {
      base = this.frames.appendNow(this.topic, part.partition, part.frame)
    } catch (e) {
      done(e)
      return Promise.reject(e)
    }
    if (base !== undefined) {
      done()
      return base
    }
    return this.frames.append(this.topic, part.partition, part.frame).then(
      (b) => (done(), b),
      (e: unknown) => {
        done(e)
        throw e
      },
    )
  }

  /**
   * Append one part: written at once when the store can (`frames.appendNow`), its sends resolved
   * right after the write, in the same task; else through `frames.append`. Settling at once matters
   * for latency beyond this process: a reader woken by the write often waits for this CPU until
   * the writer blocks again (decision 175).
   */
  private append(part: Part, onNotFound: () => void, windowMs: number): Promise<void> {
    if (part.ids) return this.appendIdempotent(part, onNotFound, windowMs)
    let base: number | undefined
    try {
      base = this.frames.appendNow(this.topic, part.partition, part.frame)
    } catch (e) {
      this.failed(part, e, onNotFound)
      return DONE
    }
    if (base === undefined) return this.appendLater(part, onNotFound)
    this.written(part, base)
    return DONE
  }

  private async appendLater(part: Part, onNotFound: () => void): Promise<void> {
    let base: number
    try {
      base = await this.frames.append(this.topic, part.partition, part.frame)
    } catch (e) {
      return this.failed(part, e, onNotFound)
    }
    this.written(part, base)
  }

  /** A part with ids: each send resolves with its record's offset, or the stored one's (`duplicate`). */
  private async appendIdempotent(part: Part, onNotFound: () => void, windowMs: number): Promise<void> {
    let got: IdempotentOutcome
    try {
      got = await this.frames.appendIdempotent(this.topic, part.partition, part.frame, windowMs)
    } catch (e) {
      return this.failed(part, e, onNotFound)
    }
    const { partition, sends } = part
    const { base, slots, repeats } = got
    this.release(part.frame)
    for (let i = 0; i < sends.length; i++) {
      const s = slots[i] as number
      ;(sends[i] as SendRecord).resolve(
        s >= 0
          ? { partition, offset: s, duplicate: true }
          : repeats?.has(i) === true
            ? { partition, offset: base + ~s, duplicate: true }
            : { partition, offset: base + ~s },
      )
    }
  }

  private written(part: Part, base: number): void {
    const { partition, sends } = part
    this.release(part.frame)
    for (let i = 0; i < sends.length; i++) (sends[i] as SendRecord).resolve({ partition, offset: base + i })
  }

  private failed(part: Part, e: unknown, onNotFound: () => void): void {
    this.release(part.frame)
    if (e instanceof TopicNotFoundError) onNotFound()
    for (const r of part.sends) r.reject(e)
  }

  private release(frame: TextFrame): void {
    if (frame.bytes <= KEEP_BYTES) this.free.push(frame)
  }
}
