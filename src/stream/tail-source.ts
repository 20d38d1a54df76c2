import type { Backend, PartitionReader } from '../backends/backend.js'
import { InvalidArgumentError } from '../core/errors.js'
import type { Message } from '../core/types.js'
import type { BatchSource } from './batch-iterator.js'
import { Wake } from './wake.js'

/** Where a tail starts. Partitions missing from an `offset` record start at the end. */
export type TailFrom = 'start' | 'end' | { offset: Record<number, number> | number } | { time: Date | number }

const isOffset = (v: unknown) => Number.isSafeInteger(v) && (v as number) >= 0

/** Check a tail's `from` option; `InvalidArgumentError` naming the bad value (e.g. `'begin'`). */
export function checkTailFrom(from: unknown): TailFrom {
  if (from === 'start' || from === 'end') return from
  if (typeof from === 'object' && from !== null) {
    const f = from as { offset?: unknown; time?: unknown }
    if (
      'offset' in f &&
      (isOffset(f.offset) ||
        (typeof f.offset === 'object' && f.offset !== null && Object.values(f.offset).every(isOffset)))
    )
      return from as TailFrom
    if (
      'time' in f &&
      ((f.time instanceof Date && !Number.isNaN(f.time.getTime())) ||
        (typeof f.time === 'number' && Number.isFinite(f.time)))
    )
      return from as TailFrom
  }
  const shown = typeof from === 'string' ? JSON.stringify(from) : (JSON.stringify(from) ?? String(from))
  throw new InvalidArgumentError(
    `tail() option from is ${shown}: use 'start', 'end', { offset: n | { [partition]: n } } or { time: Date | ms }`,
  )
}

/** What a tail reads: topics, optionally limited to some partitions. */
export interface TailPlan {
  topics: string[]
  partitions?: number[] | undefined
  from: TailFrom
  /** Drop messages whose producerId is this. */
  skipProducer?: string | undefined
  /** End offsets per topic captured (or asked for) when the stream was created (`from: 'end'`). */
  ends?: Map<string, number[] | Promise<number[]>> | undefined
  /** Per-message post-processing (e.g. registered-type validation). */
  /** Per-batch post-processing (registered-type validation); may be asynchronous. */
  decode?: ((batch: Message[]) => Message[] | Promise<Message[]>) | undefined
  /** Told of a log rollback the tail read past (default: a process warning). */
  onRollback?: ((e: Error) => void) | undefined
}

const MAX_BATCH = 4096

/** One live tail over several partitions: reads partitions that may have data, waits otherwise. */
export class TailSource implements BatchSource<Message> {
  private readers: PartitionReader[] = []
  private dirty: boolean[] = []
  private unwatch: Array<() => void> = []
  private readonly wake = new Wake()
  private rr = 0
  private ready: Promise<void> | undefined
  private closed = false

  constructor(
    private readonly backend: Backend,
    private readonly plan: TailPlan,
  ) {}

  private async init(): Promise<void> {
    for (const topic of this.plan.topics) {
      const meta = await this.backend.getTopic(topic)
      const parts = this.plan.partitions ?? Array.from({ length: meta.partitions }, (_, i) => i)
      for (const p of parts) {
        if (!Number.isInteger(p) || p < 0 || p >= meta.partitions) {
          throw new InvalidArgumentError(
            `Partition ${p} does not exist in topic "${topic}" (partitions 0..${meta.partitions - 1})`,
          )
        }
      }
      const starts = await this.startOffsets(topic, parts)
      for (let i = 0; i < parts.length; i++) {
        const p = parts[i] as number
        if (this.closed) return
        const reader = await this.backend.openReader(topic, p, starts[i] as number)
        const idx = this.readers.length
        this.readers.push(reader)
        this.dirty.push(true)
        this.unwatch.push(
          this.backend.watch(topic, p, () => {
            this.dirty[idx] = true
            this.wake.wake()
          }),
        )
      }
    }
  }

  private async startOffsets(topic: string, parts: number[]): Promise<number[]> {
    const from = this.plan.from
    if (from === 'start') return parts.map(() => 0)
    const ends = async () => {
      const snap = await Promise.resolve(this.plan.ends?.get(topic)).catch(() => undefined)
      if (snap) return snap
      const offs = await this.backend.offsets(topic)
      return offs.map((o) => o.end)
    }
    if (from === 'end') {
      const e = await ends()
      return parts.map((p) => e[p] ?? 0)
    }
    if ('offset' in from) {
      if (typeof from.offset === 'number') return parts.map(() => from.offset as number)
      const rec = from.offset
      const e = await ends()
      return parts.map((p) => rec[p] ?? e[p] ?? 0)
    }
    const t = from.time instanceof Date ? from.time.getTime() : from.time
    return Promise.all(parts.map((p) => this.backend.offsetForTime(topic, p, t)))
  }

  async next(signal: AbortSignal): Promise<Message[] | undefined> {
    this.ready ??= this.init()
    await this.ready
    const n = this.readers.length
    for (;;) {
      if (signal.aborted || this.closed) return undefined
      this.wake.take()
      let any = false
      for (let k = 0; k < n; k++) {
        const i = (this.rr + k) % n
        if (!this.dirty[i]) continue
        this.dirty[i] = false
        const reader = this.readers[i] as PartitionReader
        const batch = await reader.read(MAX_BATCH)
        if (signal.aborted || this.closed) return undefined
        const rolledBack = reader.takeRollback()
        // A tail has no error channel: the rollback (its records are delivered again) is logged, or a process warning.
        if (rolledBack) {
          if (this.plan.onRollback) this.plan.onRollback(rolledBack)
          else process.emitWarning(rolledBack)
        }
        if (batch.length === MAX_BATCH) this.dirty[i] = true
        const out = this.filter(batch)
        if (out.length > 0) {
          this.rr = i + 1
          return this.plan.decode ? this.plan.decode(out) : out
        }
        any ||= this.dirty[i] as boolean
      }
      if (!any && !this.dirty.some(Boolean)) await this.wake.wait(signal)
    }
  }

  private filter(batch: Message[]): Message[] {
    const skip = this.plan.skipProducer
    return skip === undefined ? batch : batch.filter((m) => m.producerId !== skip)
  }

  async close(): Promise<void> {
    this.closed = true
    for (const u of this.unwatch) u()
    this.unwatch = []
    await this.ready?.catch(() => undefined)
    for (const u of this.unwatch) u()
    await Promise.all(this.readers.map((r) => r.close()))
  }
}
