// A live read takes the stream's view (its tail), then watches the partition. On Redis a watch of a
// partition something else already watches gets no wake-up of its own at first, so a record
// appended between the two came with no wake-up for it: the long-poll waited out its whole
// longPollMs, and an SSE read sat at a tail it had passed (a dashboard test over Redis showed a
// live record only after its 10 s poll, under a second full test run: the gateway's consumer
// group watched the partition). The read now looks at the stream again once its watch is in place.
// Here the record is appended while the read takes its view, and its wake-up has passed before the
// view is used: these tests failed before that look (a 204 with no data; no data event).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { backendOf } from '../../src/facade/twain.js'
import { RedisServer } from '../helpers/redis-server.js'
import { until } from '../helpers/wait.js'
import { readSse } from './http.js'
import { serve, type Served } from './serve.js'

describe("a record appended between a Redis live read's view and its watch", () => {
  let server: RedisServer
  let served: Served
  const url = (name: string, query = ''): string => `${served.url}/v1/stream/${name}${query}`
  /** The next view of this stream appends `value` once it has its offsets, and returns them as they were. */
  let armed: { topic: string; value: string } | undefined
  let wakes = 0
  beforeAll(async () => {
    server = await RedisServer.start()
    served = await serve(server.url, { longPollMs: 20_000 })
    const store = backendOf(served.twain)
    const offsets = store.offsets.bind(store)
    store.offsets = async (topic) => {
      const got = await offsets(topic)
      const a = armed
      if (a !== undefined && a.topic === topic) {
        armed = undefined
        const before = wakes
        await served.twain.producer<{ v: string }>(topic).send(0, { v: a.value }, { partition: 0 })
        await until(() => wakes > before, 10_000, 'the wake-up of the append to pass')
      }
      return got
    }
  })
  afterAll(async () => {
    await served?.stop()
    await server?.destroy()
  })

  /** A topic of the Node API read as stream `<name>~0`, whose partition something else watches already (as a consumer group does). */
  async function watchedStream(name: string): Promise<string> {
    await served.twain.createTopic(name, { partitions: 2 })
    backendOf(served.twain).watch(name, 0, () => wakes++, false)
    return (await fetch(url(`${name}~0`, '?offset=-1'))).headers.get('stream-next-offset') as string
  }

  it('long-poll: answers with the record, not a 204 after longPollMs', async () => {
    const at = await watchedStream('lp')
    armed = { topic: 'lp', value: 'between' }
    const res = await fetch(url('lp~0', `?offset=${at}&live=long-poll`))
    expect(armed).toBeUndefined() // the append ran
    expect(res.status).toBe(200)
    expect(await res.text()).toBe('[{"v":"between"}]')
  })

  it('SSE: sends the record at once, not when the next keep-alive (longPollMs) looks again', async () => {
    const at = await watchedStream('sse')
    armed = { topic: 'sse', value: 'between' }
    const ctrl = new AbortController()
    const t0 = Date.now()
    const res = await fetch(url('sse~0', `?offset=${at}&live=sse`), { signal: ctrl.signal })
    const text = await readSse(res, (t) => /event: data/.test(t))
    ctrl.abort()
    expect(armed).toBeUndefined()
    expect(text).toMatch(/event: data\ndata:\[\{"v":"between"\}\]/)
    // Before the fix it came only after longPollMs (20 s), when the read looked again.
    expect(Date.now() - t0).toBeLessThan(15_000)
  })
})
