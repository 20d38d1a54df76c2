// Conformance: filtering a group's messages with filterAck never stalls the group — what it drops is
// acked, so a small maxInFlight keeps flowing and everything is committed (both backends).
import { from as ixFrom } from 'ix/asynciterable'
import { from as rxFrom } from 'rxjs'
import { describe, expect, it } from 'vitest'
import type { GroupMessage, Twain } from '../../src/index.js'
import { ack, filterAck, pipe } from '../../src/operators/index.js'
import { ackRx, filterAckRx } from '../../src/operators/rx/index.js'
import { until } from '../helpers/spawn.js'
import { backends, perTest } from './backends.js'

const N = 40
const FAST = { maxInFlight: 4, commitIntervalMs: 50, sessionTimeoutMs: 3000, heartbeatIntervalMs: 300 }

async function fill(twain: Twain, topic: string): Promise<void> {
  await twain.createTopic(topic, { partitions: 2 })
  await twain.producer<number>(topic).sendBatch(Array.from({ length: N }, (_, i) => ({ key: i, value: i })))
}

/**
 * Iterate `it` in the background until every message is committed (lag 0 everywhere); then end the
 * iteration and return what it emitted. A stalled group times out.
 */
async function drain<T>(twain: Twain, group: string, it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = []
  const ctrl = new AbortController()
  const loop = (async () => {
    const iterator = it[Symbol.asyncIterator]()
    ctrl.signal.addEventListener('abort', () => void iterator.return?.(), { once: true })
    for (;;) {
      const r = await iterator.next()
      if (r.done) return
      out.push(r.value)
    }
  })()
  try {
    await expectAllCommitted(twain, group)
  } finally {
    ctrl.abort()
    await loop
  }
  return out
}

async function expectAllCommitted(twain: Twain, group: string): Promise<void> {
  await until(
    async () => (await twain.describeGroup(group).catch(() => undefined))?.topics.every((t) => t.lag === 0) ?? false,
    10_000,
    'lag 0 on every partition',
  )
  const rows = (await twain.describeGroup(group)).topics
  expect(rows.reduce((n, t) => n + t.committed, 0)).toBe(N)
}

describe.each(backends())('filterAck on $name', (kind) => {
  kind.hooks()
  const ctx = perTest(kind)
  const even = (m: GroupMessage<number>) => m.value % 2 === 0

  it('pipe(consumer, filterAck(p), ack()) with maxInFlight 4 passes every kept message and commits all of them', async () => {
    await fill(ctx.twain, 't')
    const consumer = ctx.twain.consumer<number>('t', { group: 'g', from: 'start', ...FAST })
    const kept = await drain(ctx.twain, 'g', pipe(consumer, filterAck(even), ack()))
    expect(kept.map((m) => m.value).sort((a, b) => a - b)).toEqual(Array.from({ length: N / 2 }, (_, i) => 2 * i))
  })

  it('IxJS from(consumer).pipe(filterAck(p), ack(handler)) does the same', async () => {
    await fill(ctx.twain, 't')
    const consumer = ctx.twain.consumer<number>('t', { group: 'g', from: 'start', ...FAST })
    const seen: number[] = []
    const kept = await drain(
      ctx.twain,
      'g',
      ixFrom(consumer).pipe(
        filterAck(even),
        ack((m) => void seen.push(m.value)),
      ),
    )
    expect(kept).toHaveLength(N / 2)
    expect(seen.sort((a, b) => a - b)).toEqual(kept.map((m) => m.value).sort((a, b) => a - b))
  })

  it('RxJS from(consumer).pipe(filterAckRx(p), ackRx()) does the same', async () => {
    await fill(ctx.twain, 't')
    const consumer = ctx.twain.consumer<number>('t', { group: 'g', from: 'start', ...FAST })
    const kept: number[] = []
    const sub = rxFrom(consumer)
      .pipe(filterAckRx(even), ackRx())
      .subscribe((m) => kept.push(m.value))
    try {
      await expectAllCommitted(ctx.twain, 'g')
    } finally {
      sub.unsubscribe()
    }
    expect(kept.sort((a, b) => a - b)).toEqual(Array.from({ length: N / 2 }, (_, i) => 2 * i))
  })
})
