import { describe, expect, it } from 'vitest'
import { type KeyType } from '../../../src/index.js'
import { collect } from '../../unit/helpers.js'
import { GOLDEN, PARTITIONS, U64_MAX } from '../../helpers/key-cases.js'
import { useFileStore } from '../../helpers/file-store.js'

describe('default partitioner of a producer', () => {
  const store = useFileStore()

  it('puts each golden key in its golden partition (u16 and string topics)', async () => {
    for (const [i, p] of PARTITIONS.entries()) {
      const numeric = `num-${p}`
      const text = `str-${p}`
      await store.twain.createTopic(numeric, { partitions: p, keyType: 'u16' })
      await store.twain.createTopic(text, { partitions: p, keyType: 'string' })
      const np = store.twain.producer(numeric)
      for (const [key, expected] of GOLDEN) {
        if (typeof key === 'number') expect((await np.send(key, 'v')).partition).toBe(expected[i])
        else expect((await store.twain.producer(text).send(key, 'v')).partition).toBe(expected[i])
      }
    }
  })

  it('hashes charN keys unpadded, like string keys', async () => {
    await store.twain.createTopic('c16', { partitions: 16, keyType: 'char16' as KeyType })
    expect((await store.twain.producer('c16').send('user-1', 'v')).partition).toBe(15)
  })

  it('puts u64 key 2^64-1 in partition 2 of 3 and reads it back in that partition', async () => {
    await store.twain.createTopic('u64', { partitions: 3, keyType: 'u64' })
    const r = await store.twain.producer('u64').send(U64_MAX, 'max')
    expect(r).toEqual({ partition: 2, offset: 0 })
    const got = await collect(store.twain.history('u64', { partition: 2 }))
    expect(got.map((m) => [m.key, m.value])).toEqual([[U64_MAX, 'max']])
  })

  it('uses a custom partitioner when given, and an explicit partition over both', async () => {
    await store.twain.createTopic('custom', { partitions: 4 })
    const p = store.twain.producer('custom', { partitioner: () => 3 })
    expect((await p.send(1, 'a')).partition).toBe(3)
    expect((await p.send(1, 'b', { partition: 0 })).partition).toBe(0)
  })
})
