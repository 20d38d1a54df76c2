// Conformance: twainmq/prometheus over every backend — topics' offsets and groups' commits and lag
// in messages (exact) and in seconds (within 1 s of the records' timestamps), read from the store
// at each scrape; a store that cannot be read; registries shared with the application.
import { Registry, Counter } from 'prom-client'
import { afterEach, describe, expect, it } from 'vitest'
import { InvalidArgumentError, TwainError, type GroupMessage } from '../../src/index.js'
import { prometheusMetrics, type PrometheusMetrics } from '../../src/prometheus/index.js'
import { setPromLoader } from '../../src/prometheus/load.js'
import { setStoreReadTimeout } from '../../src/prometheus/store-metrics.js'
import { backendOf } from '../../src/facade/twain.js'
import { parseExposition, samplesOf, valueOf } from '../helpers/prom-text.js'
import { within } from '../helpers/wait.js'
import { backends, perTest } from './backends.js'

const made: PrometheusMetrics[] = []
afterEach(() => {
  for (const m of made.splice(0)) m.close()
  setPromLoader(undefined)
  setStoreReadTimeout(undefined)
})

async function take<T>(it: AsyncIterable<T>, n: number): Promise<T[]> {
  const out: T[] = []
  for await (const m of it) if (out.push(m) >= n) break
  return out
}

describe.each(backends())('Prometheus metrics on $name', (kind) => {
  kind.hooks()
  const ctx = perTest(kind)

  it("expose the partitions' offsets, the group's commits and its lag in messages (exact) and seconds (±1 s)", async () => {
    const { twain } = ctx
    await twain.createTopic('orders', { partitions: 2 })
    const p = twain.producer<string>('orders')
    const old = Date.now() - 42_000
    // Partition 0 gets keys 0 (6 records), partition 1 key 1 (3); stamped 42 s ago, 1 ms apart.
    const stamps: number[][] = [[], []]
    for (let i = 0; i < 9; i++) {
      const key = i < 6 ? 0 : 1
      const r = await p.send(key, `m${i}`, { timestamp: old + i })
      stamps[r.partition]?.push(old + i)
    }
    await p.close()
    const owner = [0, 1].find((x) => stamps[x]?.length === 6) as number
    const consumer = twain.consumer<string>('orders', { group: 'billing', from: 'start' })
    const got = await within(take<GroupMessage<string>>(consumer, 9), 20_000, '9 messages')
    // Ack the first 4 of the 6-record partition and none of the other.
    for (const m of got) if (m.partition === owner && m.offset < 4) m.ack()
    await consumer.commit()
    await consumer.close()

    const metrics = await prometheusMetrics(twain)
    made.push(metrics)
    const before = Date.now()
    const samples = parseExposition(await metrics.metrics())
    const after = Date.now()
    const other = 1 - owner
    const part = (x: number) => ({ topic: 'orders', partition: String(x) })
    const grp = (x: number) => ({ group: 'billing', ...part(x) })
    expect(valueOf(samples, 'twainmq_store_up')).toBe(1)
    expect(valueOf(samples, 'twainmq_topic_partitions', { topic: 'orders' })).toBe(2)
    expect(valueOf(samples, 'twainmq_topic_end_offset', part(owner))).toBe(6)
    expect(valueOf(samples, 'twainmq_topic_end_offset', part(other))).toBe(3)
    expect(valueOf(samples, 'twainmq_topic_messages_total', part(owner))).toBe(6)
    expect(valueOf(samples, 'twainmq_topic_start_offset', part(owner))).toBe(0)
    expect(valueOf(samples, 'twainmq_consumer_committed_offset', grp(owner))).toBe(4)
    expect(valueOf(samples, 'twainmq_consumer_committed_offset', grp(other))).toBe(0)
    expect(valueOf(samples, 'twainmq_consumer_lag_messages', grp(owner))).toBe(2)
    expect(valueOf(samples, 'twainmq_consumer_lag_messages', grp(other))).toBe(3)
    expect(valueOf(samples, 'twainmq_consumer_group_members', { group: 'billing' })).toBe(0)
    // The oldest uncommitted record: offset 4 of the owner partition, offset 0 of the other.
    const lagOwner = valueOf(samples, 'twainmq_consumer_lag_seconds', grp(owner))
    const lagOther = valueOf(samples, 'twainmq_consumer_lag_seconds', grp(other))
    const truth = (t: number) => [(before - t) / 1000 - 1, (after - t) / 1000 + 1] as const
    const [lo1, hi1] = truth(stamps[owner]?.[4] as number)
    const [lo2, hi2] = truth(stamps[other]?.[0] as number)
    expect(lagOwner).toBeGreaterThanOrEqual(lo1)
    expect(lagOwner).toBeLessThanOrEqual(hi1)
    expect(lagOther).toBeGreaterThanOrEqual(lo2)
    expect(lagOther).toBeLessThanOrEqual(hi2)
    // The same figures as describeGroup.
    const d = await twain.describeGroup('billing')
    for (const r of d.topics) expect(valueOf(samples, 'twainmq_consumer_lag_messages', grp(r.partition))).toBe(r.lag)
  })

  it('count a later append at the next scrape, and a caught-up group has lag 0 in messages and seconds', async () => {
    const { twain } = ctx
    await twain.createTopic('t')
    const p = twain.producer<string>('t')
    await p.send(0, 'a')
    const c = twain.consumer<string>('t', { group: 'g', from: 'start' })
    for (const m of await within(take<GroupMessage<string>>(c, 1), 20_000, '1 message')) m.ack()
    await c.commit()
    const metrics = await prometheusMetrics(twain)
    made.push(metrics)
    let s = parseExposition(await metrics.metrics())
    const labels = { group: 'g', topic: 't', partition: '0' }
    expect(valueOf(s, 'twainmq_consumer_lag_messages', labels)).toBe(0)
    expect(valueOf(s, 'twainmq_consumer_lag_seconds', labels)).toBe(0)
    expect(valueOf(s, 'twainmq_consumer_group_members', { group: 'g' })).toBe(1)
    await p.send(0, 'b')
    await p.close()
    s = parseExposition(await metrics.metrics())
    expect(valueOf(s, 'twainmq_topic_messages_total', { topic: 't', partition: '0' })).toBe(2)
    expect(valueOf(s, 'twainmq_consumer_lag_messages', labels)).toBe(1)
    await c.close()
  })

  // Shared groups exist on Redis only.
  if (kind.caps.shared)
    it('shared groups: delivered and unacknowledged messages as pending', async () => {
      const { twain } = ctx
      await twain.createTopic('jobs')
      const p = twain.producer<string>('jobs')
      for (let i = 0; i < 5; i++) await p.send(0, `j${i}`)
      await p.close()
      const c = twain.consumer<string>('jobs', { group: 'workers', mode: 'shared', from: 'start' })
      const got = await within(take<GroupMessage<string>>(c, 5), 20_000, '5 jobs')
      got[0]?.ack()
      got[1]?.ack()
      await c.commit()
      const metrics = await prometheusMetrics(twain)
      made.push(metrics)
      const s = parseExposition(await metrics.metrics())
      expect(valueOf(s, 'twainmq_consumer_pending_messages', { group: 'workers', topic: 'jobs', partition: '0' })).toBe(
        3,
      )
      for (const m of got.slice(2)) m.ack()
      await c.close()
    })

  it('a store that cannot be read: store_up 0, the error counted, no topic or group series', async () => {
    const twain = await ctx.open()
    await twain.createTopic('t')
    const metrics = await prometheusMetrics(twain)
    made.push(metrics)
    expect(valueOf(parseExposition(await metrics.metrics()), 'twainmq_store_up')).toBe(1)
    await twain.close()
    const s = parseExposition(await metrics.metrics())
    expect(valueOf(s, 'twainmq_store_up')).toBe(0)
    expect(valueOf(s, 'twainmq_store_scrape_errors_total')).toBe(1)
    expect(samplesOf(s, 'twainmq_topic_end_offset')).toEqual([])
  })
})

describe('prometheusMetrics() and registries', () => {
  const kind = backends()[0]!
  kind.hooks()
  const ctx = perTest(kind)

  it("shares the application's registry; one set per registry; close() takes only twainmq's out", async () => {
    const registry = new Registry()
    const mine = new Counter({ name: 'app_jobs_total', help: 'jobs', registers: [registry] })
    mine.inc(3)
    const metrics = await prometheusMetrics(ctx.twain, { registry })
    made.push(metrics)
    const text = await registry.metrics()
    expect(text).toContain('app_jobs_total 3')
    expect(text).toContain('twainmq_store_up 1')
    const again = prometheusMetrics(ctx.twain, { registry })
    await expect(again).rejects.toThrow(InvalidArgumentError)
    await expect(again).rejects.toThrow(/already holds twainmq's metrics/)
    // The refused second set left the first one whole.
    expect(await registry.metrics()).toContain('twainmq_gateway_live_readers')
    metrics.close()
    const left = await registry.metrics()
    expect(left).toContain('app_jobs_total 3')
    expect(left).not.toContain('twainmq_')
    made.push(await prometheusMetrics(ctx.twain, { registry }))
  })

  it('a read of the store that hangs gives store_up 0 after the read timeout; the next scrape reads again', async () => {
    const twain = await ctx.open()
    await twain.createTopic('t')
    const metrics = await prometheusMetrics(twain)
    made.push(metrics)
    setStoreReadTimeout(200)
    const store = backendOf(twain)
    const listTopics = store.listTopics.bind(store)
    let hang = true
    store.listTopics = () => (hang ? new Promise<string[]>(() => undefined) : listTopics())
    const stalled = parseExposition(await metrics.metrics())
    expect(valueOf(stalled, 'twainmq_store_up')).toBe(0)
    expect(valueOf(stalled, 'twainmq_store_scrape_errors_total')).toBe(1)
    hang = false
    const again = parseExposition(await metrics.metrics())
    expect(valueOf(again, 'twainmq_store_up')).toBe(1)
    expect(valueOf(again, 'twainmq_topic_end_offset', { topic: 't', partition: '0' })).toBe(0)
  })

  it('processMetrics on a registry that already has the process metrics is refused and leaves the registry as it was', async () => {
    const registry = new Registry()
    const { collectDefaultMetrics } = await import('prom-client')
    collectDefaultMetrics({ register: registry })
    const before = (await registry.getMetricsAsJSON()).map((m) => m.name).sort()
    await expect(prometheusMetrics(ctx.twain, { registry, processMetrics: true })).rejects.toThrow(
      /already holds prom-client's process metrics/,
    )
    expect((await registry.getMetricsAsJSON()).map((m) => m.name).sort()).toEqual(before)
    // Without processMetrics it works on that registry; close() then leaves the application's as they were.
    const m = await prometheusMetrics(ctx.twain, { registry })
    m.close()
    expect((await registry.getMetricsAsJSON()).map((x) => x.name).sort()).toEqual(before)
    // With processMetrics on a fresh registry, close() takes the process metrics out too.
    const fresh = new Registry()
    ;(await prometheusMetrics(ctx.twain, { registry: fresh, processMetrics: true })).close()
    expect(await fresh.getMetricsAsJSON()).toEqual([])
  })

  it('refuses bad options naming them, and says how to install prom-client when it is missing', async () => {
    await expect(prometheusMetrics(ctx.twain, { processMetrics: 'yes' as never })).rejects.toThrow(
      /processMetrics must be a boolean, got "yes"/,
    )
    await expect(prometheusMetrics(ctx.twain, { registy: 1 } as never)).rejects.toThrow(/registy/)
    await expect(prometheusMetrics(ctx.twain, { registry: {} as never })).rejects.toThrow(/prom-client Registry/)
    setPromLoader(() => Promise.resolve(undefined))
    const e = await prometheusMetrics(ctx.twain).catch((x: unknown) => x)
    expect(e).toBeInstanceOf(TwainError)
    expect((e as TwainError).code).toBe('ERR_MISSING_PACKAGE')
    expect((e as Error).message).toMatch(/npm install prom-client/)
  })

  it('processMetrics adds the process figures; the exposition has no metric name promtool would refuse', async () => {
    const registry = new Registry()
    made.push(await prometheusMetrics(ctx.twain, { registry, processMetrics: true }))
    const text = await registry.metrics()
    const names = new Set(parseExposition(text).map((s) => s.name))
    expect(names.has('process_cpu_user_seconds_total')).toBe(true)
    expect(names.has('nodejs_eventloop_lag_seconds')).toBe(true)
    expect(names.has('nodejs_active_handles')).toBe(true)
    // Prometheus keeps `_total` for counters: prom-client's three gauges named so are left out.
    const types = [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)]
    expect(types.length).toBeGreaterThan(20)
    expect(types.filter(([, n, t]) => n?.endsWith('_total') && t !== 'counter').map((x) => x[1])).toEqual([])
  })
})
