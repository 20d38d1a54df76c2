// `isNoGroup` recognises what this redis-server answers for a missing consumer group or stream, for
// every command the shared groups run where that means "nothing there" (and nothing else).
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isNoGroup } from '../../../src/backends/redis/shared/no-group.js'
import { RedisServer } from '../../helpers/redis-server.js'

let server: RedisServer
let redis: Redis
beforeAll(async () => {
  server = await RedisServer.start()
  redis = new Redis({ port: server.port, host: '127.0.0.1', protocol: 2 })
  await redis.xadd('s', '1-1', 'v', 'x')
})
afterAll(async () => {
  redis.disconnect()
  await server.destroy()
})

/** What `p` rejects with (an `Error` saying it succeeded when it does not reject). */
const failure = (p: Promise<unknown>): Promise<unknown> =>
  p.then(
    () => new Error('it succeeded'),
    (e: unknown) => e,
  )

describe('isNoGroup', () => {
  it.each([
    [
      'XREADGROUP on a stream without the group',
      () => redis.xreadgroup('GROUP', 'g', 'c', 'COUNT', 1, 'STREAMS', 's', '>'),
    ],
    [
      'XREADGROUP on a missing stream',
      () => redis.xreadgroup('GROUP', 'g', 'c', 'COUNT', 1, 'STREAMS', 'missing', '>'),
    ],
    ['XPENDING on a stream without the group', () => redis.xpending('s', 'g')],
    ['XAUTOCLAIM on a stream without the group', () => redis.xautoclaim('s', 'g', 'c', 0, '0')],
    ['XGROUP SETID on a missing stream', () => redis.xgroup('SETID', 'missing', 'g', '0')],
    ['XGROUP SETID on a stream without the group', () => redis.xgroup('SETID', 's', 'g', '0')],
    ['XGROUP DESTROY on a missing stream', () => redis.xgroup('DESTROY', 'missing', 'g')],
  ])('is true for %s', async (_, run) => {
    const e = await failure(run())
    expect(isNoGroup(e), String(e)).toBe(true)
  })

  it('is false for other failures', async () => {
    await redis.set('str', 'x')
    const wrongType = await failure(redis.xgroup('SETID', 'str', 'g', '0'))
    const syntax = await failure(redis.call('XREADGROUP', 'GROUP', 'g'))
    expect([isNoGroup(wrongType), isNoGroup(syntax), isNoGroup('NOGROUP as a string'), isNoGroup(undefined)]).toEqual([
      false,
      false,
      false,
      false,
    ])
  })
})
