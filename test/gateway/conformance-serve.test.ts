// The Durable Streams server conformance suite (@durable-streams/server-conformance-tests, pinned
// 0.3.6) against `twainmq serve` started as a user starts it: the CLI in a process of its own, no
// --cors, no --auth, over a private redis-server. Only --port 0 (a free port),
// --long-poll-ms 500 (the suite waits out long-polls: 20 s each would make it minutes) and
// --subscriptions (the suite's `__ds` subscription tests run) differ from the defaults. Before, the preflight test ("should allow If-None-Match in CORS preflight
// responses") failed here: without --cors a preflight had no access-control-allow-* headers.
// The suite runs twice: in-process over a directory with --cors '*'
// (conformance-file.test.ts), and here through the CLI over Redis; the gateway above the store is
// the same code for both backends, and the store operations it uses are the backend contract's
// (test/contract/).
import { runConformanceTests } from '@durable-streams/server-conformance-tests'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { finished, startCli, waitFor, type CliChild } from '../helpers/cli.js'
import { RedisServer } from '../helpers/redis-server.js'

const LINE = /twainmq gateway listening on (http:\/\/127\.0\.0\.1:[0-9]+)\/v1\/stream\/ \(dashboard: \1\/\)\n/

describe('Durable Streams conformance: twainmq serve over Redis, as a user starts it', () => {
  const config = { baseUrl: '', longPollTimeoutMs: 500, subscriptions: true }
  let redis: RedisServer | undefined
  let child: CliChild
  beforeAll(async () => {
    redis = await RedisServer.start()
    child = startCli(['serve', '--url', redis.url, '--port', '0', '--long-poll-ms', '500', '--subscriptions'])
    await waitFor('serve to print its URL', () => LINE.test(child.out.stdout) || child.exitCode !== null, 30_000)
    const m = LINE.exec(child.out.stdout)
    if (!m) throw new Error(`twainmq serve did not start: ${child.out.stderr}`)
    config.baseUrl = m[1] as string
  }, 60_000)
  afterAll(async () => {
    if (child && child.exitCode === null) {
      const done = finished(child)
      child.kill('SIGTERM')
      await done
    }
    await redis?.destroy()
  })
  runConformanceTests(config)
  it('the suite ran against this serve process, which grants no other origin without --cors', async () => {
    expect(child.exitCode).toBeNull()
    const pre = await fetch(`${config.baseUrl}/v1/stream/x`, {
      method: 'OPTIONS',
      headers: { origin: 'https://example.com', 'access-control-request-method': 'GET' },
    })
    expect(pre.status).toBe(204)
    expect(pre.headers.get('access-control-allow-origin')).toBeNull()
    const get = await fetch(`${config.baseUrl}/v1/stream/x`, { headers: { origin: 'https://example.com' } })
    expect(get.headers.get('access-control-allow-origin')).toBeNull()
  })
})
