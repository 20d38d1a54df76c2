import type { FrameHeader } from './batch-format.js'
import { TIME_ENTRY_BYTES, readTimeIndex, timeEntries, timeEntryAt, type TimeEntry } from './time-index.js'

/**
 * `twainmq check` of a segment's time index (time-index.ts). Fed the walk's whole valid frames in
 * order, it finds every entry that does not hold: one failing its CRC, one not pointing at a
 * records frame (in log order, not a misplaced one) of its offset and bytes, and one whose
 * `maxBefore` is below a timestamp of the records frames before it (which would make a seek skip a
 * record). Each is damage of kind 'index'; `repair` rebuilds the time index with the sparse one.
 */
export class TimeIndexAudit {
  private readonly entries: Array<TimeEntry | undefined> = []
  /** Entry numbers by the position they name. */
  private readonly at = new Map<number, number[]>()
  /** Why an entry found at its frame does not hold; '' when it does. */
  private readonly verdict = new Map<number, string>()
  private max = -Infinity

  constructor(
    readonly path: string,
    notes: string[],
  ) {
    const buf = readTimeIndex(path)
    if (buf.length % TIME_ENTRY_BYTES)
      notes.push(`time index ${path} ends in a partial entry (the next entry written removes it)`)
    for (let i = 0; i < timeEntries(buf); i++) {
      const e = timeEntryAt(buf, i)
      this.entries.push(e)
      if (e) this.at.set(e.position, [...(this.at.get(e.position) ?? []), i])
    }
  }

  /** The whole valid frame (not a seal) at byte `pos`; `misplaced`: behind the offsets before it. */
  frame(pos: number, h: FrameHeader, misplaced: boolean): void {
    if (misplaced) return
    for (const i of this.at.get(pos) ?? []) {
      const e = this.entries[i] as TimeEntry
      if (e.offset !== h.baseOffset || e.frameId !== h.id) continue
      this.verdict.set(
        i,
        e.maxBefore >= this.max
          ? ''
          : `says the records before byte ${pos} are stamped up to ${e.maxBefore}, but one is stamped ${this.max}`,
      )
    }
    if (h.count > 0 && h.maxTimestamp > this.max) this.max = h.maxTimestamp
  }

  /** The entries that do not hold, as check.ts's `Damage`. */
  report(): Array<{ kind: 'index'; file: string; from: number; to: number; reason: string }> {
    return this.entries.flatMap((e, i) => {
      const why =
        e === undefined
          ? 'fails its CRC check'
          : (this.verdict.get(i) ??
            `(offset ${e.offset} at byte ${e.position}) does not point at a frame of that offset and those bytes`)
      return why === ''
        ? []
        : [
            {
              kind: 'index' as const,
              file: this.path,
              from: i * TIME_ENTRY_BYTES,
              to: (i + 1) * TIME_ENTRY_BYTES,
              reason: `time index entry ${i} ${why}`,
            },
          ]
    })
  }
}
