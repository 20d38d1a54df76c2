// IxJS passes its abort signal to `[Symbol.asyncIterator](signal)`: tails, histories and consumers honour it.
import { first, from } from 'ix/asynciterable'
import { filter } from 'ix/asynciterable/operators'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { AbortError, open, type Twain } from '../../../src/index.js'
import { makeTmp, rmTmp } from '../../unit/helpers.js'

/** `p`, or a rejection saying what did not end within `ms` (a bound on the test, not a synchronisation). */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not end within ${ms} ms`)), ms)
  })
  return Promise.race([p, late]).finally(() => clearTimeout(timer))
}

describe('IxJS abort signals', () => {
  let dir: string
  let twain: Twain

  beforeEach(async () => {
    dir = makeTmp()
    twain = await open(dir, { pollMs: 50 })
    await twain.createTopic('t', { partitions: 2 })
    await twain.producer<string>('t').send(1, 'first')
  })
  afterEach(async () => {
    await twain.close()
    rmTmp(dir)
  })

  it('from(tail).forEach(fn, undefined, signal) ends with AbortError when the signal aborts while the tail waits', async () => {
    const ctrl = new AbortController()
    const seen: unknown[] = []
    const run = from(twain.tail<string>('t', { from: 'start' })).forEach(
      (m) => {
        seen.push(m.value)
        ctrl.abort() // the tail now waits for a message that never comes
      },
      undefined,
      ctrl.signal,
    )
    const err = await within(run, 3000, 'forEach').then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(seen).toEqual(['first'])
    expect(err).toBeInstanceOf(AbortError)
  })

  it('through IxJS operators: aborting while the tail waits ends forEach', async () => {
    const ctrl = new AbortController()
    const run = from(twain.tail<string>('t', { from: 'start' }))
      .pipe(filter((m) => m.value !== ''))
      .forEach(() => ctrl.abort(), undefined, ctrl.signal)
    await expect(within(run, 3000, 'forEach')).rejects.toMatchObject({ name: 'AbortError' })
  })

  it('an already aborted signal ends the iteration at once with our AbortError', async () => {
    const ctrl = new AbortController()
    ctrl.abort()
    const run = from(twain.tail('t', { from: 'start' })).forEach(() => undefined, undefined, ctrl.signal)
    await expect(within(run, 3000, 'forEach')).rejects.toBeInstanceOf(AbortError) // ours: the signal reached the stream
  })

  it('[Symbol.asyncIterator](signal) on a stream: aborting rejects a pending next() with AbortError', async () => {
    const ctrl = new AbortController()
    const it = twain.tail('t')[Symbol.asyncIterator](ctrl.signal)
    const next = it.next()
    ctrl.abort()
    await expect(within(next, 3000, 'next()')).rejects.toBeInstanceOf(AbortError)
  })

  it("a consumer's IxJS iteration ends on its signal; the member stays in the group and the next iteration goes on", async () => {
    const consumer = twain.consumer<string>('t', { group: 'g', from: 'start' })
    const ctrl = new AbortController()
    const run = from(consumer).forEach(
      (m) => {
        m.ack()
        ctrl.abort()
      },
      undefined,
      ctrl.signal,
    )
    await expect(within(run, 5000, 'forEach over a consumer')).rejects.toBeInstanceOf(AbortError)
    expect(consumer.closed).toBe(false)
    await twain.producer<string>('t').send(1, 'second')
    const next = await within(first(from(consumer)), 5000, 'next iteration') // continues after the last delivered message
    expect(next?.value).toBe('second')
    next?.ack()
    await consumer.close()
  })
})
