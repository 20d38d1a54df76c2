// The Durable Streams server conformance suite (@durable-streams/server-conformance-tests, pinned
// 0.3.6) against the gateway over a file store, in this process, with a 500 ms long-poll.
import { runConformanceTests } from '@durable-streams/server-conformance-tests'
import { afterAll, beforeAll, describe } from 'vitest'
import { tempDir } from '../helpers/tmp.js'
import { serve, type Served } from './serve.js'

describe('Durable Streams conformance: gateway over a file store', () => {
  const config = { baseUrl: '', longPollTimeoutMs: 500 }
  const dir = tempDir('twainmq-gw-conf-')
  let served: Served
  beforeAll(async () => {
    served = await serve(dir.dir, { longPollMs: 500, cors: '*' })
    config.baseUrl = served.url
  })
  afterAll(async () => {
    await served?.stop()
    dir.remove()
  })
  runConformanceTests(config)
})
