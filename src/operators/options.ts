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
  if (value === null || typeof value !== 'object')
    throw new InvalidArgumentError(`${where}: options must be an object, got ${describe(value)}`)
  return value
}

function describe(value: unknown): string {
  if (typeof value === 'bigint') return `${value}n`
  if (typeof value === 'string') return JSON.stringify(value)
  if (typeof value === 'function') return 'a function'
  return String(value)
}

/** `source`, checked to be an `AsyncIterable` (a clear error instead of a later `TypeError`). */
export function asyncIterableOption<T>(where: string, source: AsyncIterable<T>): AsyncIterable<T> {
  const s = source as { [Symbol.asyncIterator]?: unknown } | null | undefined
  if (s === null || s === undefined || typeof s[Symbol.asyncIterator] !== 'function') {
    throw new InvalidArgumentError(
      `${where}: the source must be an AsyncIterable, got ${s === null || s === undefined ? String(s) : typeof s}`,
    )
  }
  return source
}

/** Split `(handler?, options?)` / `(options?)` arguments. */
export function handlerAndOptions<H extends (...args: never[]) => unknown, O extends object>(
  where: string,
  first: H | O | undefined,
  second: O | undefined,
): [H | undefined, Partial<O>] {
  if (typeof first === 'function') return [first, optionsObject(where, second)]
  if (first !== undefined && second !== undefined)
    throw new InvalidArgumentError(
      `${where}: the first argument must be a handler function when options follow, got ${describe(first)}`,
    )
  return [undefined, optionsObject(where, first ?? second)]
}

/** `undefined` (→ `fallback`) or a boolean. */
export function booleanOption(where: string, name: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback
  if (typeof value !== 'boolean')
    throw new InvalidArgumentError(`${where}: ${name} must be a boolean, got ${describe(value)}`)
  return value
}
