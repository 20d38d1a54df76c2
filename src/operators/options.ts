import { InvalidArgumentError } from '../core/errors.js'

/** `value`, or `InvalidArgumentError` naming the operator, the option and the bad value. */
export function integerOption(where: string, name: string, value: unknown, min: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min) {
    throw new InvalidArgumentError(`${where}: ${name} must be an integer >= ${min}, got ${describe(value)}`)
  }
  return value
}

/** A number in `min..max` (`Infinity` allowed when `max` is). */
export function numberOption(where: string, name: string, value: unknown, min: number, max = Infinity): number {
  if (typeof value !== 'number' || Number.isNaN(value) || value < min || value > max) {
    const range = max === Infinity ? `>= ${min}` : `${min}..${max}`
    throw new InvalidArgumentError(`${where}: ${name} must be a number ${range}, got ${describe(value)}`)
  }
  return value
}

/** `undefined` or an `AbortSignal`. */
export function signalOption(where: string, value: unknown): AbortSignal | undefined {
  if (value === undefined || value instanceof AbortSignal) return value
  throw new InvalidArgumentError(`${where}: signal must be an AbortSignal, got ${describe(value)}`)
}

/** An options argument: `undefined` or a plain object. */
export function optionsObject<O extends object>(where: string, value: O | undefined): Partial<O> {
  if (value === undefined) return {}
  if (value === null || typeof value !== 'object') throw new InvalidArgumentError(`${where}: options must be an object, got ${describe(value)}`)
  return value
}

function describe(value: unknown): string {
  if (typeof value === 'bigint') return `${value}n`
  if (typeof value === 'string') return JSON.stringify(value)
  if (typeof value === 'function') return 'a function'
  return String(value)
}
