import { InvalidArgumentError } from './errors.js'
import { tooDeep } from './json-depth.js'
import { jsonProblem } from './json-value.js'

/**
 * How a value is stored. The kind is stored with the record so a round trip preserves it: a string
 * that looks like JSON stays a string, bytes stay bytes (never decoded as JSON because they look like it).
 */
export const enum ValueKind {
  Text = 0,
  Bytes = 1,
  Json = 2,
  /** JSON of a registered message type; the type name is stored with the record. */
  Typed = 3,
}

export interface EncodedValue {
  kind: ValueKind
  /** Bytes, or text to be stored as UTF-8. */
  bytes: Buffer | string
  /** Stored length in bytes; `-1` for text not measured yet (see `RecordInput.valueBytes`). */
  length: number
}

function toJson(value: unknown, what: string): string {
  // At the top level, JSON has no text at all for these (the check below would call them "dropped").
  if (value !== undefined && typeof value !== 'function' && typeof value !== 'symbol') {
    const problem = jsonProblem(value)
    if (problem?.tooDeep) throwDeep(value, what)
    if (problem) throw new InvalidArgumentError(`${what} is not JSON as it is: ${problem.path} ${problem.what}`)
  }
  let text: string | undefined
  try {
    text = JSON.stringify(value)
  } catch (cause) {
    throw new InvalidArgumentError(`${what} is not JSON-serialisable: ${(cause as Error).message}`, { cause })
  }
  if (text === undefined) {
    throw new InvalidArgumentError(
      `${what} of type ${typeof value} is not JSON-serialisable: send a string, bytes or JSON value`,
    )
  }
  return text
}

/**
 * A value the walk found deeper than `MAX_JSON_DEPTH`: a cycle (JSON.stringify says so, and that
 * is the reason given) or nesting past the limit.
 */
function throwDeep(value: unknown, what: string): never {
  try {
    JSON.stringify(value)
  } catch (cause) {
    if (!(cause instanceof RangeError))
      throw new InvalidArgumentError(`${what} is not JSON-serialisable: ${(cause as Error).message}`, { cause })
  }
  throw new InvalidArgumentError(tooDeep(what))
}

function text(kind: ValueKind, s: string): EncodedValue {
  return { kind, bytes: s, length: -1 } // measured when written (see RecordInput.valueBytes)
}

/** Encode a value; `typed` marks it as a registered message type (already validated by the caller). */
export function encodeValue(value: unknown, typed = false): EncodedValue {
  if (typed) return text(ValueKind.Typed, toJson(value, 'The typed value'))
  if (typeof value === 'string') return text(ValueKind.Text, value)
  if (value instanceof Uint8Array) {
    const bytes = Buffer.isBuffer(value) ? value : Buffer.from(value.buffer, value.byteOffset, value.byteLength)
    return { kind: ValueKind.Bytes, bytes, length: bytes.length }
  }
  if (value instanceof ArrayBuffer) {
    const bytes = Buffer.from(value)
    return { kind: ValueKind.Bytes, bytes, length: bytes.length }
  }
  if (ArrayBuffer.isView(value)) {
    throw new InvalidArgumentError(
      `A ${value.constructor.name} value is not supported: send a Uint8Array/Buffer of its bytes (or an ArrayBuffer)`,
    )
  }
  return text(ValueKind.Json, toJson(value, 'The value'))
}

/** Decode a stored value. Bytes are copied so a message never pins a whole read buffer. */
export function decodeValue(kind: number, buf: Buffer, start: number, end: number): unknown {
  switch (kind) {
    case ValueKind.Text:
      return buf.toString('utf8', start, end)
    case ValueKind.Bytes:
      return Buffer.from(buf.subarray(start, end))
    case ValueKind.Json:
    case ValueKind.Typed:
      return JSON.parse(buf.toString('utf8', start, end))
    default:
      throw new InvalidArgumentError(`Unknown stored value kind ${kind}`)
  }
}
