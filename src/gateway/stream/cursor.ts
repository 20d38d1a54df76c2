/** Long-poll/SSE cursors (Durable Streams §10.1): 20 s intervals since 2024-10-09T00:00:00Z. */
const EPOCH = Date.UTC(2024, 9, 9)
const INTERVAL_MS = 20_000

/** The cursor to send: the current interval, or one strictly past the client's when it is not behind. */
export function responseCursor(clientCursor: string | undefined, now = Date.now()): string {
  const current = Math.floor((now - EPOCH) / INTERVAL_MS)
  const client = clientCursor !== undefined && /^\d{1,15}$/.test(clientCursor) ? Number(clientCursor) : -1
  if (client < current) return String(current)
  const jitterSeconds = 1 + Math.floor(Math.random() * 3600)
  return String(client + Math.max(1, Math.floor((jitterSeconds * 1000) / INTERVAL_MS)))
}
