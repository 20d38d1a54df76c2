import type { EntryRef, SharedMemberEvents, SharedMemberOptions } from '../../shared.js'
import type { Scripts } from '../scripts.js'
import { offsetsOf } from '../entry-codec.js'
import { ProducerIds, type MemberPartition } from './shared-entries.js'

/** How claims are made: XAUTOCLAIM with a cursor, or `XREADGROUP … CLAIM` (Redis ≥ 8.4). */
export type ClaimMode = 'autoclaim' | 'readgroup'

/**
 * What the parts of one shared member share (its reads, its holds and its membership): the
 * partitions and their lookups, the options, the events, and how far the member has stopped.
 */
export class MemberState {
  private readonly index = new Map<string, MemberPartition[]>()
  private readonly byKey = new Map<string, MemberPartition>()
  /** Producer ids decoded once per distinct id. */
  readonly ids = new ProducerIds()
  /** Reads ended (`stop()`). */
  stopped = false
  /** Timers ended too (`leave()` or `halt()`). */
  halted = false
  /** Another live member registered under this name: what the name holds is that member's now. */
  replaced = false

  constructor(
    readonly scripts: Scripts,
    readonly options: SharedMemberOptions,
    readonly parts: readonly MemberPartition[],
    readonly events: SharedMemberEvents,
  ) {
    for (const p of parts) {
      this.byKey.set(p.key, p)
      const list = this.index.get(p.topic) ?? []
      list[p.partition] = p
      this.index.set(p.topic, list)
    }
  }

  get name(): string {
    return this.options.name
  }

  get group(): string {
    return this.options.group
  }

  /** The member's partition of an entry, if it has it. */
  part(ref: { topic: string; partition: number }): MemberPartition | undefined {
    return this.index.get(ref.topic)?.[ref.partition]
  }

  /** The member's partition of a stream key. */
  partByKey(key: Buffer | string): MemberPartition | undefined {
    return this.byKey.get(key.toString())
  }

  /** Entries grouped by the member's partition (those of other partitions are dropped). */
  byPartition(entries: readonly EntryRef[]): Map<MemberPartition, number[]> {
    const by = new Map<MemberPartition, number[]>()
    for (const e of entries) {
      const p = this.part(e)
      if (!p) continue
      const list = by.get(p) ?? []
      list.push(e.offset)
      by.set(p, list)
    }
    return by
  }

  /** Entries a script found trimmed: no longer held, and reported. */
  reportTrimmed(p: MemberPartition, ids: unknown): void {
    const offsets = offsetsOf(ids)
    if (offsets.length === 0) return
    for (const o of offsets) p.held.delete(o)
    this.events.trimmed(offsets.map((o) => p.ref(o)))
  }
}
