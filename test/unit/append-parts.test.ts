import { describe, expect, it } from 'vitest'
import { encodeParts, PART_RECORDS } from '../../src/backends/redis/append-parts.js'
import { SOURCE_HEADER, SourceHeaders, sourceHeader } from '../../src/backends/source-header.js'
import type { RecordInput } from '../../src/backends/record.js'
import { keyCodec } from '../../src/core/keys.js'
import { encodeValue } from '../../src/core/values.js'

const str = keyCodec('string')

function rec(i: number, headers?: Record<string, string>): RecordInput {
  const key = str.encode(`k${i}`)
  const { kind, bytes, length } = encodeValue({ i, text: 'ü'.repeat(i % 7) })
  return {
    key,
    keyBytes: key.length,
    timestamp: 1_700_000_000_000 + i,
    kind,
    value: bytes,
    valueBytes: length,
    headers,
  }
}

describe('Redis append parts (src/backends/redis/append-parts.ts)', () => {
  it('an added header goes on every record of every part as it is encoded: the bytes of the records copied with it', () => {
    // More records than a part holds, some with headers of their own (one by the added header's name).
    const records = Array.from({ length: PART_RECORDS + 500 }, (_, i) =>
      rec(i, i % 3 === 0 ? { a: `${i}` } : i % 5 === 0 ? { [SOURCE_HEADER]: 'own', b: 'é' } : undefined),
    )
    const source = {
      group: 'group',
      topic: 'topic',
      incarnation: 1,
      partition: 0,
      epoch: 3,
      committed: 40,
      deadline: 0,
    }
    const positions = records.map((_, i) => ({ offset: 40 + (i >> 1), seq: i & 1 }))
    const values = positions.map((p) => sourceHeader(source, p))
    const added = encodeParts(records, SourceHeaders.of(source, positions))
    const copied = encodeParts(
      records.map((r, i) => {
        const { [SOURCE_HEADER]: _own, ...rest } = r.headers ?? {}
        return { ...r, headers: { ...rest, [SOURCE_HEADER]: values[i] as string } }
      }),
    )
    expect(added.counts).toEqual(copied.counts)
    expect(added.counts.length).toBe(2)
    added.parts.forEach((part, p) => expect(part.equals(copied.parts[p] as Buffer)).toBe(true))
  })
})
