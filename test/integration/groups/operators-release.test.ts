import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { open, type Twain } from '../../../src/index.js'
import { ack, batch, pipe, retry } from '../../../src/operators/index.js'
import { tempDir } from '../../helpers/tmp.js'
import { PROMPT_MS, sleep, until } from '../../helpers/wait.js'

let tmp: ReturnType<typeof tempDir>
let twain: Twain
beforeEach(async () => {
  tmp = tempDir()
  twain = await open(tmp.dir)
  await twain.createTopic('t')
  await twain.producer<string>('t').sendBatch(Array.from({ length: 60 }, (_, i) => ({ key: i, value: `m${i}` })))
})
afterEach(async () => {
  await twain.close()
  tmp.remove()
})

describe('operators hand back messages they pulled but never emitted', () => {
  it('after break from a concurrent ack, close() does not wait for held messages and nothing is lost or skipped', async () => {
    const c = twain.consumer<string>('t', { group: 'g', drainTimeoutMs: 10_000 })
    const seen: number[] = []
    for await (const m of pipe(
      c,
      ack(() => sleep(5), { concurrency: 8 }),
    )) {
      seen.push(m.offset)
      if (seen.length === 10) break
    }
    // The held messages come back in offset order and are delivered again to the next view.
    await sleep(30) // running handlers finish, then their messages are released
    for await (const m of c) {
      seen.push(m.offset)
      m.ack()
      if (seen.length === 60) break
    }
    expect([...seen].sort((a, b) => a - b)).toEqual(Array.from({ length: 60 }, (_, i) => i))
    const t0 = Date.now()
    await c.close()
    expect(Date.now() - t0).toBeLessThan(PROMPT_MS)
    const g = await twain.describeGroup('g')
    expect(g.topics[0]?.committed).toBe(60)
  })

  it('a partial batch left by break is handed back, in order, without counting a delivery', async () => {
    const c = twain.consumer<string>('t', { group: 'g', drainTimeoutMs: 10_000 })
    for await (const b of pipe(c, batch({ size: 50, maxWaitMs: 60_000 }))) {
      b.ack()
      break // the first batch (50) is emitted; nothing held
    }
    const rest: number[] = []
    const counts: number[] = []
    for await (const m of c) {
      rest.push(m.offset)
      counts.push(m.deliveryCount)
      m.ack()
      if (rest.length === 10) break
    }
    expect(rest).toEqual(Array.from({ length: 10 }, (_, i) => 50 + i))
    expect(counts.every((n) => n === 1)).toBe(true)
    const t0 = Date.now()
    await c.close()
    expect(Date.now() - t0).toBeLessThan(PROMPT_MS)
  })

  it('retry stopped during a handler hands its message back', async () => {
    const c = twain.consumer<string>('t', { group: 'g', drainTimeoutMs: 10_000 })
    let handling = false
    const it = pipe(
      c,
      retry(() => ((handling = true), sleep(200)), { attempts: 3 }),
    )[Symbol.asyncIterator]()
    const pending = it.next()
    await until(() => handling, 5000, 'the handler to start')
    await it.return?.()
    await pending
    const [m] = await (async () => {
      for await (const x of c) return [x]
      return []
    })()
    expect(m?.offset).toBe(0)
    expect(m?.deliveryCount).toBe(1)
    m?.ack()
    const t0 = Date.now()
    await c.close()
    expect(Date.now() - t0).toBeLessThan(PROMPT_MS)
  })
})
