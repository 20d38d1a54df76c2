import { InvalidArgumentError } from './errors.js'

/** A point in time as the API takes it: ms since the epoch (fractions allowed) or a `Date`. */
export type TimeInput = number | Date

/**
 * A time given as ms since the epoch or a `Date`, checked: a finite, non-negative number of ms, or
 * a valid `Date` at or after the epoch. Anything else is an `InvalidArgumentError` naming `what`
 * and the value (`send() option timestamp must be …, got NaN`).
 */
export function checkTime(what: string, value: unknown): number {
  const ms = value instanceof Date ? value.getTime() : value
  if (typeof ms === 'number' && Number.isFinite(ms) && ms >= 0) return ms
  const shown =
    value instanceof Date
      ? Number.isNaN(ms)
        ? 'Invalid Date'
        : `${value.toISOString()} (before the epoch)`
      : typeof value === 'string'
        ? JSON.stringify(value)
        : String(value)
  throw new InvalidArgumentError(
    `${what} must be ms since the epoch (a finite number ≥ 0) or a valid Date, got ${shown}`,
  )
}
