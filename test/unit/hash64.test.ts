import { describe, expect, it } from 'vitest'
import { cachedHash64 } from '../../src/core/hash64.js'
import { hash64 } from '../../src/index.js'
import { GOLDEN, PARTITIONS, U64_MAX } from '../helpers/key-cases.js'

describe('hash64 (DESIGN §7 golden values)', () => {
  for (const [key, expected] of GOLDEN) {
    it(`maps key ${JSON.stringify(key)} to partitions ${expected.join(',')} for ${PARTITIONS.join(',')} partitions`, () => {
      expect(PARTITIONS.map((p) => hash64(key, p))).toEqual(expected)
    })
  }

  it('maps 2^64-1 with 3 partitions to 2', () => {
    expect(hash64(U64_MAX, 3)).toBe(2)
  })

  it('gives the same partition for a number key and the equal bigint key', () => {
    for (const [key] of GOLDEN.filter(([k]) => typeof k === 'number')) {
      for (const p of PARTITIONS) expect(hash64(BigInt(key as number), p)).toBe(hash64(key, p))
    }
  })

  it('always returns an integer in 0..partitions-1', () => {
    for (let k = 0; k < 300; k++)
      for (const p of [1, 2, 7, 10000]) {
        const h = hash64(k, p)
        expect(Number.isInteger(h) && h >= 0 && h < p).toBe(true)
      }
  })

  it('is reproduced by the cached partitioner the producer uses by default', () => {
    const cached = cachedHash64(4)
    for (let round = 0; round < 2; round++) {
      for (const [key, expected] of GOLDEN) expect(PARTITIONS.map((p) => cached(key, p))).toEqual(expected)
      expect(cached(U64_MAX, 3)).toBe(2)
    }
    // The cache must not confuse a number key with a string key of the same text.
    for (const p of PARTITIONS) {
      expect(cached('42', p)).toBe(hash64('42', p))
      expect(cached(42, p)).toBe(hash64(42, p))
    }
  })
})
