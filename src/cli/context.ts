import { InvalidArgumentError as CommanderArgError, type Command } from 'commander'
import { open, type Key, type KeyType, type Twain } from '../index.js'

/** Options every command accepts (before or after the command name). */
export interface GlobalOptions {
  url?: string
  prefix?: string
}

/** A mistake in how the CLI was called: printed as `ERR_USAGE: …`, exit code 2. */
export class UsageError extends Error {
  readonly code = 'ERR_USAGE'
}

/**
 * Open the store named by `--url` (or `$TWAINMQ_URL`, else `./.twainmq`), run `fn`, and always close
 * the store before returning, so the process can exit by itself. An error from `fn` wins over one
 * from `close()`.
 */
export async function withTwain<T>(cmd: Command, fn: (twain: Twain) => Promise<T>): Promise<T> {
  const g = cmd.optsWithGlobals<GlobalOptions>()
  const twain = await open(g.url, g.prefix === undefined ? {} : { prefix: g.prefix })
  let result: T
  try {
    result = await fn(twain)
  } catch (e) {
    await twain.close().catch(() => undefined)
    throw e
  }
  await twain.close()
  return result
}

/** A commander argument parser for an integer in `min..max` (a bad value is a usage error, exit 2). */
export function intOption(min: number, max = Number.MAX_SAFE_INTEGER): (value: string) => number {
  return (value) => {
    const n = /^[0-9]+$/.test(value.trim()) ? Number(value.trim()) : Number.NaN
    if (!Number.isSafeInteger(n) || n < min || n > max) {
      const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `${min}..${max}`
      throw new CommanderArgError(`expected an integer ${range}`)
    }
    return n
  }
}

/** Parse a `--format` value. */
export function formatOption(value: string): 'json' | 'text' {
  if (value !== 'json' && value !== 'text') throw new CommanderArgError("expected 'json' or 'text'")
  return value
}

const INT_TYPES = new Set<string>(['u8', 'u16', 'u32'])

/**
 * Turn a `--key` string into a key of the topic's key type: a number for u8/u16/u32, a bigint for
 * u64, the string itself for char/string types. Without `--key`: 0 (0n) or "".
 * Range checks are left to the library (`ERR_INVALID_KEY`).
 */
export function parseKey(keyType: KeyType, raw: string | undefined): Key {
  if (keyType === 'u64' || INT_TYPES.has(keyType)) {
    if (raw === undefined) return keyType === 'u64' ? 0n : 0
    if (!/^[0-9]+$/.test(raw)) throw new UsageError(`--key ${JSON.stringify(raw)} is not valid for key type ${keyType}: use a non-negative integer`)
    return keyType === 'u64' ? BigInt(raw) : Number(raw)
  }
  return raw ?? ''
}
