// Blocking connections of Redis tails (tail-lanes.ts) against a real redis-server that is killed:
// ioredis settles nothing queued on a connection that disconnect() finds between two reconnect
// attempts, so a lane command must settle when the lane is dropped, or its slot group waits for
// ever (a Cluster tail stalled after its master was killed, waiting on a CLIENT ID to the dead node).
import { Redis } from 'ioredis'
import { afterEach, expect, it } from 'vitest'
import { TailLanes } from '../../../src/backends/redis/tail-lanes.js'
import { RedisServer } from '../../helpers/redis-server.js'
import { until } from '../../helpers/wait.js'

let server: RedisServer | undefined
let base: Redis | undefined
afterEach(async () => {
  base?.disconnect()
  await server?.stop()
  server = base = undefined
})

it('a command on a lane whose server died settles when the lane is dropped', async () => {
  server = await RedisServer.start()
  base = new Redis({ port: server.port, host: '127.0.0.1', lazyConnect: true })
  base.on('error', () => undefined)
  await base.connect()
  const lanes = new TailLanes(base)
  const lane = lanes.acquire('single')
  await lanes.identify(lane)
  expect(lane.id).toBeGreaterThan(0)
  await server.kill()
  await until(() => lane.conn.status === 'reconnecting', 5000, 'the lane to reconnect')
  // The close cleared the id: identify asks again, and the question waits for a reconnect.
  const asked = lanes.identify(lane).then(
    () => 'answered',
    (e: unknown) => `rejected: ${(e as Error).message}`,
  )
  const waited = (p: Promise<string>) =>
    Promise.race([p, new Promise<string>((r) => setTimeout(() => r('still waiting after 3 s'), 3000))])
  lanes.drop(lane)
  expect(await waited(asked)).toMatch(/^rejected: .*closed/)
  // So does a read written on a lane dropped while it reconnects.
  const lane2 = lanes.acquire('single')
  await until(() => lane2.conn.status === 'reconnecting', 5000, 'the second lane to reconnect')
  const read = lanes.run(lane2, lane2.conn.xread('BLOCK', 100, 'STREAMS', 'x', '$')).then(
    () => 'answered',
    (e: unknown) => `rejected: ${(e as Error).message}`,
  )
  lanes.drop(lane2)
  expect(await waited(read)).toMatch(/^rejected: .*closed/)
  lanes.close()
})
