import type { Key, Message } from '../index.js'

/** How `tail` and `history` print messages. */
export type Format = 'json' | 'text'

/** A value as JSON: bytes become `{ "base64": "…" }`, bigints decimal strings. */
function jsonValue(value: unknown): unknown {
  if (value instanceof Uint8Array)
    return { base64: Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64') }
  return value
}

function replacer(_key: string, v: unknown): unknown {
  return typeof v === 'bigint' ? v.toString() : v
}

/** One JSON object (one line) per message: topic, partition, offset, key, timestamp, type, headers, value. */
export function toJsonLine(m: Message): string {
  return JSON.stringify(
    {
      topic: m.topic,
      partition: m.partition,
      offset: m.offset,
      key: typeof m.key === 'bigint' ? m.key.toString() : m.key,
      timestamp: m.timestamp,
      type: m.type ?? null,
      headers: m.headers,
      value: jsonValue(m.value),
    },
    replacer,
  )
}

// Control characters (including newlines) would break the one-line-per-message layout.
const CONTROL = /[\u0000-\u001f\u007f]/

function textKey(key: Key): string {
  return typeof key === 'string' ? JSON.stringify(key) : key.toString()
}

function textValue(value: unknown): string {
  if (typeof value === 'string') return CONTROL.test(value) ? JSON.stringify(value) : value
  if (value instanceof Uint8Array)
    return `<${value.byteLength} bytes base64:${Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64')}>`
  return JSON.stringify(value, replacer) ?? String(value)
}

/**
 * A readable line: `orders/0@12 key=42 hello`, with `type=…` and `headers={…}` when present.
 * String keys are quoted; string values are printed as they are (JSON-quoted if they hold control
 * characters); JSON values as compact JSON; bytes as `<n bytes base64:…>`.
 */
export function toTextLine(m: Message): string {
  let s = `${m.topic}/${m.partition}@${m.offset} key=${textKey(m.key)}`
  if (m.type !== undefined) s += ` type=${m.type}`
  if (Object.keys(m.headers).length > 0) s += ` headers=${JSON.stringify(m.headers)}`
  return `${s} ${textValue(m.value)}`
}

/** The line printer for a format. */
export function formatter(format: Format): (m: Message) => string {
  return format === 'json' ? toJsonLine : toTextLine
}
