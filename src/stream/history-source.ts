import type { Backend, PartitionReader } from '../backends/backend.js'
import { InvalidArgumentError } from '../core/errors.js'
import type { Message } from '../core/types.js'
import type { BatchSource } from './batch-iterator.js'

/** A finite read of a topic (DESIGN §3.5). `to` is exclusive, like `end` offsets and `Array.slice`. */
export interface HistoryPlan {
  topic: string
  partition?: number | undefined
  from?: number | { time: Date | number } | undefined
  to?: number | undefined
  limit?: number | undefined
  reverse?: boolean | undefined
  /** Per-batch post-processing (registered-type validation); may be asynchronous. */
  decode?: ((batch: Message[]) => Message[] | Promise<Message[]>) | undefined
}

const BATCH = 4096

/** Reads one partition newest-first between `lo` (inclusive) and `hi` (exclusive), in chunks. */
class ReverseCursor {
  private hi: number
  private chunk = 256
  private buf: Message[] = []

  constructor(
    private readonly reader: PartitionReader,
    private readonly lo: number,
    hi: number,
  ) {
    this.hi = hi
  }

  /** Newest remaining message without consuming it. */
  async peek(): Promise<Message | undefined> {
    while (this.buf.length === 0 && this.hi > this.lo) {
      const from = Math.max(this.lo, this.hi - this.chunk)
      this.chunk = Math.min(this.chunk * 2, BATCH)
      this.reader.seek(from)
      const got: Message[] = []
      while (got.length < this.hi - from) {
        const b = await this.reader.read(this.hi - from - got.length)
        if (b.length === 0) break
        for (const m of b) if (m.offset < this.hi) got.push(m)
        if ((b[b.length - 1] as Message).offset >= this.hi - 1) break
      }
      this.buf = got.reverse()
      this.hi = from
    }
    return this.buf[0]
  }

  shift(): Message | undefined {
    return this.buf.shift()
  }
}

export class HistorySource implements BatchSource<Message> {
  private readers: PartitionReader[] = []
  private forward: Array<{ reader: PartitionReader; to: number }> = []
  private reverse: ReverseCursor[] = []
  private current = 0
  private emitted = 0
  private ready: Promise<void> | undefined

  constructor(
    private readonly backend: Backend,
    private readonly plan: HistoryPlan,
  ) {}

  private async init(): Promise<void> {
    const { topic, partition, from, to, reverse } = this.plan
    const meta = await this.backend.getTopic(topic)
    if (partition !== undefined && (!Number.isInteger(partition) || partition < 0 || partition >= meta.partitions)) {
      throw new InvalidArgumentError(`Partition ${partition} does not exist in topic "${topic}" (partitions 0..${meta.partitions - 1})`)
    }
    const offsets = await this.backend.offsets(topic)
    const parts = partition === undefined ? offsets : offsets.filter((o) => o.partition === partition)
    for (const o of parts) {
      let lo = o.start
      if (typeof from === 'number') lo = Math.max(lo, from)
      else if (from) lo = Math.max(lo, await this.backend.offsetForTime(topic, o.partition, from.time instanceof Date ? from.time.getTime() : from.time))
      const hi = to === undefined ? o.end : Math.min(o.end, to)
      const reader = await this.backend.openReader(topic, o.partition, lo)
      this.readers.push(reader)
      if (reverse) this.reverse.push(new ReverseCursor(reader, lo, hi))
      else this.forward.push({ reader, to: hi })
    }
  }

  async next(signal: AbortSignal): Promise<Message[] | undefined> {
    this.ready ??= this.init()
    await this.ready
    const left = (this.plan.limit ?? Infinity) - this.emitted
    if (left <= 0 || signal.aborted) return undefined
    const out = this.plan.reverse ? await this.nextReverse(Math.min(left, BATCH)) : await this.nextForward(Math.min(left, BATCH), signal)
    if (!out || out.length === 0) return undefined
    this.emitted += out.length
    return this.plan.decode ? this.plan.decode(out) : out
  }

  private async nextForward(max: number, signal: AbortSignal): Promise<Message[] | undefined> {
    while (this.current < this.forward.length && !signal.aborted) {
      const { reader, to } = this.forward[this.current] as { reader: PartitionReader; to: number }
      if (reader.next < to) {
        const b = await reader.read(Math.min(max, to - reader.next))
        const out = b.length === 0 || (b[b.length - 1] as Message).offset < to ? b : b.filter((m) => m.offset < to)
        if (out.length > 0) return out
        // Nothing below `to` came back: this partition is done (or has a trimmed gap to its end).
      }
      this.current++
    }
    return undefined
  }

  /** The newest messages across partitions by timestamp (a k-way merge of per-partition cursors). */
  private async nextReverse(max: number): Promise<Message[] | undefined> {
    const out: Message[] = []
    while (out.length < max) {
      let best = -1
      let bestTs = -Infinity
      for (let i = 0; i < this.reverse.length; i++) {
        const m = await (this.reverse[i] as ReverseCursor).peek()
        if (m && m.timestamp > bestTs) {
          best = i
          bestTs = m.timestamp
        }
      }
      if (best < 0) break
      out.push((this.reverse[best] as ReverseCursor).shift() as Message)
    }
    return out
  }

  async close(): Promise<void> {
    await this.ready?.catch(() => undefined)
    await Promise.all(this.readers.map((r) => r.close()))
  }
}
