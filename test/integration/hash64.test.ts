import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { open, type KeyType, type Twain } from '../../src/index.js'
import { collect, makeTmp, rmTmp } from '../unit/helpers.js'
import { GOLDEN, PARTITIONS, U64_MAX } from '../helpers/key-cases.js'

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
