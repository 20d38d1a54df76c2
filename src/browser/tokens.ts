// Offset tokens of the browser client. The protocol gives one offset per response or SSE batch
// (where the next read starts); a message inside a JSON batch of several has none of its own. Such a
// position is the composite token `<batch start>,<k>`: read from the batch start and skip k items.
// Servers refuse offsets with a comma (protocol §8), so no real offset looks like one.

/** A parsed position: read from `base`, then skip `skip` JSON items. */
export interface Position {
  base: string
  skip: number
}

/** What `from` may be: 'start' (the default), 'now', 'end' (the same as 'now') or a token. */
export function parsePosition(from: string | undefined): Position {
  if (from === undefined || from === 'start') return { base: '-1', skip: 0 }
  if (from === 'end') return { base: 'now', skip: 0 }
  const comma = from.indexOf(',')
  if (comma < 0) return { base: from, skip: 0 }
  const skip = Number(from.slice(comma + 1))
  if (!Number.isSafeInteger(skip) || skip < 0)
    throw new RangeError(`bad offset token "${from}": the part after "," must be a count`)
  return { base: from.slice(0, comma), skip }
}

/** The token of a position. */
export function formatPosition(p: Position): string {
  return p.skip === 0 ? p.base : `${p.base},${p.skip}`
}

const GATEWAY = /^(\d{16})_(\d{16})$/

/**
 * Tokens of the `count` items of one batch read from `start` whose next offset is `end`: item i
 * is at `tokens[i]` and resumes at `tokens[i + 1]`. Exact gateway offsets (`%016d_%016d`) when the
 * batch is provably `count` consecutive records ending at `end`: read from a token of the same
 * incarnation exactly `count` records before, or from the start ('-1') of a stream whose data
 * begins at record 0 (a Node topic) or 1 (after a gateway stream's configuration record).
 * Composite tokens otherwise (always right, only less pretty).
 */
export function batchTokens(start: Position, end: string, count: number): string[] {
  const tokens: string[] = []
  const a = GATEWAY.exec(start.base)
  const b = GATEWAY.exec(end)
  const last = b ? Number(b[2]) : NaN
  const first = last - count
  const exact =
    b !== null &&
    start.skip === 0 &&
    (a ? a[1] === b[1] && Number(a[2]) === first : start.base === '-1' && (first === 0 || first === 1))
  for (let i = 0; i < count; i++) {
    tokens.push(
      exact
        ? `${b[1]}_${String(first + i).padStart(16, '0')}`
        : formatPosition({ base: start.base, skip: start.skip + i }),
    )
  }
  tokens.push(end)
  return tokens
}

/** Order of two tokens (negative: a first): offsets compare as strings (protocol §8), then skips. */
export function compareTokens(a: string, b: string): number {
  const pa = parsePosition(a)
  const pb = parsePosition(b)
  if (pa.base !== pb.base) return pa.base < pb.base ? -1 : 1
  return pa.skip - pb.skip
}
