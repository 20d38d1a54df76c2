// A real Prometheus (Debian's package) scraping `twainmq serve --metrics` in another process, over
// a directory and over a private redis-server: its query API returns the topics' end offsets, the
// group's lag in messages (exact) and in seconds (within 1 s of the records' timestamps at the
// scrape's time), and the gateway's requests; `promtool check metrics` accepts the exposition.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { open, type GroupMessage, type Twain } from '../../../src/index.js'
import { finished, startCli, waitFor, type CliChild } from '../../helpers/cli.js'
import { PrometheusServer, promtoolCheck, type PromSeries } from '../../helpers/prometheus-server.js'
import { RedisServer } from '../../helpers/redis-server.js'
import { killChildren } from '../../helpers/spawn.js'
import { tempDir } from '../../helpers/tmp.js'
import { until, within } from '../../helpers/wait.js'

const LINE =
  /^twainmq gateway listening on (http:\/\/127\.0\.0\.1:([0-9]+)\/v1\/stream\/) \(dashboard: http:\/\/127\.0\.0\.1:\2\/, metrics: (http:\/\/127\.0\.0\.1:\2\/metrics)\)\n$/
const children: CliChild[] = []
let prometheus: PrometheusServer | undefined

afterEach(async () => {
  await prometheus?.stop()
  prometheus = undefined
  await killChildren(children)
})

async function take<T>(it: AsyncIterable<T>, n: number): Promise<T[]> {
  const out: T[] = []
  for await (const m of it) if (out.push(m) >= n) break
  return out
}

/** The one series `promql` returns once it has one, waiting for scrapes. */
async function series(p: PrometheusServer, promql: string, accept: (s: PromSeries) => boolean): Promise<PromSeries> {
  let last: PromSeries[] = []
  try {
    await until(
      async () => {
        last = await p.query(promql)
        return last.length === 1 && accept(last[0] as PromSeries)
      },
      60_000,
      promql,
    )
  } catch (e) {
    throw new Error(
      `${(e as Error).message}; last answer ${JSON.stringify(last)}; targets ${JSON.stringify(await p.targets())}; ${p.output}`,
    )
  }
  return last[0] as PromSeries
}

describe.each(['file', 'redis'] as const)('Prometheus scraping twainmq serve --metrics over %s', (kind) => {
  let redis: RedisServer | undefined
  let target: string
  let cleanup = () => undefined as void
  beforeAll(async () => {
    if (kind === 'redis') {
      redis = await RedisServer.start()
      target = redis.url
    } else {
      const tmp = tempDir('twainmq-prom-serve-')
      target = tmp.dir
      cleanup = tmp.remove
    }
  })
  afterAll(async () => {
    await redis?.destroy()
    cleanup()
  })

  it('returns the lag in messages and seconds, end offsets and requests; promtool accepts the exposition', async () => {
    let twain: Twain | undefined
    try {
      twain = await open(target)
      await twain.createTopic('orders')
      const p = twain.producer<string>('orders')
      const old = Date.now() - 90_000
      for (let i = 0; i < 7; i++) await p.send(0, `o${i}`, { timestamp: old + i * 1000 })
      await p.close()
      const consumer = twain.consumer<string>('orders', { group: 'billing', from: 'start' })
      const got = await within(take<GroupMessage<string>>(consumer, 7), 20_000, '7 messages')
      for (const m of got) if (m.offset < 3) m.ack()
      await consumer.commit()
      await consumer.close()

      const child = startCli(['--url', target, 'serve', '--port', '0', '--metrics'])
      children.push(child)
      await waitFor('serve to print its URL', () => LINE.test(child.out.stdout) || child.exitCode !== null, 30_000)
      const m = LINE.exec(child.out.stdout)
      if (!m) throw new Error(`serve did not start: ${child.out.stderr}`)
      const streams = m[1] as string
      const metricsUrl = m[3] as string
      expect((await fetch(`${streams}orders?offset=-1`)).status).toBe(200)

      const exposition = await (await fetch(metricsUrl)).text()
      const lint = promtoolCheck(exposition)
      expect(lint.output).toBe('')
      expect(lint.code).toBe(0)

      prometheus = await PrometheusServer.start([`127.0.0.1:${m[2]}`])
      const up = await series(prometheus, 'up{job="twainmq"}', (s) => s.value[1] === '1')
      expect(up.metric.instance).toBe(`127.0.0.1:${m[2]}`)
      const lag = await series(
        prometheus,
        'twainmq_consumer_lag_messages{group="billing",topic="orders",partition="0"}',
        () => true,
      )
      expect(Number(lag.value[1])).toBe(4)
      // The oldest record not committed is offset 3, stamped old + 3 s. The truth is its age at the
      // scrape, whose time timestamp() gives (the query's own time can be later, after a slow
      // scrape); one query, so both come from the same sample.
      const lagSeconds = 'twainmq_consumer_lag_seconds{group="billing",partition="0"}'
      const stamped = (old + 3000) / 1000
      const off = await series(prometheus, `${lagSeconds} - (timestamp(${lagSeconds}) - ${stamped})`, () => true)
      expect(Math.abs(Number(off.value[1]))).toBeLessThanOrEqual(1)
      const seconds = await series(prometheus, lagSeconds, () => true)
      expect(Number(seconds.value[1])).toBeGreaterThan(80)
      const end = await series(prometheus, 'twainmq_topic_end_offset{topic="orders"}', () => true)
      expect(Number(end.value[1])).toBe(7)
      const gets = await series(
        prometheus,
        'sum(twainmq_gateway_requests_total{route="stream",method="GET",status="200"})',
        () => true,
      )
      expect(Number(gets.value[1])).toBe(1)
      const cpu = await series(prometheus, 'process_cpu_seconds_total{job="twainmq"}', () => true)
      expect(Number(cpu.value[1])).toBeGreaterThan(0)

      // Committing the rest brings the lag to 0 at a later scrape.
      const again = twain.consumer<string>('orders', { group: 'billing', from: 'start' })
      for (const x of await within(take<GroupMessage<string>>(again, 4), 20_000, '4 messages')) x.ack()
      await again.commit()
      await again.close()
      await series(
        prometheus,
        'twainmq_consumer_lag_messages{group="billing",topic="orders",partition="0"}',
        (s) => s.value[1] === '0',
      )
      const stopped = finished(child)
      child.kill('SIGTERM')
      expect((await stopped).code).toBe(0)
    } finally {
      await twain?.close()
    }
  }, 120_000)
})
