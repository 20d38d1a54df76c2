// Redis key layout with and without placement (docs/format.md, "Redis layout"), and the placement
// of a topic over a Cluster slot map (placement.ts), without a server: an ioredis Cluster whose
// slot map is set by hand (3 masters, 16384 slots in three ranges).
import { Cluster } from 'ioredis'
import { describe, expect, it } from 'vitest'
import { keySlot } from '../../src/backends/redis/key-slot.js'
import { RedisKeys } from '../../src/backends/redis/keys.js'
import { placeTopic } from '../../src/backends/redis/placement.js'

function fakeCluster(masters: string[]): Cluster {
  const c = new Cluster([{ host: '127.0.0.1', port: 1 }], { lazyConnect: true })
  const per = Math.ceil(16384 / masters.length)
  c.slots = Array.from({ length: 16384 }, (_, s) => [masters[Math.floor(s / per)] as string])
  return c
}

describe('RedisKeys with placement', () => {
  it('keeps {<topic>:<p>} without tags and uses {<tag>}:<p> with them, every key of a partition in one slot', () => {
    const keys = new RedisKeys('P:')
    expect(keys.stream('t', 3)).toBe('P:{t:3}')
    keys.place('t', ['t:s0', 't:s1', 't:s0', 't:s2'])
    expect(keys.stream('t', 2)).toBe('P:{t:s0}:2')
    expect(keys.end('t', 2)).toBe('P:{t:s0}:2:end')
    expect(keys.partitionGroup('t', 2, 'g')).toBe('P:{t:s0}:2:g:g')
    for (const k of [...keys.partitionKeys('t', 3), keys.partitionGroup('t', 3, 'g')])
      expect(keySlot(k)).toBe(keySlot('{t:s2}'))
    keys.place('t', undefined)
    expect(keys.stream('t', 2)).toBe('P:{t:2}')
  })
})

describe('placeTopic', () => {
  it('is undefined on one Redis (the layout stays {<topic>:<p>})', () => {
    expect(placeTopic(new Cluster([], { lazyConnect: true }), 't', 3)).toBeUndefined()
  })

  it('spreads partitions over the masters (max - min <= 1), one tag per master, each on its master', () => {
    const masters = ['a:1', 'b:2', 'c:3']
    const c = fakeCluster(masters)
    for (const [topic, n] of [
      ['t', 12],
      ['orders', 7],
      ['x', 1],
      ['wide', 96],
    ] as const) {
      const tags = placeTopic(c, topic, n) as string[]
      expect(tags).toHaveLength(n)
      const per = new Map<string, number>()
      for (const tag of tags) {
        const owner = c.slots[keySlot(`{${tag}}`)]?.[0] as string
        per.set(owner, (per.get(owner) ?? 0) + 1)
      }
      const counts = masters.map((m) => per.get(m) ?? 0)
      expect(Math.max(...counts) - Math.min(...counts), counts.join('/')).toBeLessThanOrEqual(1)
      expect(new Set(tags).size).toBe(Math.min(n, 3))
    }
    c.disconnect()
  })
})
