// A live reader costs no new partition reader per append: the fold of the stream's state and the
// data read each keep their own parked reader (src/gateway/reads/reader-pool.ts lanes). With one pool
// keyed by offset alone, both wanted the reader at the same offset after every append, so one of
// them opened a new reader (segment listing, start file, opens) on every wake-up.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { backendOf } from '../../src/facade/twain.js'
import { tempDir } from '../helpers/tmp.js'
import { until } from '../helpers/wait.js'
import { serve, type Served } from './serve.js'

describe('gateway reader lanes (file store)', () => {
  let served: Served
  const dir = tempDir('twainmq-gw-lanes-')
  beforeAll(async () => {
    served = await serve(dir.dir, { longPollMs: 30_000 })
  })
  afterAll(async () => {
    await served?.stop()
    dir.remove()
  })

  it('50 appends delivered to an SSE reader open at most a couple of readers, not one per append', async () => {
    const url = `${served.url}/v1/stream/lanes`
    await fetch(url, { method: 'PUT', headers: { 'content-type': 'application/json' } })
    const post = (i: number) =>
      fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify([i]) })
    await post(-1)
    const store = backendOf(served.twain)
    const open = store.openReader.bind(store)
    let opened = 0
    store.openReader = (...a) => {
      opened++
      return open(...a)
    }
    const controller = new AbortController()
    const res = await fetch(`${url}?offset=-1&live=sse`, { signal: controller.signal })
    const reader = res.body!.getReader()
    const decoder = new TextDecoder()
    let text = ''
    const pump = (async () => {
      for (;;) {
        const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }))
        if (done) return
        text += decoder.decode(value, { stream: true })
      }
    })()
    const items = () =>
      [...text.matchAll(/event: data\ndata:(\[[^\n]*\])/g)].flatMap((m) => JSON.parse(m[1]!) as number[])
    await until(() => items().length === 1, 10_000, 'the first item')
    const before = opened
    for (let i = 0; i < 50; i++) {
      await post(i)
      await until(() => items().length === i + 2, 10_000, `item ${i}`)
    }
    expect(items()).toEqual([-1, ...Array.from({ length: 50 }, (_, i) => i)])
    expect(opened - before).toBeLessThanOrEqual(2)
    controller.abort()
    await pump
  })
})
