import { InvalidArgumentError } from '../../core/errors.js'

/**
 * A stream-name pattern of a gateway grant: `*` matches any run of characters (also none), `?`
 * one character; every other character matches itself. `orders` matches only `orders`, `orders.*`
 * every stream whose name starts with `orders.`, `*` every stream.
 */
export type NamePattern = string

/** A pattern compiled to a test. Throws `InvalidArgumentError` for an empty or non-string pattern. */
export function compilePattern(pattern: unknown, where: string): (name: string) => boolean {
  if (typeof pattern !== 'string' || pattern === '')
    throw new InvalidArgumentError(
      `${where}: a stream-name pattern must be a non-empty string, got ${JSON.stringify(pattern)}`,
    )
  if (pattern === '*') return () => true
  if (!/[*?]/.test(pattern)) return (name) => name === pattern
  const source = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.')
  const re = new RegExp(`^${source}$`, 's')
  return (name) => re.test(name)
}
