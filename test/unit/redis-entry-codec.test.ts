// The Redis entry codec (src/backends/redis/entry-codec.ts): entry IDs, an entry's fields in
// twainmq's order and in any other, and the flat lists of the shared-group scripts.
import { describe, expect, it } from 'vitest'
import {
  eachScripted,
  entryFields,
  idOf,
  isOffsetId,
  offsetOf,
  offsetsOf,
  type EntryFields,
} from '../../src/backends/redis/entry-codec.js'

const b = (s: string) => Buffer.from(s)
const fresh = (): EntryFields => ({ record: undefined, producer: undefined })

describe('Redis entry codec', () => {
  it('reads offsets from entry IDs, as Buffers and strings, and writes them back', () => {
    expect(offsetOf(b('1234-1'))).toBe(1234)
    expect(offsetOf('77-1')).toBe(77)
    expect(idOf(1234)).toBe('1234-1')
    expect(offsetsOf([b('3-1'), b('10-1')])).toEqual([3, 10])
    expect(offsetsOf(null)).toEqual([])
    expect(isOffsetId(b('5-1'))).toBe(true)
    expect(isOffsetId(b('1700000000000-0'))).toBe(false)
  })

  it('finds r and p in the order the append script writes them and in any other', () => {
    const f = fresh()
    expect(entryFields([b('r'), b('REC'), b('p'), b('prod')], f)).toEqual({ record: b('REC'), producer: b('prod') })
    expect(entryFields([b('x'), b('1'), b('p'), b('P2'), b('r'), b('R2')], f)).toEqual({
      record: b('R2'),
      producer: b('P2'),
    })
    // A reused result is cleared: an entry without the fields is not twainmq's.
    expect(entryFields([b('rr'), b('1'), b('q'), b('2')], f)).toEqual({ record: undefined, producer: undefined })
  })

  it('walks the shared-group scripts’ {id, count, record, producer} lists', () => {
    const seen: Array<[number, number, string, string]> = []
    eachScripted([b('4-1'), 2, b('R'), b('P'), b('9-1'), '1', b(''), b('')], (id, count, record, producer) =>
      seen.push([offsetOf(id), count, record.toString(), producer.toString()]),
    )
    expect(seen).toEqual([
      [4, 2, 'R', 'P'],
      [9, 1, '', ''],
    ])
  })
})
