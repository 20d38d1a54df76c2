// A tail started at the start of a long topic, consumed as an Observable with a slow handler: an
// Observable has no backpressure, so `from(tail).pipe(concatMap(handler))` pulls the whole backlog
// into concatMap's queue (the README says so), while `pullMap` (twainmq/rx) reads the tail at the
// handlers' pace: at most `concurrency` messages taken and not handled, besides one read of the
// tail (up to 4096 records). Counted in messages the backend's readers return, not in heap.
import { concatMap, lastValueFrom, take, from, type Subscription } from 'rxjs'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { open, type Message, type Twain } from '../../../src/index.js'
import { backendOf } from '../../../src/facade/twain.js'
import { pullMap } from '../../../src/operators/rx/index.js'
import { tempDir } from '../../helpers/tmp.js'
import { until } from '../../helpers/wait.js'

const BACKLOG = 150_000
/** The most records one read of a tail returns (src/stream/tail-source.ts). */
const TAIL_READ = 4096

/** Count the records the instance's readers return. */
function countReads(twain: Twain): { records: number } {
  const store = backendOf(twain)
  const counter = { records: 0 }
  const openReader = store.openReader.bind(store)
  store.openReader = async (topic, partition, from) => {
    const r = await openReader(topic, partition, from)
    const read = r.read.bind(r)
    r.read = async (...args: Parameters<typeof read>) => {
      const got = await read(...args)
      counter.records += got.length
      return got
    }
    return r
  }
  return counter
}

describe('an Observable over a file backlog of 150,000 records', () => {
  let tmp: ReturnType<typeof tempDir>
  let twain: Twain
  const opened: Twain[] = []
  const subs: Subscription[] = []
  beforeEach(async () => {
    tmp = tempDir('observable-backlog-')
    twain = await open(tmp.dir)
    await twain.createTopic('t')
    const p = twain.producer<string>('t')
    for (let i = 0; i < BACKLOG; i += 10_000)
      await p.sendBatch(Array.from({ length: 10_000 }, (_, k) => ({ key: (i + k) & 0xffff, value: `v${i + k}` })))
  }, 120_000)
  afterEach(async () => {
    for (const s of subs.splice(0)) s.unsubscribe()
    await Promise.all([twain, ...opened.splice(0)].map((t) => t.close()))
    tmp.remove()
  })

  async function instance(): Promise<{ twain: Twain; reads: { records: number } }> {
    const t = await open(tmp.dir)
    opened.push(t)
    return { twain: t, reads: countReads(t) }
  }

  it('pullMap with a slow handler keeps at most concurrency + one read of messages taken and not handled', async () => {
    const { twain: t, reads } = await instance()
    const concurrency = 4
    let handled = 0
    let running = 0
    let most = 0
    let mostRunning = 0
    const last = await lastValueFrom(
      pullMap(
        t.tail<string>('t', { from: 'start' }),
        async (m: Message<string>) => {
          mostRunning = Math.max(mostRunning, ++running)
          most = Math.max(most, reads.records - handled)
          await new Promise((r) => setImmediate(r)) // slower than reading: the backlog presses
          running--
          handled++
          return m.offset
        },
        { concurrency },
      ).pipe(take(BACKLOG)),
    )
    expect(handled).toBe(BACKLOG)
    expect(last).toBeGreaterThanOrEqual(BACKLOG - concurrency)
    expect(mostRunning).toBe(concurrency)
    expect(most, `${most} messages read and not handled`).toBeLessThanOrEqual(concurrency + TAIL_READ)
  }, 120_000)

  it('from() + concatMap pulls the whole backlog while its first handler waits; pullMap, given the same time, one read', async () => {
    const pushed = await instance()
    const pulled = await instance()
    let gate!: () => void
    const blocked = new Promise<void>((r) => (gate = r))
    let pushedStarted = 0
    let pulledStarted = 0
    subs.push(
      from(pushed.twain.tail<string>('t', { from: 'start' }))
        .pipe(
          concatMap(async (m) => {
            pushedStarted++
            await blocked
            return m
          }),
        )
        .subscribe(),
    )
    subs.push(
      pullMap(
        pulled.twain.tail<string>('t', { from: 'start' }),
        async (m) => {
          pulledStarted++
          await blocked
          return m
        },
        { concurrency: 4 },
      ).subscribe(),
    )
    // The documented behaviour: everything the tail reads is pushed into concatMap's queue.
    await until(() => pushed.reads.records === BACKLOG, 60_000, 'from() to have read the whole backlog')
    // pullMap's four handlers start once its first read lands (on a loaded machine that may come
    // after the other tail has read everything): waited for, then its reads counted.
    await until(() => pulledStarted === 4, 60_000, 'pullMap to have started its four handlers')
    expect(pushedStarted).toBe(1)
    expect(pulledStarted).toBe(4)
    expect(pulled.reads.records).toBeLessThanOrEqual(4 + TAIL_READ)
    gate()
  }, 120_000)
})
