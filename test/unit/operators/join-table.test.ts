// joinTable / joinTableRx (stream–table joins) over fake messages and a fake table: the first
// message waits for ready(); each message comes with the table's value for its key when handed
// on; `key` picks another key; `inner` acks what the table lacks; failures nack and end the
// iteration; settling a Joined settles its message; bad arguments are refused by name.
import { from as rxFrom, lastValueFrom, toArray } from 'rxjs'
import { describe, expect, it } from 'vitest'
import { InvalidArgumentError } from '../../../src/index.js'
import { ack, joinTable, Joined, pipe } from '../../../src/operators/index.js'
import { joinTableRx } from '../../../src/operators/rx/index.js'
import { deferred, fakeMessages, fromArray, ManualSource, settlements, type FakeMessage } from './fakes.js'
import { until } from '../../helpers/wait.js'

/** A table of `values` whose ready() resolves when `open()` is called. */
function fakeTable<V>(values: Record<string, V>) {
  const gate = deferred()
  const map = new Map(Object.entries(values))
  return {
    map,
    readyCalls: 0,
    open: () => gate.resolve(),
    fail: (e: Error) => gate.reject(e),
    ready() {
      this.readyCalls++
      return gate.promise
    },
    get: (k: unknown) => map.get(String(k)),
  }
}

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = []
  for await (const v of it) out.push(v)
  return out
}

describe('joinTable (twainmq/operators)', () => {
  it('waits for ready(), then hands each message on with the value of its key at that moment; unsettled', async () => {
    const table = fakeTable({ 0: 'zero', 2: 'two' })
    const source = new ManualSource<FakeMessage>()
    const msgs = fakeMessages(3)
    source.push(msgs[0] as FakeMessage)
    const it = pipe(source, joinTable(table))[Symbol.asyncIterator]()
    const first = it.next()
    await until(() => table.readyCalls === 1, 5000, 'ready() asked')
    let done = false
    void first.then(() => (done = true))
    await Promise.resolve()
    expect(done).toBe(false) // held until the table is ready
    table.open()
    const j0 = (await first).value as Joined<FakeMessage, string>
    expect([j0.message, j0.value, j0.key]).toEqual([msgs[0], 'zero', 0])
    table.map.set('1', 'one, set later') // the table moved on before message 1 was handed on
    source.push(msgs[1] as FakeMessage, msgs[2] as FakeMessage)
    source.end()
    const rest = [(await it.next()).value, (await it.next()).value] as Array<Joined<FakeMessage, string>>
    expect(rest.map((j) => j.value)).toEqual(['one, set later', 'two'])
    expect(msgs.every((m) => settlements(m) === 0)).toBe(true)
    expect(table.readyCalls).toBe(1)
  })

  it('key picks the table key; a left join gives undefined, an inner join acks and drops', async () => {
    const table = fakeTable({ a: 1 })
    table.open()
    const key = (m: FakeMessage) => (m.id === 0 ? 'a' : 'b')
    const left = await collect(pipe(fromArray(fakeMessages(2)), joinTable(table, { key })))
    expect(left.map((j) => j.value)).toEqual([1, undefined])
    const msgs = fakeMessages(2)
    const inner = await collect(pipe(fromArray(msgs), joinTable(table, { key, inner: true })))
    expect(inner.map((j) => j.message.id)).toEqual([0])
    expect([msgs[0]?.acks, msgs[1]?.acks]).toEqual([0, 1])
  })

  it('settling a Joined settles its message, so ack() and the other operators take it', async () => {
    const table = fakeTable({ 0: 'x' })
    table.open()
    const msgs = fakeMessages(2)
    const seen: unknown[] = []
    await collect(
      pipe(
        fromArray(msgs),
        joinTable(table),
        ack(async (j) => void seen.push(j.value)),
      ),
    )
    expect(seen).toEqual(['x', undefined])
    expect(msgs.map((m) => m.acks)).toEqual([1, 1])
    const j = new Joined(fakeMessages(1)[0] as FakeMessage, 'v')
    j.nack({ delayMs: 5 })
    j.term('why')
    expect([j.message.nacks, j.message.nackOptions, j.message.terms, j.message.termReasons]).toEqual([
      1,
      [{ delayMs: 5 }],
      1,
      ['why'],
    ])
  })

  it('a table that fails to get ready, or a key function that throws, nacks the message and ends with the error', async () => {
    const table = fakeTable({})
    const boom = new Error('table failed')
    table.fail(boom)
    const msgs = fakeMessages(2)
    await expect(collect(pipe(fromArray(msgs), joinTable(table)))).rejects.toBe(boom)
    expect(msgs[0]?.nacks).toBe(1)
    const ok = fakeTable({})
    ok.open()
    const bad = new Error('bad key')
    const more = fakeMessages(1)
    const thrower = () => {
      throw bad
    }
    await expect(collect(pipe(fromArray(more), joinTable(ok, { key: thrower })))).rejects.toBe(bad)
    expect(more[0]?.nacks).toBe(1)
  })

  it('return() while waiting for the table hands the message back unsettled', async () => {
    const table = fakeTable({})
    const source = new ManualSource<FakeMessage>()
    const [m] = fakeMessages(1) as [FakeMessage]
    let released = 0
    source.push(Object.assign(m, { release: () => void released++ }))
    const it = pipe(source, joinTable(table))[Symbol.asyncIterator]()
    const pending = it.next()
    await until(() => table.readyCalls === 1, 5000, 'ready() asked')
    await it.return?.()
    expect(await pending).toEqual({ done: true, value: undefined })
    expect([settlements(m), released]).toEqual([0, 1])
  })

  it('refuses bad arguments by name', () => {
    expect(() => joinTable({} as never)).toThrow(/joinTable\(\): the table must have ready\(\) and get\(key\)/)
    const t = fakeTable({})
    expect(() => joinTable(t, { key: 3 as never })).toThrow(/key must be a function of the message, got 3/)
    expect(() => joinTable(t, { inner: 'yes' as never })).toThrow(/inner must be a boolean, got yes/)
    expect(() => joinTableRx(t, { signal: 1 as never })).toThrow(InvalidArgumentError)
  })
})

describe('joinTableRx (twainmq/rx)', () => {
  it('subscribes to the source once the table is ready; left and inner joins', async () => {
    const table = fakeTable({ 0: 'zero' })
    let subscribed = false
    const msgs = fakeMessages(2)
    const source = rxFrom(
      (async function* () {
        subscribed = true
        yield* msgs
      })(),
    )
    const out = lastValueFrom(source.pipe(joinTableRx(table), toArray()))
    await until(() => table.readyCalls === 1, 5000, 'ready() asked')
    expect(subscribed).toBe(false)
    table.open()
    expect((await out).map((j) => [j.message.id, j.value])).toEqual([
      [0, 'zero'],
      [1, undefined],
    ])
    const inner = await lastValueFrom(rxFrom(fakeMessages(2)).pipe(joinTableRx(table, { inner: true }), toArray()))
    expect(inner.map((j) => j.message.id)).toEqual([0])
  })
})
