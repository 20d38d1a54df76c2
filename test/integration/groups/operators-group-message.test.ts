// The operators over a real consumer group (file backend): GroupMessage is a Settleable, acks
// reach the commit, terms reach the dead-letter topic.
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { from as rxFrom, lastValueFrom, take, toArray } from 'rxjs'
import { open, type Twain } from '../../../src/index.js'
import { ack, batch, pipe, retry } from '../../../src/operators/index.js'
import { batchRx } from '../../../src/operators/rx/index.js'
import { makeTmp, rmTmp } from '../../unit/helpers.js'
import { sleep, until } from '../../helpers/wait.js'

const FAST = { sessionTimeoutMs: 2000, heartbeatIntervalMs: 200, commitIntervalMs: 50 }

describe('operators over consumer groups', () => {
  let dir: string
  let twain: Twain

  beforeEach(async () => {
    dir = makeTmp()
    twain = await open(dir)
    await twain.createTopic('jobs', { partitions: 2, keyType: 'string' })
    await twain
      .producer<string>('jobs')
      .sendBatch(Array.from({ length: 20 }, (_, i) => ({ key: `k${i % 4}`, value: `job-${i}` })))
  })
  afterEach(async () => {
    await twain.close()
    rmTmp(dir)
  })

  const committed = async (group: string) =>
    (await twain.describeGroup(group)).topics.filter((t) => t.topic === 'jobs').reduce((n, t) => n + t.committed, 0)

  it('ack(handler, { concurrency }) handles every message once, keeps per-key order, and the acks are committed', async () => {
    const consumer = twain.consumer<string>('jobs', { group: 'g-ack', ...FAST })
    const handled = new Map<string, string[]>()
    let n = 0
    for await (const m of pipe(
      consumer,
      ack(
        async (m) => {
          await sleep(Math.random() * 3)
          handled.set(String(m.key), [...(handled.get(String(m.key)) ?? []), m.value])
        },
        { concurrency: 4 },
      ),
    )) {
      expect(handled.get(String(m.key))).toContain(m.value) // emitted only after its handler ran
      if (++n === 20) break
    }
    for (const values of handled.values()) {
      const ids = values.map((v) => Number(v.slice(4)))
      expect(ids).toEqual([...ids].sort((a, b) => a - b))
    }
    expect([...handled.values()].flat()).toHaveLength(20)
    await consumer.close()
    expect(await committed('g-ack')).toBe(20)
  })

  it('retry terms a failing message into the dead-letter topic with the error as reason', async () => {
    const consumer = twain.consumer<string>('jobs', { group: 'g-retry', deadLetter: 'jobs-dlq', ...FAST })
    const results = []
    for await (const r of pipe(
      consumer,
      retry(
        (m) => {
          if (m.value === 'job-7') throw new Error('cannot do job 7')
        },
        { attempts: 2, backoff: { initialMs: 1, jitter: 0 } },
      ),
    )) {
      results.push(r)
      if (results.length === 20) break
    }
    expect(results.filter((r) => !r.ok).map((r) => [r.message.value, r.attempts])).toEqual([['job-7', 2]])
    await consumer.close()
    expect(await committed('g-retry')).toBe(20)
    await until(async () => (await twain.length('jobs-dlq').catch(() => 0)) === 1, 3000, 'dead letter written')
    const [dead] = await lastValueFrom(rxFrom(twain.history<string>('jobs-dlq')).pipe(take(1), toArray()))
    expect(dead!.value).toBe('job-7')
    expect(dead!.headers['x-dead-letter-reason']).toBe('cannot do job 7')
  })

  it('batch and batchRx group consumer messages; batch.ack() commits them', async () => {
    const consumer = twain.consumer<string>('jobs', { group: 'g-batch', ...FAST })
    let seen = 0
    for await (const b of pipe(consumer, batch({ size: 8, maxWaitMs: 30 }))) {
      expect(b.length).toBeGreaterThanOrEqual(1)
      expect(b.length).toBeLessThanOrEqual(8)
      b.ack()
      seen += b.length
      if (seen === 20) break
    }
    await consumer.close()
    expect(await committed('g-batch')).toBe(20)

    const c2 = twain.consumer<string>('jobs', { group: 'g-batch-rx', ...FAST })
    const batches = await lastValueFrom(rxFrom(c2).pipe(batchRx({ size: 20, maxWaitMs: 200 }), take(1), toArray()))
    expect(batches[0]!.length).toBeGreaterThan(0)
    batches[0]!.ack()
    await c2.close()
    expect(await committed('g-batch-rx')).toBe(batches[0]!.length)
  })
})
