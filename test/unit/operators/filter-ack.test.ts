import { from as rxFrom, lastValueFrom, toArray } from 'rxjs'
import { describe, expect, it } from 'vitest'
import { AbortError, InvalidArgumentError } from '../../../src/index.js'
import { filterAck, pipe } from '../../../src/operators/index.js'
import { filterAckRx } from '../../../src/operators/rx/index.js'
import {
  deferred,
  fakeMessages,
  fromArray,
  ManualSource,
  settle,
  settlements,
  within,
  type FakeMessage,
} from './fakes.js'
import { PROMPT_MS } from '../../helpers/wait.js'

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = []
  for await (const v of it) out.push(v)
  return out
}

const even = (m: FakeMessage) => m.id % 2 === 0

describe('filterAck (twainmq/operators)', () => {
  it('next() called again before the first has settled: each call gets its own message', async () => {
    const src = new ManualSource<FakeMessage>()
    const it = pipe(
      src,
      filterAck(() => true),
    )[Symbol.asyncIterator]()
    const both = Promise.all([it.next(), it.next()])
    src.push(...fakeMessages(2))
    const [x, y] = await both
    expect([(x.value as FakeMessage).id, (y.value as FakeMessage).id]).toEqual([0, 1])
    await it.return!()
  })

  it('passes kept messages on unsettled, in order, and acks every dropped one', async () => {
    const msgs = fakeMessages(6)
    const out = await collect(pipe(fromArray(msgs), filterAck(even)))
    expect(out.map((m) => m.id)).toEqual([0, 2, 4])
    expect(out.every((m) => settlements(m) === 0)).toBe(true)
    expect(msgs.filter((m) => !even(m)).map((m) => [m.acks, m.nacks, m.terms])).toEqual([
      [1, 0, 0],
      [1, 0, 0],
      [1, 0, 0],
    ])
  })

  it('takes an async predicate and keeps source order', async () => {
    const msgs = fakeMessages(5)
    const out = await collect(filterAck(async (m: FakeMessage) => m.id !== 1 && m.id !== 3)(fromArray(msgs)))
    expect(out.map((m) => m.id)).toEqual([0, 2, 4])
    expect([msgs[1]?.acks, msgs[3]?.acks]).toEqual([1, 1])
  })

  it('a throwing predicate nacks its message and ends the iteration with the error; the source is returned', async () => {
    const source = new ManualSource<FakeMessage>()
    const msgs = fakeMessages(3)
    source.push(...msgs)
    const boom = new Error('bad predicate')
    const it = filterAck((m: FakeMessage) => {
      if (m.id === 1) throw boom
      return true
    })(source)[Symbol.asyncIterator]()
    expect((await it.next()).value).toBe(msgs[0])
    await expect(it.next()).rejects.toBe(boom)
    expect(msgs[1]?.nacks).toBe(1)
    expect(source.returnCalls).toBe(1)
    expect(await it.next()).toEqual({ done: true, value: undefined })
  })

  it('a rejecting async predicate nacks its message too', async () => {
    const msgs = fakeMessages(2)
    const boom = new Error('async failure')
    const run = collect(
      filterAck(async (m: FakeMessage) => (m.id === 1 ? Promise.reject(boom) : true))(fromArray(msgs)),
    )
    await expect(run).rejects.toBe(boom)
    expect([msgs[0]?.nacks, msgs[1]?.nacks]).toEqual([0, 1])
  })

  it('return() ends at once while an async predicate runs, without awaiting the source; that message is handed back unsettled', async () => {
    const source = new ManualSource<FakeMessage>({ hangingReturn: true })
    const m = fakeMessages(1)[0] as FakeMessage
    let released = 0
    ;(m as FakeMessage & { release(): void }).release = () => void released++
    const gate = deferred<boolean>()
    const it = filterAck(() => gate.promise)(source)[Symbol.asyncIterator]()
    const next = it.next()
    source.push(m)
    await settle()
    expect(await within(it.return!(), PROMPT_MS)).toEqual({ value: { done: true, value: undefined } })
    expect(await within(next, PROMPT_MS)).toEqual({ value: { done: true, value: undefined } })
    gate.resolve(false)
    await settle()
    expect(settlements(m)).toBe(0)
    expect(released).toBe(1)
  })

  it('the signal ends a waiting iteration with AbortError', async () => {
    const ctrl = new AbortController()
    const source = new ManualSource<FakeMessage>()
    const next = filterAck(even, { signal: ctrl.signal })(source)[Symbol.asyncIterator]().next()
    ctrl.abort()
    const r = await within(next, PROMPT_MS)
    expect(r !== 'pending' && 'error' in r && r.error).toBeInstanceOf(AbortError)
  })

  it('refuses a predicate that is not a function', () => {
    expect(() => filterAck(42 as never)).toThrow(InvalidArgumentError)
    expect(() => filterAck(42 as never)).toThrow(/filterAck\(\): the predicate must be a function, got number/)
    expect(() => filterAck(even, { signal: 'x' as never })).toThrow(/signal must be an AbortSignal/)
  })
})

describe('filterAckRx (twainmq/rx)', () => {
  it('emits kept messages unsettled and acks dropped ones, with sync and async predicates', async () => {
    const msgs = fakeMessages(6)
    const out = await lastValueFrom(rxFrom(msgs).pipe(filterAckRx(even), toArray()))
    expect(out.map((m) => m.id)).toEqual([0, 2, 4])
    expect(msgs.map((m) => m.acks)).toEqual([0, 1, 0, 1, 0, 1])
    const more = fakeMessages(4)
    const outAsync = await lastValueFrom(
      rxFrom(more).pipe(
        filterAckRx(async (m: FakeMessage) => m.id >= 2),
        toArray(),
      ),
    )
    expect(outAsync.map((m) => m.id)).toEqual([2, 3])
    expect(more.map((m) => m.acks)).toEqual([1, 1, 0, 0])
  })

  it('a throwing or rejecting predicate nacks its message and errors the stream', async () => {
    const boom = new Error('no')
    const a = fakeMessages(3)
    await expect(
      lastValueFrom(
        rxFrom(a).pipe(
          filterAckRx((m: FakeMessage) => {
            if (m.id === 1) throw boom
            return true
          }),
        ),
      ),
    ).rejects.toBe(boom)
    expect(a.map((m) => m.nacks)).toEqual([0, 1, 0])
    const b = fakeMessages(3)
    await expect(
      lastValueFrom(rxFrom(b).pipe(filterAckRx(async (m: FakeMessage) => (m.id === 2 ? Promise.reject(boom) : true)))),
    ).rejects.toBe(boom)
    expect(b.map((m) => m.nacks)).toEqual([0, 0, 1])
  })
})
