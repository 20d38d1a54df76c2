/**
 * How deep a JSON value may nest: arrays and objects inside each other, up to this many levels
 * (`[[1]]` is 2). Deeper values are refused, by `send` with `InvalidArgumentError` and by the HTTP
 * gateway with 400, with {@link tooDeep}'s message: JavaScript's own `JSON.stringify` and
 * `JSON.parse` recurse, so somewhere past a few thousand levels they fail with a stack overflow
 * that says nothing about the value, and a consumer in a process with less stack to spare could
 * fail to read what a producer managed to write.
 */
export const MAX_JSON_DEPTH = 1000

/** The refusal of a value nested deeper than {@link MAX_JSON_DEPTH}, naming what it was (`'The value'`). */
export function tooDeep(what: string, depth?: number): string {
  const found = depth === undefined ? `more than ${MAX_JSON_DEPTH}` : `${depth}`
  return `${what} nests arrays and objects ${found} levels deep; twainmq stores JSON values up to ${MAX_JSON_DEPTH} levels: flatten it, or send it as a string`
}

/** How deep the arrays and objects of a JSON text nest (0 for a scalar), by one pass over its characters; no parse. */
export function jsonTextDepth(text: string): number {
  let depth = 0
  let max = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x22) {
      // A string: skip to its closing quote (a backslash escapes the next character).
      for (i++; i < text.length; i++) {
        const s = text.charCodeAt(i)
        if (s === 0x5c) i++
        else if (s === 0x22) break
      }
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) max = depth
    } else if (c === 0x5d || c === 0x7d) depth--
  }
  return max
}
