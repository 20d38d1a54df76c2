// pullMap (twainmq/rx): an Observable of handler results over an AsyncIterable that takes the next
// item only when a handler is free, so a slow handler bounds what is taken from the source.
import { lastValueFrom, take, toArray } from 'rxjs'
import { describe, expect, it } from 'vitest'
import { AbortError, InvalidArgumentError } from '../../../src/index.js'
import { pullMap } from '../../../src/operators/rx/index.js'
import { deferred, fakeMessage, fromArray, ManualSource, settle, type Deferred } from './fakes.js'

describe('pullMap', () => {
  it('takes an item from the source only when one of `concurrency` handlers is free', async () => {
    const source = new ManualSource<number>()
    source.push(...Array.from({ length: 20 }, (_, i) => i))
    const running = new Map<number, Deferred<number>>()
    const results: number[] = []
    const sub = pullMap(
      source,
      (n) => {
        const d = deferred<number>()
        running.set(n, d)
        return d.promise
      },
      { concurrency: 3 },
    ).subscribe((r) => results.push(r))
    await settle()
    expect(source.nextCalls).toBe(3) // 17 items wait in the source, not in the pipeline
    expect([...running.keys()]).toEqual([0, 1, 2])
    running.get(1)?.resolve(10)
    await settle()
    expect(results).toEqual([10]) // emitted as handlers finish
    expect(source.nextCalls).toBe(4)
    expect([...running.keys()]).toEqual([0, 1, 2, 3])
    sub.unsubscribe()
  })

  it('with concurrency 1 (the default) handles items one after another, in order, and completes after the last', async () => {
    const order: string[] = []
    const out = await lastValueFrom(
      pullMap(fromArray([1, 2, 3]), async (n, i) => {
        order.push(`start ${n}`)
        await settle()
        order.push(`end ${n}`)
        return n * 10 + i
      }).pipe(toArray()),
    )
    expect(out).toEqual([10, 21, 32])
    expect(order).toEqual(['start 1', 'end 1', 'start 2', 'end 2', 'start 3', 'end 3'])
  })

  it('a failing handler errors the Observable with its error and ends the source', async () => {
    const source = new ManualSource<number>()
    source.push(1, 2, 3)
    const boom = new Error('boom')
    await expect(
      lastValueFrom(
        pullMap(source, (n) => {
          if (n === 2) throw boom
          return n
        }),
      ),
    ).rejects.toBe(boom)
    await settle()
    expect(source.returnCalls).toBe(1)
  })

  it('a failing source errors the Observable with its error', async () => {
    const source = new ManualSource<number>()
    const boom = new Error('source failed')
    source.push(1)
    source.fail(boom)
    await expect(lastValueFrom(pullMap(source, (n) => n))).rejects.toBe(boom)
  })

  it('unsubscribing ends the source at once, even while it waits, and hands back an item taken and not handled', async () => {
    const source = new ManualSource<ReturnType<typeof fakeMessage>>()
    const handled: number[] = []
    const sub = pullMap(source, (m) => handled.push(m.id)).subscribe()
    await settle()
    expect(source.pending).toBe(true)
    sub.unsubscribe()
    await settle()
    expect(source.returnCalls).toBe(1)
    let released = 0
    const late = Object.assign(fakeMessage(7), { release: () => void released++ })
    source.push(late) // the pending next() resolves after the unsubscribe
    await settle()
    expect(handled).toEqual([])
    expect(released).toBe(1)
  })

  it('take(n) downstream stops pulling after n results', async () => {
    const source = new ManualSource<number>()
    source.push(...Array.from({ length: 100 }, (_, i) => i))
    const out = await lastValueFrom(pullMap(source, (n) => n).pipe(take(5), toArray()))
    expect(out).toEqual([0, 1, 2, 3, 4])
    await settle()
    expect(source.nextCalls).toBeLessThanOrEqual(6)
    expect(source.returnCalls).toBe(1)
  })

  it('the signal errors it with AbortError and ends the source', async () => {
    const source = new ManualSource<number>()
    const ctrl = new AbortController()
    const done = lastValueFrom(pullMap(source, (n) => n, { signal: ctrl.signal }))
    await settle()
    ctrl.abort()
    await expect(done).rejects.toBeInstanceOf(AbortError)
    await settle()
    expect(source.returnCalls).toBe(1)
  })

  it('refuses a source that is not an AsyncIterable, a handler that is not a function, and bad options, naming the value', () => {
    const src = fromArray([1])
    expect(() => pullMap([1] as unknown as AsyncIterable<number>, (n) => n)).toThrow(
      'pullMap(): the source must be an AsyncIterable, got object',
    )
    expect(() => pullMap(src, 'f' as unknown as (n: number) => number)).toThrow(
      'pullMap(): the handler must be a function, got string',
    )
    for (const concurrency of [0, 1.5, -1]) {
      expect(() => pullMap(src, (n) => n, { concurrency })).toThrow(InvalidArgumentError)
      expect(() => pullMap(src, (n) => n, { concurrency })).toThrow(
        `pullMap(): concurrency must be an integer >= 1, got ${concurrency}`,
      )
    }
  })
})
