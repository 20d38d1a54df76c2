// Idempotent appends on a real 3-master Redis Cluster: append-ids-7.lua names seven keys of a
// partition, all in its slot on the master serving it (the id hash and sorted set included, from
// the topic's creation); ids are stored once per partition across instances; deleteTopic leaves
// none of them on any master.
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ID_HEADER } from '../../../src/backends/record.js'
import { keySlot } from '../../../src/backends/redis/key-slot.js'
import { RedisBackend } from '../../../src/backends/redis/redis-backend.js'
import { records, topicMeta } from '../../contract/fixture.js'
import { RedisCluster } from '../../helpers/redis-cluster.js'
import type { RedisServer } from '../../helpers/redis-server.js'

let cluster: RedisCluster
let masters: RedisServer[]
beforeAll(async () => {
  cluster = await RedisCluster.start()
  masters = await cluster.masters()
}, 60_000)
afterAll(async () => {
  await cluster?.destroy()
})

/** Every key under `prefix` on every master, with the master it is on. */
const keysOnMasters = (prefix: string): Promise<Array<{ key: string; node: RedisServer }>> =>
  cluster.keysOn(masters, prefix)

describe('idempotent appends on a 3-master cluster', () => {
  it('store each id once per partition across instances, in the partition slot; deleteTopic removes the id keys', async () => {
    const prefix = `i${randomBytes(4).toString('hex')}:`
    const open = () =>
      RedisBackend.connect(
        { url: cluster.url, cluster: true },
        { prefix, clientId: `c${randomBytes(3).toString('hex')}` },
      )
    const [a, b] = await Promise.all([open(), open()])
    try {
      const meta = topicMeta('t', { partitions: 6 })
      await a.createTopic(meta)
      const withIds = (ids: string[]) =>
        records(
          meta,
          ids.map((id) => ({ value: `v-${id}`, headers: { [ID_HEADER]: id } })),
        )
      for (let p = 0; p < 6; p++) {
        expect(await a.appendIdempotent('t', p, withIds(['x', 'y', 'x']), 'a', 60_000)).toEqual([
          { offset: 0, duplicate: false },
          { offset: 1, duplicate: false },
          { offset: 0, duplicate: true },
        ])
        expect(await b.appendIdempotent('t', p, withIds(['y', 'z']), 'b', 60_000)).toEqual([
          { offset: 1, duplicate: true },
          { offset: 2, duplicate: false },
        ])
      }
      const keys = await keysOnMasters(prefix)
      for (let p = 0; p < 6; p++) {
        const stream = a.keys.stream('t', p)
        const own = keys.filter(({ key }) => key === stream || key.startsWith(`${stream}:`))
        expect(own.map(({ key }) => key.slice(stream.length)).sort()).toEqual(
          ['', ':end', ':ids', ':ids0', ':producers', ':resv', ':start'].sort(),
        )
        const master = await cluster.masterOf(keySlot(stream))
        for (const { key, node } of own) {
          expect(keySlot(key), key).toBe(keySlot(stream))
          expect(node.port, key).toBe(master.port)
        }
      }
      await a.deleteTopic('t')
      expect((await keysOnMasters(prefix)).map(({ key }) => key).filter((k) => k.includes(':ids'))).toEqual([])
    } finally {
      await Promise.all([a.close(), b.close()])
    }
  }, 60_000)
})
