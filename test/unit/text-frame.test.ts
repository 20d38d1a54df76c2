import { describe, expect, it } from 'vitest'
import { encodeBatch } from '../../src/backends/file/batch-format.js'
import { NativeTextFrame } from '../../src/backends/file/text-frame.js'
import type { RecordInput } from '../../src/backends/record.js'
import { keyCodec } from '../../src/core/keys.js'
import { ValueKind } from '../../src/core/values.js'

const T0 = 1_700_000_000_123.5

/** The frame `encodeBatch` writes for these text records, all at `T0`. */
function reference(
  keys: Array<Buffer | number>,
  keyBytes: number[],
  values: string[],
  base: number,
  pid: string,
): Buffer {
  const records: RecordInput[] = values.map((value, i) => ({
    key: keys[i] as Buffer | number,
    keyBytes: keyBytes[i] as number,
    timestamp: T0,
    kind: ValueKind.Text,
    value,
    valueBytes: -1,
  }))
  return Buffer.from(encodeBatch(records, base, pid))
}

describe('NativeTextFrame', () => {
  it('builds the same bytes as encodeBatch for integer keys of each width and UTF-8 text', () => {
    for (const type of ['u8', 'u16', 'u32'] as const) {
      const codec = keyCodec(type)
      const keys = [0, 1, 200, 255].map((k) => codec.recordKey(k))
      const values = ['', 'a', 'héllo wörld', '日本語 🎉'.repeat(3)]
      const f = new NativeTextFrame('host-1-abcd')
      f.start(T0)
      keys.forEach((k, i) => f.add(k, codec.width, values[i] as string))
      expect(f.count).toBe(4)
      expect(Buffer.from(f.frame(42))).toEqual(
        reference(
          keys,
          keys.map(() => codec.width),
          values,
          42,
          'host-1-abcd',
        ),
      )
    }
  })

  it('builds the same bytes for string keys short and long, and grows past its first buffer', () => {
    const codec = keyCodec('string')
    const keys = Array.from(
      { length: 3000 },
      (_, i) => codec.recordKey(i % 2 ? `k${i}` : `a-key-longer-than-sixteen-bytes-${i}`) as Buffer,
    )
    const values = keys.map((_, i) => 'v'.repeat(i % 97) + 'é')
    const f = new NativeTextFrame('p')
    f.start(T0)
    keys.forEach((k, i) => f.add(k, k.length, values[i] as string))
    expect(f.bytes).toBeGreaterThan(64 * 1024)
    expect(Buffer.from(f.frame(7))).toEqual(
      reference(
        keys,
        keys.map((k) => k.length),
        values,
        7,
        'p',
      ),
    )
  })

  it('start empties it for reuse with a new timestamp', () => {
    const codec = keyCodec('u16')
    const f = new NativeTextFrame('p')
    f.start(1)
    f.add(codec.recordKey(5), 2, 'first')
    f.frame(0)
    f.start(T0)
    expect(f.count).toBe(0)
    f.add(codec.recordKey(6), 2, 'second')
    expect(Buffer.from(f.frame(1))).toEqual(reference([6], [2], ['second'], 1, 'p'))
  })
})
