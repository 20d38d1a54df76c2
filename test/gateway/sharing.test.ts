// Work shared among requests (decisions 131-133): many SSE readers of one stream woken by the same
// appends each get every item once, in order; readers parked by earlier requests never serve a
// re-created stream's reads; long-poll readers woken together get the same data.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { tempDir } from '../helpers/tmp.js'
import { readSse } from './http.js'
import { serve, type Served } from './serve.js'

const JSON_TYPE = { 'content-type': 'application/json' }
const items = (text: string): unknown[] =>
  [...text.matchAll(/event: data\ndata:([^\n]*)/g)].flatMap((m) => JSON.parse(m[1]!) as unknown[])

describe('gateway work sharing (file store)', () => {
  let served: Served
  const dir = tempDir('twainmq-gw-sharing-')
  const url = (name: string, query = ''): string => `${served.url}/v1/stream/${name}${query}`
  beforeAll(async () => {
    served = await serve(dir.dir, { longPollMs: 30_000, maxLivePerClient: 100 })
  })
  afterAll(async () => {
    await served?.stop()
    dir.remove()
  })

  it('40 SSE readers of one stream each receive every appended item exactly once, in order', async () => {
    await fetch(url('fan'), { method: 'PUT', headers: JSON_TYPE })
    const tail = (await fetch(url('fan'), { method: 'HEAD' })).headers.get('stream-next-offset')!
    const aborts = Array.from({ length: 40 }, () => new AbortController())
    const reads = await Promise.all(
      aborts.map((a) => fetch(url('fan', `?offset=${tail}&live=sse`), { signal: a.signal })),
    )
    const texts = reads.map((res) => readSse(res, (t) => items(t).length >= 10))
    for (let i = 0; i < 5; i++) {
      const res = await fetch(url('fan'), {
        method: 'POST',
        headers: JSON_TYPE,
        body: JSON.stringify([
          { i, a: 1 },
          { i, a: 2 },
        ]),
      })
      expect(res.status).toBe(204)
    }
    const expected = Array.from({ length: 5 }, (_, i) => [
      { i, a: 1 },
      { i, a: 2 },
    ]).flat()
    for (const text of await Promise.all(texts)) expect(items(text)).toEqual(expected)
    for (const a of aborts) a.abort()
  })

  it('long-poll readers woken by one append all get it; a later append is a new read', async () => {
    await fetch(url('poll'), { method: 'PUT', headers: JSON_TYPE })
    const tail = (await fetch(url('poll'), { method: 'HEAD' })).headers.get('stream-next-offset')!
    const polls = Array.from({ length: 20 }, () => fetch(url('poll', `?offset=${tail}&live=long-poll`)))
    await fetch(url('poll'), { method: 'POST', headers: JSON_TYPE, body: '["one"]' })
    const answers = await Promise.all(polls)
    const next = new Set(answers.map((r) => r.headers.get('stream-next-offset')))
    expect(next.size).toBe(1)
    for (const r of answers) expect(await r.json()).toEqual(['one'])
    await fetch(url('poll'), { method: 'POST', headers: JSON_TYPE, body: '["two"]' })
    const again = await fetch(url('poll', `?offset=${[...next][0]}&live=long-poll`))
    expect(await again.json()).toEqual(['two'])
  })

  it('a stream deleted and created again reads only its new data (no reader of the old one is reused)', async () => {
    for (let round = 0; round < 3; round++) {
      const put = await fetch(url('again'), { method: 'PUT', headers: JSON_TYPE })
      expect(put.status).toBe(201)
      await fetch(url('again'), {
        method: 'POST',
        headers: JSON_TYPE,
        body: JSON.stringify([`r${round}a`, `r${round}b`]),
      })
      const first = await fetch(url('again', '?offset=-1'))
      expect(await first.json()).toEqual([`r${round}a`, `r${round}b`])
      const end = first.headers.get('stream-next-offset')!
      const atEnd = await fetch(url('again', `?offset=${end}`)) // leaves a reader parked at the end
      expect(await atEnd.json()).toEqual([])
      expect((await fetch(url('again'), { method: 'DELETE' })).status).toBe(204)
    }
  })
})
