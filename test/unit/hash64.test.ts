import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { cachedHash64 } from '../../src/core/hash64.js'
import { hash64, open, type Key, type KeyType, type Twain } from '../../src/index.js'
import { collect, makeTmp, rmTmp } from './helpers.js'

const PARTITIONS = [2, 3, 4, 8, 16]
/** DESIGN §7 golden values: key → partition for 2, 3, 4, 8, 16 partitions. */
const GOLDEN: Array<[Key, number[]]> = [
  [1, [1, 1, 1, 5, 5]],
  [42, [0, 0, 2, 2, 2]],
  [1000, [1, 2, 3, 7, 7]],
  ['user-1', [1, 1, 3, 7, 15]],
]
const U64_MAX = (1n << 64n) - 1n

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
    for (let k = 0; k < 300; k++) for (const p of [1, 2, 7, 10000]) {
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

describe('default partitioner of a producer', () => {
  let dir: string
  let twain: Twain
  beforeEach(async () => {
    dir = makeTmp()
    twain = await open(dir)
  })
  afterEach(async () => {
    await twain.close()
    rmTmp(dir)
  })

  it('puts each golden key in its golden partition (u16 and string topics)', async () => {
    for (const [i, p] of PARTITIONS.entries()) {
      const numeric = `num-${p}`
      const text = `str-${p}`
      await twain.createTopic(numeric, { partitions: p, keyType: 'u16' })
      await twain.createTopic(text, { partitions: p, keyType: 'string' })
      const np = twain.producer(numeric)
      for (const [key, expected] of GOLDEN) {
        if (typeof key === 'number') expect((await np.send(key, 'v')).partition).toBe(expected[i])
        else expect((await twain.producer(text).send(key, 'v')).partition).toBe(expected[i])
      }
    }
  })

  it('hashes charN keys unpadded, like string keys', async () => {
    await twain.createTopic('c16', { partitions: 16, keyType: 'char16' as KeyType })
    expect((await twain.producer('c16').send('user-1', 'v')).partition).toBe(15)
  })

  it('puts u64 key 2^64-1 in partition 2 of 3 and reads it back in that partition', async () => {
    await twain.createTopic('u64', { partitions: 3, keyType: 'u64' })
    const r = await twain.producer('u64').send(U64_MAX, 'max')
    expect(r).toEqual({ partition: 2, offset: 0 })
    const got = await collect(twain.history('u64', { partition: 2 }))
    expect(got.map((m) => [m.key, m.value])).toEqual([[U64_MAX, 'max']])
  })

  it('uses a custom partitioner when given, and an explicit partition over both', async () => {
    await twain.createTopic('custom', { partitions: 4 })
    const p = twain.producer('custom', { partitioner: () => 3 })
    expect((await p.send(1, 'a')).partition).toBe(3)
    expect((await p.send(1, 'b', { partition: 0 })).partition).toBe(0)
  })
})
