// The Durable Streams server conformance suite (@durable-streams/server-conformance-tests, pinned
// 0.3.6) against the gateway over a private redis-server, in this process, with a 500 ms long-poll.
import { runConformanceTests } from '@durable-streams/server-conformance-tests'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RedisServer } from '../helpers/redis-server.js'
import { serve, type Served } from './serve.js'

describe('Durable Streams conformance: gateway over Redis', () => {
  const config = { baseUrl: '', longPollTimeoutMs: 500 }
  let redis: RedisServer
  let served: Served
  beforeAll(async () => {
    redis = await RedisServer.start()
    served = await serve(redis.url, { longPollMs: 500, cors: '*' })
    config.baseUrl = served.url
  })
  afterAll(async () => {
    await served?.stop()
    await redis?.stop()
  })
  runConformanceTests(config)
  // Runs after the suite's tests: they went to this gateway and its store (the streams they made are its topics).
  it('the suite ran against this store', async () => {
    expect((await served.twain.listTopics()).length).toBeGreaterThan(100)
  })
})
