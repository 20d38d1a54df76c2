/**
 * Commander parsers for times and durations. A time is an ISO 8601 date (`2026-12-01`, midnight
 * UTC) or date-time with a time zone (`2026-12-01T10:00:00Z`, `…+01:00`), or milliseconds since the
 * epoch; where a plain number is an offset (`tail --from`), milliseconds are written `time:<ms>`.
 */
import { InvalidArgumentError as CommanderArgError } from 'commander'

const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i
const LOOKS_LIKE_DATE = /^\d{4}-\d{2}-\d{2}/

/** An ISO date or date-time as ms since the epoch, or undefined when `value` is not one. */
function isoTime(value: string): number | undefined {
  if (!LOOKS_LIKE_DATE.test(value)) return undefined
  if (!ISO_DATE.test(value) && !ISO_DATE_TIME.test(value)) {
    const why = /T\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/i.test(value)
      ? 'add a time zone (Z or +hh:mm)'
      : 'use 2026-12-01 or 2026-12-01T10:00:00Z'
    throw new CommanderArgError(`not an ISO 8601 date: ${why}`)
  }
  const ms = Date.parse(value)
  // Date.parse rolls 2026-02-30 over into March; a round trip of the date part catches it.
  if (Number.isNaN(ms) || (ISO_DATE.test(value) && new Date(ms).toISOString().slice(0, 10) !== value)) {
    throw new CommanderArgError('not a real date')
  }
  return ms
}

const MS = /^[0-9]{1,16}$/

/** `--from-time`: an ISO date or date-time, or ms since the epoch. */
export function timeOption(value: string): number {
  const v = value.trim()
  const iso = isoTime(v)
  if (iso !== undefined) return iso
  if (MS.test(v)) return Number(v)
  throw new CommanderArgError(
    'expected an ISO 8601 date (2026-12-01, 2026-12-01T10:00:00Z) or milliseconds since the epoch',
  )
}

/** Where `tail` starts: a position, an offset (in every partition) or a time. */
export type TailFromArg = 'start' | 'end' | number | { time: number }

/** `tail --from`: start, end, an offset, an ISO date or date-time, or `time:<ms>`. */
export function tailFromOption(value: string): TailFromArg {
  const v = value.trim()
  if (v === 'start' || v === 'end') return v
  if (/^[0-9]+$/.test(v) && Number.isSafeInteger(Number(v))) return Number(v)
  const iso = isoTime(v)
  if (iso !== undefined) return { time: iso }
  const ms = /^time:(.*)$/i.exec(v)
  if (ms && MS.test(ms[1]!)) return { time: Number(ms[1]) }
  throw new CommanderArgError(
    "expected 'start', 'end', an offset, an ISO 8601 date (2026-12-01T10:00:00Z) or time:<ms since the epoch>",
  )
}

/** `history --from`: an offset; a time is `--from-time`'s. */
export function offsetOption(value: string): number {
  const v = value.trim()
  if (/^[0-9]+$/.test(v) && Number.isSafeInteger(Number(v))) return Number(v)
  if (LOOKS_LIKE_DATE.test(v) || /^time:/i.test(v))
    throw new CommanderArgError('expected an offset; for a time use --from-time')
  throw new CommanderArgError('expected an offset (a non-negative integer)')
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }

/** A duration: milliseconds, or a number with a unit ms, s, m, h or d (`1500`, `30m`, `7d`); at least 1 ms. */
export function durationOption(value: string): number {
  const m = /^([0-9]+)(ms|s|m|h|d)?$/i.exec(value.trim())
  const ms = m ? Number(m[1]) * UNIT_MS[(m[2] ?? 'ms').toLowerCase()]! : Number.NaN
  if (!Number.isSafeInteger(ms) || ms < 1)
    throw new CommanderArgError(
      'expected a duration of at least 1 ms: milliseconds or a number with ms, s, m, h or d (30m, 1h, 7d)',
    )
  return ms
}

/**
 * `groups reset --to-time`: an ISO 8601 date or date-time, ms since the epoch, or a time relative to
 * now: a minus sign and a duration (`-1h`, `-30m`, `-2d`, `-1500ms`).
 */
export function pastTimeOption(value: string): number {
  const v = value.trim()
  if (v.startsWith('-')) {
    let ms: number
    try {
      ms = durationOption(v.slice(1))
    } catch {
      throw new CommanderArgError('expected -<duration> such as -30m, -1h, -2d (units ms, s, m, h, d)')
    }
    return Date.now() - ms
  }
  try {
    return timeOption(v)
  } catch {
    throw new CommanderArgError(
      'expected an ISO 8601 date (2026-12-01, 2026-12-01T10:00:00Z), ms since the epoch, or a time before now (-30m, -1h, -2d)',
    )
  }
}

/** How a tail start reads in the `tailing …` notice. */
export function describeFrom(from: TailFromArg): string {
  return typeof from === 'object' ? new Date(from.time).toISOString() : String(from)
}
