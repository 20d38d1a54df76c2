import { from } from 'ix/asynciterable'
import { filter, map } from 'ix/asynciterable/operators'
import { describe, expect, expectTypeOf, it } from 'vitest'
import type { GroupMessage } from '../../../src/index.js'
import * as operators from '../../../src/operators/index.js'
import {
  ack,
  batch,
  pipe,
  retry,
  type MessageBatch,
  type Operator,
  type RetryResult,
} from '../../../src/operators/index.js'
import { fakeMessages, fromArray, type FakeMessage } from './fakes.js'

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = []
  for await (const v of it) out.push(v)
  return out
}

/** An operator that tags each value, to see the order operators are applied in. */
const tag = (t: string): Operator<string, string> =>
  async function* (source) {
    for await (const v of source) yield `${v}${t}`
  }

describe('pipe()', () => {
  it('with no operators returns the source itself', () => {
    const src = fromArray([1])
    expect(pipe(src)).toBe(src)
  })

  it('applies operators left to right: pipe(src, f, g) is g(f(src))', async () => {
    expect(await collect(pipe(fromArray(['x']), tag('1'), tag('2'), tag('3')))).toEqual(['x123'])
    const ops = Array.from({ length: 8 }, (_, i) => tag(String(i)))
    expect(
      await collect(pipe(fromArray(['']), ops[0]!, ops[1]!, ops[2]!, ops[3]!, ops[4]!, ops[5]!, ops[6]!, ops[7]!)),
    ).toEqual(['01234567'])
    expect(await collect(pipe(fromArray(['']), ...ops, tag('8'), tag('9')))).toEqual(['0123456789'])
  })

  it('chains twainmq operators with IxJS operators', async () => {
    const msgs = fakeMessages(6)
    const out = await collect(
      pipe(
        fromArray(msgs),
        filter((m: FakeMessage) => m.id % 2 === 0),
        ack(),
        batch({ size: 2 }),
        map((b: MessageBatch<FakeMessage>) => b.map((m) => m.id)),
      ),
    )
    expect(out).toEqual([[0, 2], [4]])
    expect(msgs.map((m) => m.acks)).toEqual([1, 0, 1, 0, 1, 0])
  })

  it('IxJS from(source).pipe(...) works with several twainmq operators', async () => {
    const out = await collect(
      from(fromArray(fakeMessages(3))).pipe(
        ack<FakeMessage>(),
        retry<FakeMessage>(() => undefined, { attempts: 1 }),
      ),
    )
    expect(out.map((r) => r.ok)).toEqual([true, true, true])
  })

  it('infers message types through the chain', () => {
    const chain = (src: AsyncIterable<GroupMessage<number>>) =>
      pipe(
        src,
        ack(async (m) => m.value + 1, { concurrency: 2 }),
        retry(async (m, attempt) => m.value * attempt, { attempts: 2 }),
      )
    expectTypeOf(chain).returns.toEqualTypeOf<AsyncIterable<RetryResult<GroupMessage<number>>>>()
    const batches = (src: AsyncIterable<GroupMessage<string>>) => pipe(src, batch({ size: 10 }))
    expectTypeOf(batches).returns.toEqualTypeOf<AsyncIterable<MessageBatch<GroupMessage<string>>>>()
  })

  it('the barrel exports exactly the public operators', () => {
    expect(Object.keys(operators).sort()).toEqual(['Joined', 'ack', 'batch', 'filterAck', 'joinTable', 'pipe', 'retry'])
  })
})
