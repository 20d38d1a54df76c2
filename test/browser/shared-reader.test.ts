// One page's tail in a tab share (src/browser/shared-reader.ts), in Node against an in-process
// gateway, fed by hand the batches a leader would share: overlapping batches, batches that come
// while it catches up, batches after a gap, repeats, a reader far behind. Whatever the order, it
// gives every message once, in order; and `shareTabs` where the runtime has no Web Locks (Node)
// reads on its own.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { connect, type BrowserMessage } from '../../src/browser/index.js'
import { history } from './shared-helpers.js'
import { SharedTailReader } from '../../src/browser/shared-reader.js'
import type { ShareMember, TabShare } from '../../src/browser/tab-share.js'
import { parsePosition } from '../../src/browser/tokens.js'
import { tempDir } from '../helpers/tmp.js'
import { until } from '../helpers/wait.js'
import { serve, type Served } from '../gateway/serve.js'

/** A share that only records its members (the test delivers batches itself). */
function fakeShare(): { share: TabShare; members: Set<ShareMember> } {
  const members = new Set<ShareMember>()
  const share = { join: (m: ShareMember) => members.add(m), leave: (m: ShareMember) => members.delete(m) }
  return { share: share as unknown as TabShare, members }
}

describe('a shared tail fed by hand (file store)', () => {
  let served: Served
  const dir = tempDir('twainmq-shared-reader-')
  let all: BrowserMessage<number>[]
  beforeAll(async () => {
    served = await serve(dir.dir, { sseMaxMs: 1000 })
    await served.twain.createTopic('n')
    await served.twain.producer<number>('n').sendBatch(Array.from({ length: 200 }, (_, i) => ({ key: 0, value: i })))
    all = await history(served.url, 'n')
    expect(all.map((m) => m.value)).toEqual(Array.from({ length: 200 }, (_, i) => i))
  })
  afterAll(async () => {
    await served?.stop()
    dir.remove()
  })

  const plan = () => ({
    stream: 'n',
    url: `${served.url}/v1/stream/n`,
    headers: () => ({}),
    fetch: undefined,
    retryMs: 10_000,
  })

  async function drain(r: SharedTailReader<number>, n: number): Promise<number[]> {
    const out: number[] = []
    while (out.length < n) {
      const b = await r.next()
      if (b === undefined) break
      out.push(...b.map((m) => m.value))
    }
    return out
  }

  /** A shared tail of `stream` from its start, with `first` read and reading live at the end. */
  async function liveAtEnd(stream: string, first: number[]): Promise<SharedTailReader<number>> {
    const { share } = fakeShare()
    const r = new SharedTailReader<number>(
      { ...plan(), stream, url: `${served.url}/v1/stream/${stream}` },
      parsePosition('-1'),
      share,
    )
    expect(await drain(r, first.length)).toEqual(first)
    await until(() => r.position() !== undefined, 5000, 'live at the end')
    return r
  }

  it('batches during its catch-up, overlapping, repeated and after a gap: each message once, in order', async () => {
    const { share, members } = fakeShare()
    const r = new SharedTailReader<number>(plan(), parsePosition(all[50]!.offset), share)
    // While it catches up (from 50 to the end, 200): batches it will also read, held then dropped.
    r.deliver(all.slice(40, 60))
    r.deliver(all.slice(60, 120))
    expect(await drain(r, 150)).toEqual(Array.from({ length: 150 }, (_, i) => 50 + i))
    await until(() => r.position() === all[199]!.resume, 5000, 'live at the end')
    // Repeats of what it has are dropped.
    r.deliver(all.slice(190, 200))
    const more = await served.twain
      .producer<number>('n')
      .sendBatch(Array.from({ length: 100 }, (_, i) => ({ key: 0, value: 200 + i })))
    expect(more.length).toBe(100)
    const later = await history(served.url, 'n', all[199]!.resume)
    // A batch that starts past it (a gap of 200..249): the gap is read with GETs first.
    r.deliver(later.slice(50, 70) as never)
    r.deliver(later.slice(60, 100) as never) // overlaps the one before
    expect(await drain(r, 100)).toEqual(Array.from({ length: 100 }, (_, i) => 200 + i))
    r.close()
    expect(members.size).toBe(0)
  })

  it('a reader far behind drops shared batches and reads them again with GETs', async () => {
    const { share } = fakeShare()
    const r = new SharedTailReader<number>(plan(), parsePosition(all[199]!.resume), share)
    await until(() => r.position() !== undefined, 5000, 'live at the end')
    const producer = served.twain.producer<number>('n')
    const start = (await history(served.url, 'n')).length
    await producer.sendBatch(Array.from({ length: 12_000 }, (_, i) => ({ key: 0, value: start + i })))
    const fresh = await history(served.url, 'n', all[199]!.resume)
    // Fed in batches of 500 while nothing is taken: past 10,000 queued it stops keeping them.
    for (let i = 0; i < fresh.length; i += 500) r.deliver(fresh.slice(i, i + 500) as never)
    expect(r.position()).toBeUndefined()
    const got = await drain(r, fresh.length)
    expect(got).toEqual(fresh.map((m) => m.value))
    r.close()
  })

  it('a close the share tells while the page fills a gap ends its tail once the gap is read', async () => {
    const post = (body: unknown, headers: Record<string, string> = {}) =>
      fetch(`${served.url}/v1/stream/closing`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      })
    await fetch(`${served.url}/v1/stream/closing`, { method: 'PUT', headers: { 'content-type': 'application/json' } })
    await post([0, 1, 2])
    const r = await liveAtEnd('closing', [0, 1, 2])
    await post([3, 4, 5])
    const closed = await fetch(`${served.url}/v1/stream/closing`, {
      method: 'POST',
      headers: { 'stream-closed': 'true' },
    })
    expect(closed.status).toBe(204)
    const later = await history(served.url, 'closing')
    // The share's last batch (5) comes after a gap (3, 4): the page fills it; the close comes meanwhile.
    r.deliver(later.slice(5) as never)
    r.ended(undefined)
    expect(await drain(r, 3)).toEqual([3, 4, 5])
    expect(await r.next()).toBeUndefined()
  })

  it('told where the shared read has got to, it reads what no batch brought it, idle or filling', async () => {
    await served.twain.createTopic('reached')
    const producer = served.twain.producer<number>('reached')
    const send = (values: number[]) => producer.sendBatch(values.map((value) => ({ key: 0, value })))
    await send([0, 1, 2])
    const r = await liveAtEnd('reached', [0, 1, 2])
    // The shared read is past 3 and 4, whose batch never reached this page.
    await send([3, 4])
    const upTo = async (n: number) => (await history(served.url, 'reached'))[n - 1]!.resume
    r.reached(await upTo(5))
    expect(await drain(r, 2)).toEqual([3, 4])
    // Told while it fills a gap (5 and 6, before a batch of 7 alone) that the read is past 8: it
    // reads 8 once that fill and the batch are taken.
    await send([5, 6, 7, 8])
    const later = await history(served.url, 'reached')
    r.deliver(later.slice(7, 8) as never)
    r.reached(later[8]!.resume)
    expect(await drain(r, 4)).toEqual([5, 6, 7, 8])
    r.close()
  })

  it('shareTabs in a runtime without Web Locks (Node) reads on its own', async () => {
    const client = connect(served.url, { shareTabs: true })
    const out: number[] = []
    for await (const m of client.tail<number>('n')) {
      out.push(m.value)
      if (out.length === 10) break
    }
    expect(out).toEqual(Array.from({ length: 10 }, (_, i) => i))
  })
})
