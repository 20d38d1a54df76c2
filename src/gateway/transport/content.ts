import type { Message } from '../../core/types.js'

/** The media type of a content type: before `;`, trimmed, lower case. */
export const mediaType = (contentType: string): string => (contentType.split(';')[0] ?? '').trim().toLowerCase()

export const isJson = (contentType: string): boolean => mediaType(contentType) === 'application/json'
/** Streams sent as UTF-8 text over SSE (`text/*` and JSON); the rest is base64. */
export const isTextual = (contentType: string): boolean =>
  isJson(contentType) || mediaType(contentType).startsWith('text/')

/** A value as JSON text (JSON mode): bytes as a base64 string. */
export function jsonText(value: unknown): string {
  if (Buffer.isBuffer(value)) return JSON.stringify(value.toString('base64'))
  return JSON.stringify(value) ?? 'null'
}

/** A message's value as bytes (byte and text modes): strings as UTF-8, JSON values as their text. */
export function valueBytes(m: Message): Buffer {
  if (Buffer.isBuffer(m.value)) return m.value
  if (typeof m.value === 'string') return Buffer.from(m.value, 'utf8')
  return Buffer.from(JSON.stringify(m.value) ?? 'null', 'utf8')
}
