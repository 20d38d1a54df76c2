import type { Command } from 'commander'
import {
  InvalidKeyError,
  open,
  parseTarget,
  TwainError,
  type Key,
  type KeyType,
  type Target,
  type Twain,
} from '../index.js'
import { keyCodec } from '../core/keys.js'

/** Options every command accepts (before or after the command name). */
export interface GlobalOptions {
  url?: string
  prefix?: string
}

/** A runtime error already printed on stderr (by an 'error' listener): exit code 1, not printed again. */
export class ReportedError extends Error {
  constructor(readonly reported: unknown) {
    super(reported instanceof Error ? reported.message : String(reported))
  }
}

/** A mistake in how the CLI was called: printed as `ERR_USAGE: …`, exit code 2. */
export class UsageError extends Error {
  readonly code = 'ERR_USAGE'
}

/**
 * The store named by `--url` (or `$TWAINMQ_URL`; an empty variable counts as unset), checked: a
 * malformed target is a usage error. `undefined` means the default, `./.twainmq`.
 */
export function storeUrl(cmd: Command): { url: string | undefined; target: Target } {
  const root = cmd.optsWithGlobals<GlobalOptions>()
  let url = root.url
  let program: Command = cmd
  while (program.parent) program = program.parent
  if (url === '' && program.getOptionValueSource('url') === 'env') url = undefined
  try {
    return { url, target: parseTarget(url) }
  } catch (e) {
    if (e instanceof TwainError) throw new UsageError(`--url: ${e.message}`)
    throw e
  }
}

/**
 * Open the store named by `--url` (or `$TWAINMQ_URL`, else `./.twainmq`), run `fn`, and always close
 * the store before returning, so the process can exit by itself. An error from `fn` wins over one
 * from `close()`.
 */
export async function withTwain<T>(cmd: Command, fn: (twain: Twain) => Promise<T>): Promise<T> {
  const { prefix } = cmd.optsWithGlobals<GlobalOptions>()
  const twain = await open(storeUrl(cmd).url, prefix === undefined ? {} : { prefix })
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

const INT_TYPES = new Set<string>(['u8', 'u16', 'u32'])

/**
 * Turn a `--key` string into a key of the topic's key type: a number for u8/u16/u32, a bigint for
 * u64, the string itself for char/string types. Without `--key`: 0 (0n) or "". Not an integer for
 * an integer key type: a usage error; out of the key type's range: `InvalidKeyError` (exit 1, as it
 * depends on the topic).
 */
export function parseKey(keyType: KeyType, raw: string | undefined): Key {
  let key: Key
  if (keyType === 'u64' || INT_TYPES.has(keyType)) {
    if (raw === undefined) return keyType === 'u64' ? 0n : 0
    // Valid or not depending on the topic's key type: a runtime error (exit 1), as an out-of-range key is.
    if (!/^[0-9]+$/.test(raw))
      throw new InvalidKeyError(
        `--key ${JSON.stringify(raw)} is not valid for key type ${keyType}: use a non-negative integer`,
        { key: raw },
      )
    key = keyType === 'u64' ? BigInt(raw) : Number(raw)
  } else key = raw ?? ''
  try {
    keyCodec(keyType).recordKey(key)
  } catch (e) {
    // Said in the user's words: the library shows a u64 key as a bigint (`…n`), which was not typed.
    if (e instanceof InvalidKeyError && typeof key === 'bigint')
      throw new InvalidKeyError(
        `--key ${raw ?? ''} is out of range for key type u64: use an integer 0..18446744073709551615`,
        { key: raw },
      )
    throw e
  }
  return key
}
