import type { Counter, Gauge, Metric } from 'prom-client'
import type { Backend } from '../backends/backend.js'
import {
  readOverview,
  type GroupPartitionOverview,
  type PartitionOverview,
  type StoreOverview,
} from '../gateway/overview/overview.js'
import type { Prom } from './load.js'

/**
 * How long a scrape waits for its read of the store (Prometheus's own scrape timeout is 10 s by
 * default): a read that hangs (a Redis that stopped answering) gives `twainmq_store_up 0` then,
 * and the next scrape reads again rather than waiting on it.
 */
let readTimeoutMs = 10_000

/** @internal For tests: how long a scrape waits for the store (`undefined`: back to 10 s). */
export function setStoreReadTimeout(ms: number | undefined): void {
  readTimeoutMs = ms ?? 10_000
}

/** `p`, or a rejection after `ms`. */
function readWithin<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the store did not answer within ${ms} ms`)), ms)
    timer.unref?.()
  })
  p.catch(() => undefined) // a read given up on may still fail later
  return Promise.race([p, late]).finally(() => clearTimeout(timer))
}

/**
 * The store's figures, read at each scrape (one read of the store shared by every metric of the
 * scrape): topics' offsets, groups' commits, lag in messages and seconds, and whether the read
 * worked. A failed read leaves the topic and group series out and `twainmq_store_up` at 0.
 */
export class StoreMetrics {
  private readonly metrics: Array<Gauge | Counter>
  private inFlight: Promise<StoreOverview | undefined> | undefined

  constructor(prom: Prom, register: (metric: Metric) => void, store: Backend) {
    const scrapeErrors: Counter = new prom.Counter({
      name: 'twainmq_store_scrape_errors_total',
      help: 'Reads of the store for a scrape that failed (the scrape then has no topic or group series).',
      registers: [],
      // Counted by the read of this very scrape too.
      collect: async () => void (await snapshot()),
    })
    let lastSeconds = 0
    let lastUp = 0
    // One read of the store per scrape: every collect of a scrape starts in the same tick and
    // awaits the read in flight; the next scrape starts another.
    const snapshot = (): Promise<StoreOverview | undefined> => {
      if (this.inFlight !== undefined) return this.inFlight
      const started = performance.now()
      const p = readWithin(readOverview(store), readTimeoutMs).then(
        (o) => {
          lastUp = 1
          return o
        },
        () => {
          lastUp = 0
          scrapeErrors.inc()
          return undefined
        },
      )
      this.inFlight = p.finally(() => {
        lastSeconds = (performance.now() - started) / 1000
        this.inFlight = undefined
      })
      return this.inFlight
    }
    const gauge = (
      name: string,
      help: string,
      labelNames: string[],
      fill: (g: Gauge, o: StoreOverview) => void,
    ): Gauge => {
      const g: Gauge = new prom.Gauge({
        name,
        help,
        labelNames,
        registers: [],
        collect: async () => {
          const o = await snapshot()
          g.reset()
          if (o !== undefined) fill(g, o)
        },
      })
      return g
    }
    /** A gauge of the read itself, set also when the read failed. */
    const status = (name: string, help: string, value: () => number): Gauge => {
      const g: Gauge = new prom.Gauge({
        name,
        help,
        registers: [],
        collect: async () => {
          await snapshot()
          g.set(value())
        },
      })
      return g
    }
    const partitionsOf = (o: StoreOverview) => o.topics.flatMap((t) => t.partitions.map((p) => ({ t, p })))
    /** A gauge per partition of every topic. */
    const partitionGauge = (name: string, help: string, value: (p: PartitionOverview) => number): Gauge =>
      gauge(name, help, ['topic', 'partition'], (g, o) => {
        for (const { t, p } of partitionsOf(o)) g.set({ topic: t.topic, partition: String(p.partition) }, value(p))
      })
    /** A gauge per group and partition it consumes (none where `value` is undefined). */
    const groupGauge = (name: string, help: string, value: (r: GroupPartitionOverview) => number | undefined): Gauge =>
      gauge(name, help, ['group', 'topic', 'partition'], (g, o) => {
        for (const gr of o.groups)
          for (const r of gr.partitions) {
            const v = value(r)
            if (v !== undefined) g.set({ group: gr.group, topic: r.topic, partition: String(r.partition) }, v)
          }
      })
    const messages: Counter = new prom.Counter({
      name: 'twainmq_topic_messages_total',
      help: 'Messages ever appended to the partition (its end offset): rate() of it is the write rate.',
      labelNames: ['topic', 'partition'],
      registers: [],
      collect: async () => {
        const o = await snapshot()
        messages.reset()
        if (o !== undefined)
          for (const { t, p } of partitionsOf(o))
            messages.inc({ topic: t.topic, partition: String(p.partition) }, p.end)
      },
    })
    this.metrics = [
      status(
        'twainmq_store_up',
        'Whether the last read of the store for a scrape worked (1) or failed (0).',
        () => lastUp,
      ),
      scrapeErrors,
      status(
        'twainmq_store_scrape_duration_seconds',
        'How long the last read of the store for a scrape took.',
        () => lastSeconds,
      ),
      gauge('twainmq_topic_partitions', 'Partitions of the topic.', ['topic'], (g, o) => {
        for (const t of o.topics) g.set({ topic: t.topic }, t.partitionCount)
      }),
      partitionGauge('twainmq_topic_start_offset', "The partition's first retained offset.", (p) => p.start),
      partitionGauge('twainmq_topic_end_offset', "The partition's next offset to be written.", (p) => p.end),
      messages,
      groupGauge(
        'twainmq_consumer_committed_offset',
        "The group's committed offset on the partition (the next one it reads).",
        (r) => r.committed,
      ),
      groupGauge(
        'twainmq_consumer_lag_messages',
        'Messages of the partition the group has not committed (end offset minus committed offset).',
        (r) => r.lag,
      ),
      groupGauge(
        'twainmq_consumer_lag_seconds',
        'Age of the oldest message of the partition the group has not committed (0 when caught up).',
        (r) => r.lagMs / 1000,
      ),
      groupGauge(
        'twainmq_consumer_pending_messages',
        'Shared groups: messages delivered and not yet acknowledged on the partition.',
        (r) => r.pending,
      ),
      gauge('twainmq_consumer_group_members', 'Live members of the group.', ['group'], (g, o) => {
        for (const gr of o.groups) g.set({ group: gr.group }, gr.members.length)
      }),
    ]
    for (const m of this.metrics) register(m)
  }
}
