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

/**
 * The `SOURCE_HEADER` of outputs of `source` at `positions`, one value each; the parts common to
 * the call are formatted once. The stores write it as they encode the records (`AddedHeaders`), so
 * the caller's records are neither changed nor copied.
 */
export function sourceHeaders(source: OutputSource, positions: readonly SourcePosition[]): AddedHeaders {
  const [head, tail] = headerParts(source)
  const values = new Array<string>(positions.length)
  for (let i = 0; i < positions.length; i++) {
    const p = positions[i] as SourcePosition
    values[i] = `${head}${p.offset} ${p.seq}${tail}`
  }
  return { name: SOURCE_HEADER, values }
}

/** The key of a source in a table: `<group> <topic>@<incarnation> <partition>`. */
export const sourceKey = (s: OutputSource): string => `${s.group} ${s.topic}@${s.incarnation} ${s.partition}`
