import { FencedError, InvalidArgumentError } from '../core/errors.js'
import type { IdempotentResult, OutputSource, SourcePosition } from './backend.js'
import { outcomeResults } from './outcome.js'
import { sourceKey } from './source-header.js'
import { StoredPositions } from './stored-positions.js'

/**
 * The arguments of a sourced append checked, the same for every backend.
 * @throws InvalidArgumentError naming the bad value.
 */
export function checkSourced(recordCount: number, source: OutputSource, positions: readonly SourcePosition[]): void {
  if (positions.length !== recordCount)
    throw new InvalidArgumentError(`appendSourced: ${positions.length} positions for ${recordCount} records`)
  for (const [name, v] of [
    ['incarnation', source.incarnation],
    ['epoch', source.epoch],
    ['committed', source.committed],
    ['partition', source.partition],
  ] as const) {
    if (!Number.isSafeInteger(v) || v < 0)
      throw new InvalidArgumentError(`appendSourced: source ${name} must be a non-negative integer, got ${String(v)}`)
  }
  if (typeof source.deadline !== 'number' || Number.isNaN(source.deadline))
    throw new InvalidArgumentError(
      `appendSourced: source deadline must be a time in ms, got ${String(source.deadline)}`,
    )
  for (const p of positions) {
    if (!Number.isSafeInteger(p.offset) || p.offset < 0 || !Number.isSafeInteger(p.seq) || p.seq < 0)
      throw new InvalidArgumentError(`appendSourced: bad position ${JSON.stringify(p)}`)
  }
}

/** What one output partition knows of one source (docs/format.md, "Exactly-once outputs"). */
export interface SourceState {
  /** Highest lease epoch of a writer stored: a lower one is fenced. */
  epoch: number
  /** The input offset below which outputs are no longer remembered (their input is committed). */
  floor: number
  /** Input position → the offset of its output here; the positions of inputs below `floor` are dropped. */
  entries: StoredPositions
}

/** The fenced error of a writer whose epoch or lease is behind. */
export function fencedOutput(topic: string, partition: number, source: OutputSource, why: string): FencedError {
  return new FencedError(
    `Output to ${topic}/${partition} of group "${source.group}" for ${source.topic}/${source.partition} (lease epoch ${source.epoch}) was refused: ${why}`,
  )
}

/**
 * The exactly-once rule of one output partition, over every source that wrote to it (the file
 * backend keeps one per partition; append-src-7.lua is the same rule in Lua). A writer is
 * admitted when its lease epoch is not below the highest stored; a higher epoch (a new lease)
 * sets the floor to the writer's committed offset, the same epoch raises it. An output whose
 * (input offset, sequence number) is remembered is a duplicate: it gets the stored offset.
 */
export class SourceTable {
  readonly sources = new Map<string, SourceState>()

  /**
   * Admit a writer at `epoch` with `committed` (and prune what its input commit passed); undefined
   * when it is fenced (a higher epoch stored). `observe` of the log uses it too, so a table read back
   * holds what the decisions held.
   */
  admit(key: string, epoch: number, committed: number): SourceState | undefined {
    let s = this.sources.get(key)
    if (s === undefined) {
      s = { epoch, floor: committed, entries: new StoredPositions() }
      this.sources.set(key, s)
      return s
    }
    if (epoch < s.epoch) return undefined
    const floor = epoch > s.epoch ? committed : Math.max(s.floor, committed)
    s.epoch = epoch
    if (floor !== s.floor) {
      // A new lease's floor may be lower: what the old floor passed is dropped first, never seen again.
      s.entries.drop(Math.max(floor, s.floor))
      s.floor = floor
    }
    return s
  }

  /** Inputs whose outputs the table holds, over every source. */
  inputs(): number {
    let n = 0
    for (const s of this.sources.values()) n += s.entries.size
    return n
  }

  /** A stored output read from the log (or just written). */
  observe(key: string, epoch: number, committed: number, offset: number, seq: number, at: number): void {
    const s = this.admit(key, epoch, committed)
    // A record of a lower epoch after a higher one: written before this rule held (not by it); kept.
    const state = s ?? (this.sources.get(key) as SourceState)
    if (offset < state.floor) return
    state.entries.set(offset, seq, at)
  }

  /**
   * Decide a call (the table synced to the log's end): which positions to write (`fresh`, indexes)
   * and, per position, the stored offset of a duplicate or `~k` for the k-th fresh one.
   * @throws FencedError when the writer's epoch is behind (nothing is decided).
   */
  decide(
    topic: string,
    partition: number,
    source: OutputSource,
    positions: readonly SourcePosition[],
  ): { fresh: number[]; slots: number[]; repeats: Set<number> | undefined } {
    const s = this.admit(sourceKey(source), source.epoch, source.committed)
    if (s === undefined)
      throw fencedOutput(topic, partition, source, `a writer with a later lease epoch stored outputs there`)
    const fresh: number[] = []
    const slots = new Array<number>(positions.length)
    let repeats: Set<number> | undefined
    // A repeat within the call is possible only where positions do not rise (the usual call's
    // positions rise: one input's outputs in order, then the next input's): looked up only there.
    let inCall: Map<string, number> | undefined
    for (let i = 1; i < positions.length; i++) {
      const a = positions[i - 1] as SourcePosition
      const b = positions[i] as SourcePosition
      if (b.offset < a.offset || (b.offset === a.offset && b.seq <= a.seq)) {
        inCall = new Map()
        break
      }
    }
    for (let i = 0; i < positions.length; i++) {
      const p = positions[i] as SourcePosition
      const stored = p.offset < s.floor ? undefined : s.entries.get(p.offset, p.seq)
      if (stored !== undefined) {
        slots[i] = stored
        continue
      }
      if (inCall === undefined) {
        slots[i] = ~fresh.length
        fresh.push(i)
        continue
      }
      const id = `${p.offset}.${p.seq}`
      const earlier = inCall.get(id)
      if (earlier !== undefined) {
        slots[i] = earlier
        ;(repeats ??= new Set()).add(i)
        continue
      }
      inCall.set(id, ~fresh.length)
      slots[i] = ~fresh.length
      fresh.push(i)
    }
    return { fresh, slots, repeats }
  }

  /** The fresh ones of a decided call were written from `base`: remember them; each position's result. */
  stored(
    source: OutputSource,
    positions: readonly SourcePosition[],
    plan: { fresh: number[]; slots: number[]; repeats: Set<number> | undefined },
    base: number | undefined,
  ): IdempotentResult[] {
    if (base !== undefined && plan.fresh.length > 0) {
      // Admitted once for the call (as `observe` would admit each record: the same epoch and commit).
      const key = sourceKey(source)
      const s = this.admit(key, source.epoch, source.committed) ?? (this.sources.get(key) as SourceState)
      const { fresh } = plan
      for (let k = 0; k < fresh.length; k++) {
        const p = positions[fresh[k] as number] as SourcePosition
        if (p.offset < s.floor) continue
        s.entries.set(p.offset, p.seq, base + k)
      }
    }
    // Nothing written: no slot is negative, and the base is not read.
    return outcomeResults({ base: base ?? 0, slots: plan.slots, repeats: plan.repeats })
  }

  /**
   * The table as JSON-able data (the file backend's checkpoint), version 2: each input's outputs
   * as `[seq, stored offset]` pairs flat, since sequence numbers run up to 2^31 - 1 (a timer turn's,
   * a dead letter's) and a list by sequence number would be written with a null per hole.
   */
  toJSON(): { v: 2; s: Array<[string, number, number, Array<[number, number[]]>]> } {
    const rows: Array<[string, number, number, Array<[number, number[]]>]> = []
    for (const [k, s] of this.sources) {
      const entries: Array<[number, number[]]> = []
      for (const [offset, pairs] of s.entries.byInput()) if (offset >= s.floor) entries.push([offset, pairs])
      rows.push([k, s.epoch, s.floor, entries])
    }
    return { v: 2, s: rows }
  }

  /** A table from `toJSON`'s data (throws on anything else, an older version's included: the log is then read instead). */
  static fromJSON(data: unknown): SourceTable {
    const t = new SourceTable()
    const rows = (data as { v?: unknown; s?: unknown } | null)?.s
    if ((data as { v?: unknown } | null)?.v !== 2 || !Array.isArray(rows)) throw new Error('not a source table')
    for (const row of rows as unknown[]) {
      const [k, epoch, floor, entries] = row as [string, number, number, Array<[number, number[]]>]
      if (
        typeof k !== 'string' ||
        !Number.isSafeInteger(epoch) ||
        !Number.isSafeInteger(floor) ||
        !Array.isArray(entries)
      )
        throw new Error('not a source table')
      const held = new StoredPositions()
      for (const [offset, pairs] of entries) {
        if (!Number.isSafeInteger(offset) || !Array.isArray(pairs) || pairs.length % 2 !== 0)
          throw new Error('not a source table')
        for (let i = 0; i < pairs.length; i += 2) {
          const seq = pairs[i] as number
          if (!Number.isSafeInteger(seq) || seq < 0 || seq >= 2 ** 32 - 1) throw new Error('not a source table')
          held.set(offset, seq, pairs[i + 1] as number)
        }
      }
      t.sources.set(k, { epoch, floor, entries: held })
    }
    return t
  }
}
