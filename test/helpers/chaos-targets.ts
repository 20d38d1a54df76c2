// The stores a fault test's children open: a directory, a private redis-server or a private Redis
// Cluster, with the open() options the children get, and a twain on it for the test. Each
// registers its own cleanup.
import { randomBytes } from 'node:crypto'
import { open, type Twain } from '../../src/index.js'
import { RedisCluster } from './redis-cluster.js'
import { RedisServer } from './redis-server.js'
import { tempDir } from './tmp.js'

/** Where the children open their store, with what options, and the test's twain on it. */
export interface ChaosTarget {
  target: string
  options: Record<string, unknown>
  twain: Twain
}

/** A new directory (removed by `cleanups`), polled every 50 ms by the children. */
export async function fileTarget(cleanups: Array<() => Promise<void> | void>, prefix: string): Promise<ChaosTarget> {
  const t = tempDir(prefix)
  cleanups.push(t.remove)
  const options = { pollMs: 50 }
  const twain = await open(t.dir, options)
  cleanups.push(() => twain.close())
  return { target: t.dir, options, twain }
}

/** A private redis-server (destroyed by `cleanups`), under a random key prefix. */
export async function redisTarget(cleanups: Array<() => Promise<void> | void>): Promise<ChaosTarget> {
  const server = await RedisServer.start()
  cleanups.push(() => server.destroy())
  const options = { prefix: `c${randomBytes(4).toString('hex')}:` }
  const twain = await open(server.url, options)
  cleanups.push(() => twain.close())
  return { target: server.url, options, twain }
}

/** A private Redis Cluster of 3 masters and 3 replicas (destroyed by `cleanups`), under a random key prefix. */
export async function clusterTarget(cleanups: Array<() => Promise<void> | void>): Promise<ChaosTarget> {
  const cluster = await RedisCluster.start({ nodeTimeoutMs: 1000 })
  cleanups.push(() => cluster.destroy())
  const options = { prefix: `c${randomBytes(4).toString('hex')}:` }
  const twain = await open(cluster.url, options)
  cleanups.push(() => twain.close())
  return { target: cluster.url, options, twain }
}
