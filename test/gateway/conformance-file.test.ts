// The Durable Streams server conformance suite (@durable-streams/server-conformance-tests, pinned
// 0.3.6) against the gateway over a file store, in this process, with a 500 ms long-poll and the
// `__ds` subscriptions on (the suite's subscription tests run).
import { runConformanceTests } from '@durable-streams/server-conformance-tests'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { tempDir } from '../helpers/tmp.js'
import { serve, type Served } from './serve.js'

describe('Durable Streams conformance: gateway over a file store', () => {
  const config = { baseUrl: '', longPollTimeoutMs: 500, subscriptions: true }
  const dir = tempDir('twainmq-gw-conf-')
  let served: Served
  beforeAll(async () => {
    served = await serve(dir.dir, { longPollMs: 500, cors: '*', subscriptions: true })
    config.baseUrl = served.url
  })
  afterAll(async () => {
    await served?.stop()
    dir.remove()
  })
  runConformanceTests(config)
  // Runs after the suite's tests: they went to this gateway and its store (the streams they made are its topics).
  it('the suite ran against this store', async () => {
    expect((await served.twain.listTopics()).length).toBeGreaterThan(100)
  })
})
