// hash64 of number keys, directly and through the partitioner's direct-mapped cache
// (src/core/hash64.ts): for every safe non-negative integer and partition count, whatever other
// keys took the cache's slot, it must give what the unbounded BigInt finaliser (TwainMQ's
// `partition_hash64`, written out again here) gives.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { cachedHash64, hash64 } from '../src/core/hash64.js'

function reference(key: number, partitions: number): number {
  let x = BigInt(key)
  x = (x ^ (x >> 30n)) * 0xbf58476d1ce4e5b9n
  x = (x ^ (x >> 27n)) * 0x94d049bb133111ebn
  x = x ^ (x >> 31n)
  return Number(x % BigInt(partitions))
}

const keys = fc.oneof(
  fc.maxSafeNat(),
  fc.integer({ min: 0, max: 0xffffffff }),
  fc.integer({ min: 0, max: 53 }).map((b) => Math.min(2 ** b, Number.MAX_SAFE_INTEGER)),
  fc.integer({ min: 1, max: 53 }).map((b) => 2 ** b - 1),
)
const partitions = fc.oneof(fc.integer({ min: 1, max: 64 }), fc.integer({ min: 1, max: 0x7fffffff }))

describe('hash64 of number keys', () => {
  it('equals the BigInt finaliser for every safe non-negative integer and partition count', () => {
    const cached = cachedHash64()
    fc.assert(
      fc.property(keys, partitions, (key, p) => {
        const want = reference(key, p)
        expect(hash64(key, p)).toBe(want)
        expect(cached(key, p)).toBe(want)
        expect(hash64(BigInt(key), p)).toBe(want)
        // The same slot taken by another key or partition count, then the key again (a cache hit).
        const other = key >= 4096 ? key - 4096 : key + 4096
        expect(cached(other, p)).toBe(reference(other, p))
        expect(cached(key, p + 1)).toBe(reference(key, p + 1))
        expect(cached(key, p)).toBe(want)
        expect(cached(key, p)).toBe(want)
      }),
      { numRuns: 5000 },
    )
  })
})
