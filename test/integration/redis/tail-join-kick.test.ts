// A tail joining a Redis slot group whose blocking read is under way is served by a re-issued read:
// the group unblocks its read (CLIENT UNBLOCK from another connection). The unblock can reach the
// server before the read does; the group tried 20 times (about a second of back-off) and then left
// the new tail to wait for the read's BLOCK time (5 s), which a loaded machine reached (a dashboard
// test over Redis showed a live record only after its 10 s poll). It now tries while the read it
// must end is still the one under way.
import { Redis } from 'ioredis'
import { afterEach, expect, it, vi } from 'vitest'
import { TailLanes } from '../../../src/backends/redis/tail-lanes.js'
import { open, type Twain } from '../../../src/index.js'
import { RedisServer } from '../../helpers/redis-server.js'
import { until } from '../../helpers/wait.js'

const MISSES = 22

let server: RedisServer | undefined
let twain: Twain | undefined
let writer: Twain | undefined
afterEach(async () => {
  vi.restoreAllMocks()
  await twain?.close()
  await writer?.close()
  await server?.destroy()
  server = twain = writer = undefined
})

it('a tail added while the read is under way is served by a re-issued read, however many unblocks miss', async () => {
  server = await RedisServer.start()
  twain = await open(`redis://127.0.0.1:${server.port}`)
  // Sends from another instance: a send of the tailing instance would wake its tails by itself.
  writer = await open(`redis://127.0.0.1:${server.port}`)
  await twain.createTopic('a', { keyType: 'u32' })
  await twain.createTopic('b', { keyType: 'u32' })
  const first = twain.tail<string>('a', { from: 'end' })[Symbol.asyncIterator]()
  const gotA = first.next()
  const producer = writer.producer<string>('a')
  // The group's read is under way once a send to `a` comes through it.
  await producer.send(1, 'a1')
  expect((await gotA).value?.value).toBe('a1')
  const waitingA = first.next()
  // Wait for the group's next read to block on the server.
  const admin = new Redis({ port: server.port, host: '127.0.0.1' })
  const blocked = async () => /cmd=xread\b[^\n]*/.test(String(await admin.client('LIST')))
  await until(blocked, 10_000, 'the group read to block')
  admin.disconnect()

  // The next 22 unblocks miss (as if each reached the server before the read), then they work: more
  // than the 20 tries the group used to give up after, and well inside the read's 5 s BLOCK time.
  const real = TailLanes.prototype.unblock
  const results: boolean[] = []
  vi.spyOn(TailLanes.prototype, 'unblock').mockImplementation(async function (this: TailLanes, lane) {
    const done = results.length < MISSES ? false : await real.call(this, lane)
    results.push(done)
    return done
  })
  const second = twain.tail<string>('b', { from: 'end' })[Symbol.asyncIterator]()
  const gotB = second.next()
  await until(() => results.length > 0, 10_000, 'the group to try to unblock its read for the new tail')
  await writer.producer<string>('b').send(2, 'b1')
  expect((await gotB).value?.value).toBe('b1')
  // Served by the read an unblock re-issued, not by the read's own BLOCK time running out.
  expect(results.slice(0, MISSES).every((r) => !r)).toBe(true)
  expect(results.at(-1)).toBe(true)
  await first.return?.()
  await second.return?.()
  await waitingA.catch(() => undefined)
})
