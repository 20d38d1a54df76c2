// Catch-up read-ahead (src/gateway/reads/read-ahead.ts, decision 164): after a full page the gateway
// reads the next one before it is asked for. A page read ahead must answer only what a read at
// the time of the request gives: the appends made meanwhile are in it, a deleted and created
// again stream is read afresh, and paging through a stream that grows gives every item once.
// Over a file store and over Redis.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readAheadSettled } from '../../src/gateway/reads/read-ahead.js'
import { backendOf } from '../../src/facade/twain.js'
import { RedisServer } from '../helpers/redis-server.js'
import { tempDir } from '../helpers/tmp.js'
import { serve, type Served } from './serve.js'

const JSON_TYPE = { 'content-type': 'application/json' }
/** ~210 bytes per item: 20 items per 4 KiB page. */
const item = (i: number): string => `${i}:${'x'.repeat(200)}`

describe.each(['file', 'redis'] as const)('gateway catch-up read-ahead (%s store)', (kind) => {
  let served: Served
  let redis: RedisServer | undefined
  const dir = tempDir('twainmq-gw-ahead-')
  beforeAll(async () => {
    if (kind === 'redis') redis = await RedisServer.start()
    served = await serve(redis ? redis.url : dir.dir, { maxReadBytes: 4096 })
  })
  afterAll(async () => {
    await served?.stop()
    await redis?.stop()
    dir.remove()
  })

  const url = (name: string) => `${served.url}/v1/stream/${name}`
  const append = async (name: string, from: number, n: number) => {
    const r = await fetch(url(name), {
      method: 'POST',
      headers: JSON_TYPE,
      body: JSON.stringify(Array.from({ length: n }, (_, i) => item(from + i))),
    })
    expect(r.status).toBeLessThan(300)
  }
  const page = async (name: string, offset: string) => {
    const r = await fetch(`${url(name)}?offset=${encodeURIComponent(offset)}`)
    expect(r.status).toBe(200)
    return {
      items: (await r.json()) as string[],
      next: r.headers.get('stream-next-offset')!,
      upToDate: r.headers.get('stream-up-to-date') === 'true',
    }
  }
  const settled = () => readAheadSettled(backendOf(served.twain))

  it('a last page read ahead is not answered once the stream grew: the appends are in the answer', async () => {
    await fetch(url('grows'), { method: 'PUT', headers: JSON_TYPE })
    await append('grows', 0, 30) // a full page of 20, then a last page of 10
    const first = await page('grows', '-1')
    expect(first.items).toHaveLength(20) // 4096 bytes hold 20 items of 204–205 bytes
    expect(first.upToDate).toBe(false)
    await settled() // the last page (items 20–29, up to date then) was read ahead
    await append('grows', 30, 5)
    const second = await page('grows', first.next)
    expect(second.items).toEqual(Array.from({ length: 15 }, (_, i) => item(20 + i)))
    expect(second.upToDate).toBe(true)
  })

  it('a stream deleted and created again is read afresh, not from a page read ahead', async () => {
    await fetch(url('again'), { method: 'PUT', headers: JSON_TYPE })
    await append('again', 0, 50)
    const first = await page('again', '-1')
    await settled()
    expect((await fetch(url('again'), { method: 'DELETE' })).status).toBe(204)
    await fetch(url('again'), { method: 'PUT', headers: JSON_TYPE })
    await append('again', 1000, 50)
    // The old offset is of the old stream: refused, not answered with the page read ahead.
    expect((await fetch(`${url('again')}?offset=${encodeURIComponent(first.next)}`)).status).toBe(400)
    const fresh = await page('again', '-1')
    expect(fresh.items[0]).toBe(item(1000))
  })

  it('paging through a stream while it grows gives every item once, in order', async () => {
    await fetch(url('paged'), { method: 'PUT', headers: JSON_TYPE })
    await append('paged', 0, 100)
    const seen: string[] = []
    let offset = '-1'
    let appended = 100
    for (let pages = 0; pages < 200; pages++) {
      const p = await page('paged', offset)
      seen.push(...p.items)
      offset = p.next
      if (p.upToDate && appended >= 400) break
      if (pages % 2 === 0 && appended < 400) {
        if (pages % 4 === 0) await settled() // sometimes the next page was read ahead before this append
        await append('paged', appended, 25)
        appended += 25
      }
    }
    expect(seen).toEqual(Array.from({ length: 400 }, (_, i) => item(i)))
  })
})
