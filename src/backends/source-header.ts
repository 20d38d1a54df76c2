import type { OutputSource, SourcePosition } from './backend.js'
import type { AddedHeaders } from './record-codec.js'

/**
 * The header a processor's output carries (`TopicStore.appendSourced`): where it came from, as
 * `<group> <topic>@<incarnation> <partition> <offset> <seq> <epoch> <committed>` (names have no
 * spaces; the incarnation is the input topic's creation ms). The file backend rebuilds its source
 * tables from it; readers see it as any header.
 */
export const SOURCE_HEADER = 'x-twain-source'

/** The `SOURCE_HEADER` value of an output of `source` at `position`. */
export function sourceHeader(source: OutputSource, position: SourcePosition): string {
  const [head, tail] = headerParts(source)
  return `${head}${position.offset} ${position.seq}${tail}`
}

/** The parts of a `SOURCE_HEADER` value around the position, the same for every output of a call. */
function headerParts(source: OutputSource): [string, string] {
  return [`${sourceKey(source)} `, ` ${source.epoch} ${source.committed}`]
}

/** A `SOURCE_HEADER` value read back (undefined when it is not one). */
export function parseSourceHeader(
  value: string,
): { key: string; offset: number; seq: number; epoch: number; committed: number } | undefined {
  const f = value.split(' ')
  if (f.length !== 7) return undefined
  const [offset, seq, epoch, committed] = [Number(f[3]), Number(f[4]), Number(f[5]), Number(f[6])]
  if (![offset, seq, epoch, committed].every(Number.isSafeInteger)) return undefined
  return { key: `${f[0]} ${f[1]} ${f[2]}`, offset, seq, epoch, committed }
}

/** Write a non-negative safe integer in decimal ASCII at `pos` (room for 16 bytes); returns the position after it. */
function writeDecimal(buf: Buffer, pos: number, n: number): number {
  let digits = 1
  for (let x = n; x >= 10; x = Math.floor(x / 10)) digits++
  let x = n
  for (let i = pos + digits - 1; i >= pos; i--) {
    const q = Math.floor(x / 10)
    buf[i] = 48 + (x - q * 10)
    x = q
  }
  return pos + digits
}

/** Most decimal digits of a position's offset (a safe integer) and sequence number (below 2^32). */
const POSITION_DIGITS = 16 + 1 + 10

/**
 * The `SOURCE_HEADER` of outputs of one source at `positions`, one value each, written as bytes as
 * the stores encode the records (`AddedHeaders`): the parts common to the call are encoded once,
 * each position's numbers are written as digits, and no value is made into a string. The
 * caller's records are neither changed nor copied.
 */
export class SourceHeaders implements AddedHeaders {
  readonly name = SOURCE_HEADER
  private readonly most: number

  private constructor(
    private readonly head: Buffer,
    private readonly tail: Buffer,
    private readonly positions: readonly SourcePosition[],
  ) {
    this.most = 6 + SOURCE_HEADER.length + head.length + POSITION_DIGITS + tail.length
  }

  static of(source: OutputSource, positions: readonly SourcePosition[]): SourceHeaders {
    const [head, tail] = headerParts(source)
    return new SourceHeaders(Buffer.from(head, 'utf8'), Buffer.from(tail, 'utf8'), positions)
  }

  /** The headers of the records at `indexes` of this call (the ones written), in that order. */
  pick(indexes: readonly number[]): SourceHeaders {
    return new SourceHeaders(
      this.head,
      this.tail,
      indexes.map((i) => this.positions[i] as SourcePosition),
    )
  }

  bound(): number {
    return this.most
  }

  writeValue(buf: Buffer, pos: number, i: number): number {
    const p = this.positions[i] as SourcePosition
    buf.set(this.head, pos)
    let at = writeDecimal(buf, pos + this.head.length, p.offset)
    buf[at++] = 0x20
    at = writeDecimal(buf, at, p.seq)
    buf.set(this.tail, at)
    return at + this.tail.length
  }
}

/** The key of a source in a table: `<group> <topic>@<incarnation> <partition>`. */
export const sourceKey = (s: OutputSource): string => `${s.group} ${s.topic}@${s.incarnation} ${s.partition}`
