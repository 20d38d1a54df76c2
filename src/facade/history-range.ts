import { InvalidArgumentError } from '../core/errors.js'
import { checkInt } from '../core/names.js'
import type { HistoryOptions } from './twain-options.js'

const MAX = Number.MAX_SAFE_INTEGER

/**
 * Check `history()`'s range options, naming the bad value: offsets are whole numbers from 0, a
 * time is a valid `Date` or finite ms, and `to` is not before a numeric `from` (`to === from` is
 * an empty range). Before, `from: -3` read everything, `from: 1.5` started at 2, and `to` before
 * `from` or below 0 was silently empty.
 */
export function checkHistoryRange(options: HistoryOptions): void {
  const { partition, from, to, limit } = options
  if (partition !== undefined) checkInt('history() option partition', partition, 0, MAX)
  if (limit !== undefined) checkInt('history() option limit', limit, 0, MAX)
  if (to !== undefined) checkInt('history() option to', to, 0, MAX)
  if (from === undefined) return
  if (typeof from === 'object' && from !== null && 'time' in from) {
    const t = from.time
    if ((t instanceof Date && !Number.isNaN(t.getTime())) || (typeof t === 'number' && Number.isFinite(t))) return
    throw new InvalidArgumentError(
      `history() option from.time must be a valid Date or finite milliseconds since the epoch, got ${t instanceof Date ? 'Invalid Date' : String(t)}`,
    )
  }
  if (typeof from !== 'number')
    throw new InvalidArgumentError(
      `history() option from must be an offset (an integer 0..${MAX}) or { time }, got ${JSON.stringify(from) ?? String(from)}`,
    )
  checkInt('history() option from', from, 0, MAX)
  if (to !== undefined && to < from)
    throw new InvalidArgumentError(
      `history() option to (${to}) is before from (${from}): to is exclusive, so to === from reads nothing and to > from reads from..to-1`,
    )
}
