import { InvalidKeyError } from '../../../core/errors.js'
import type { Key } from '../../../core/types.js'

/**
 * The changelog key of a message's mark: written with a message whose writes are all deletes, so
 * the changelog still names the message once compaction has removed its tombstones (string keys
 * a store writes never start with NUL then `L`: `encodeStateKey`).
 */
export const LAST_MARK = '\0L'

/**
 * How a state store's keys are written as its changelog's keys (string keys): a string as it is,
 * unless it starts with NUL; a number as `\0n<number>`, a bigint as `\0b<digits>`, a string that
 * starts with NUL as `\0s<string>`. So `1`, `1n` and `'1'` are three keys, and a changelog of
 * string keys reads as its keys.
 */
export function encodeStateKey(key: Key): string {
  if (typeof key === 'string') return key.charCodeAt(0) === 0 ? `\0s${key}` : key
  if (typeof key === 'number') {
    if (!Number.isFinite(key)) throw new InvalidKeyError(`State key ${String(key)} is not a finite number`, { key })
    return `\0n${key}`
  }
  if (typeof key === 'bigint') return `\0b${key}`
  throw new InvalidKeyError(`State key ${describe(key)} is not a string, number or bigint`, { key })
}

/** The key `encodeStateKey` wrote. */
export function decodeStateKey(s: string): Key {
  if (s.charCodeAt(0) !== 0) return s
  const tag = s[1]
  const rest = s.slice(2)
  if (tag === 'n') return Number(rest)
  if (tag === 'b') return BigInt(rest)
  return rest
}

function describe(v: unknown): string {
  try {
    return `${typeof v} ${JSON.stringify(v) ?? String(v)}`
  } catch {
    return typeof v
  }
}
