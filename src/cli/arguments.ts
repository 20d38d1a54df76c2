/**
 * Commander parsers for argument and option values. A value that is wrong by itself (whatever the
 * store holds) is a usage error: exit 2, `ERR_USAGE: option '…' argument '…' is invalid. <why>`.
 */
import { InvalidArgumentError as CommanderArgError } from 'commander'
import { resolveConsumerOptions } from '../consumer/options.js'
import { TwainError, type KeyType } from '../index.js'
import { keyCodec } from '../core/keys.js'
import { TypeRegistry } from '../core/message-types.js'
import { checkGroupName, checkTopicName } from '../core/names.js'

/** A parser from a library check: the `TwainError` it throws (with the bad value) becomes a usage error. */
export function checked<T>(check: (value: string) => T): (value: string) => T {
  return (value) => {
    try {
      return check(value)
    } catch (e) {
      if (e instanceof TwainError) throw new CommanderArgError(e.message)
      throw e
    }
  }
}

/** A commander argument parser for an integer in `min..max`. */
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

/** A topic name (`ERR_INVALID_TOPIC_NAME`'s rules). */
export const topicArg = checked((v) => checkTopicName(v))
/** A consumer group name. */
export const groupArg = checked(checkGroupName)
/** A key type: u8, u16, u32, u64, charN or string. */
export const keyTypeOption = checked((v): KeyType => keyCodec(v).type)
/** A consumer member name (the consumer's `name` option). */
export const memberNameOption = checked((v) => resolveConsumerOptions({ group: 'g', name: v }).name as string)

/** A message type name (as `registerType` takes it). */
export const typeNameOption = checked((v) => {
  new TypeRegistry().register(v)
  return v
})

/** A comma-separated list of message type names, none empty, none twice. */
export function typeListOption(value: string): string[] {
  const names = value.split(',').map((n) => n.trim())
  if (names.some((n) => n === ''))
    throw new CommanderArgError('expected type names separated by commas, with none empty')
  const twice = names.find((n, i) => names.indexOf(n) !== i)
  if (twice !== undefined) throw new CommanderArgError(`type ${JSON.stringify(twice)} is given twice`)
  return names.map(typeNameOption)
}

/**
 * `<partition>=<offset>[,<partition>=<offset>…]` (`:` may stand for `=`), as `groups reset --to` and
 * `trim --before` take it; `expected` starts the error text.
 */
export function offsetsOption(value: string, expected = 'expected'): Record<number, number> {
  const to: Record<number, number> = {}
  for (const item of value.trim().split(',')) {
    const m = /^\s*([0-9]+)\s*[=:]\s*([0-9]+)\s*$/.exec(item)
    const p = m ? Number(m[1]) : Number.NaN
    const o = m ? Number(m[2]) : Number.NaN
    if (!Number.isSafeInteger(p) || !Number.isSafeInteger(o)) {
      throw new CommanderArgError(
        `${expected} <partition>=<offset>[,<partition>=<offset>...] with non-negative integers, got ${JSON.stringify(item)}`,
      )
    }
    if (p in to) throw new CommanderArgError(`partition ${p} is given twice`)
    to[p] = o
  }
  return to
}
