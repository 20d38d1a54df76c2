// A write that must reach replicas (`replicaAcks`: a group commit, a shared group's delivery or
// acknowledgement, a topic's listing) goes in one pipeline with its WAIT. After a failover the
// client's slot map has not caught up with yet, the old master (a replica now) answers the write
// with MOVED; ioredis does not redirect a pipeline whose other command (the WAIT) got another
// answer, so the MOVED reached the caller: in the Cluster processor storm, "Commit of member … in
// group "enrich" failed: MOVED …" errors. writeAndWait now asks for the slot map and sends again.
import { Cluster } from 'ioredis'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { writeAndWait } from '../../../src/backends/redis/replica-acks.js'
import { RedisCluster } from '../../helpers/redis-cluster.js'

let cluster: RedisCluster
let client: Cluster

beforeAll(async () => {
  cluster = await RedisCluster.start({ aof: false })
  // No periodic refresh of the slot map: it stays as it was before the failover.
  client = new Cluster(
    cluster.nodes.map((n) => ({ host: '127.0.0.1', port: n.port })),
    { slotsRefreshInterval: 0 },
  )
}, 60_000)
afterAll(async () => {
  client?.disconnect()
  await cluster?.destroy()
})

it('a write and WAIT sent to a master that was failed over follows the slot to the new master', async () => {
  const key = '{moved}:k'
  expect(await client.set(key, 'before')).toBe('OK')
  const master = await cluster.masterOf(await cluster.slotOf(key))
  const [replica] = await cluster.replicasOf(master)
  await cluster.failover(replica!)
  const reply = await writeAndWait(client, { replicas: 1, timeoutMs: 5000 }, (p) => p.set(key, 'after'), 'a test write')
  expect(reply).toBe('OK')
  expect(await cluster.admin(replica!).get(key)).toBe('after')
}, 60_000)
