// The gateway reading a compacted Redis topic (DESIGN §3.12): a read from the start, from an offset
// compaction removed and from the tail steps over the gaps, and a long-poll at the tail is woken by
// the next record.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { backendOf } from '../../src/facade/twain.js'
import { topicMeta } from '../contract/fixture.js'
import { RedisServer } from '../helpers/redis-server.js'
import { serve, type Served } from './serve.js'

describe('gateway over a compacted topic (redis)', () => {
  let served: Served
  let redis: RedisServer
  const url = (query = ''): string => `${served.url}/v1/stream/c${query}`
  beforeAll(async () => {
    redis = await RedisServer.start()
    served = await serve(redis.url, { longPollMs: 20_000 })
  })
  afterAll(async () => {
    await served?.stop()
    await redis?.stop()
  })

  it('reads step over the offsets compaction removed', async () => {
    const store = backendOf(served.twain)
    await store.createTopic(topicMeta('c', { keyType: 'string', compact: true }))
    const p = served.twain.producer<{ k: string; r: number }>('c')
    for (let r = 0; r < 3; r++) await p.sendBatch(['a', 'b', 'c'].map((k) => ({ key: k, value: { k, r } })))
    const whole = await fetch(url())
    expect(await whole.json()).toHaveLength(9)
    const tail = whole.headers.get('stream-next-offset') as string
    const at = (offset: number) => `${tail.split('_')[0]}_${String(offset).padStart(16, '0')}`
    await store.compact('c')
    const latest = [0, 1, 2].map((i) => ({ k: 'abc'[i], r: 2 }))
    expect(await (await fetch(url())).json()).toEqual(latest)
    expect(await (await fetch(url(`?offset=${at(1)}`))).json()).toEqual(latest) // offset 1 is gone
    expect(await (await fetch(url(`?offset=${at(7)}`))).json()).toEqual(latest.slice(1))
    const atTail = await fetch(url(`?offset=${tail}`))
    expect(await atTail.json()).toEqual([])
    const poll = fetch(url(`?offset=${tail}&live=long-poll`))
    await p.send('a', { k: 'a', r: 3 })
    expect(await (await poll).json()).toEqual([{ k: 'a', r: 3 }])
  })
})
