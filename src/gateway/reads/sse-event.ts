/** One SSE event: `event: <name>` then every line of the payload as `data:<line>` (split on CR, LF, CRLF). */
export function sseEvent(name: string, payload: string): string {
  return `event: ${name}\n${payload
    .split(/\r\n|\r|\n/)
    .map((l) => `data:${l}`)
    .join('\n')}\n\n`
}
