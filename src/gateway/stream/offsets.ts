import { HttpStatusError } from '../transport/http.js'

/**
 * Offset tokens: `%016d_%016d`, the stream's incarnation (the `createdAt` of the topic that holds
 * the data, ms since the epoch) and the twainmq offset of the next message to read. Fixed width, so
 * string order is numeric order; a stream deleted and re-created has a new incarnation, so the old
 * one's tokens are refused. The all-zero token means "the start of the stream" (the conformance
 * suite hard-codes it), as does `-1`.
 */
export const START_TOKEN = '0000000000000000_0000000000000000'

const TOKEN_RE = /^(\d{16})_(\d{16})$/

/** Whether `raw` is a `Stream-Next-Offset` token (not `-1` or `now`). */
export const isOffsetToken = (raw: unknown): raw is string => typeof raw === 'string' && TOKEN_RE.test(raw)

export function formatToken(incarnation: number, offset: number): string {
  return `${String(incarnation).padStart(16, '0')}_${String(offset).padStart(16, '0')}`
}

export type ParsedOffset = { at: 'start' } | { at: 'now' } | { at: 'token'; incarnation: number; offset: number }

/** Parse an offset as a client sent it (query or header); 400 for anything else. Never trims. */
export function parseOffset(raw: string, what = 'offset'): ParsedOffset {
  if (raw === '-1' || raw === START_TOKEN) return { at: 'start' }
  if (raw === 'now') return { at: 'now' }
  const m = TOKEN_RE.exec(raw)
  if (!m)
    throw new HttpStatusError(
      400,
      `Malformed ${what} ${JSON.stringify(raw)}: use -1, now or a Stream-Next-Offset value`,
    )
  return { at: 'token', incarnation: Number(m[1]), offset: Number(m[2]) }
}
