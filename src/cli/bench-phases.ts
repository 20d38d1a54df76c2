import { randomBytes } from 'node:crypto'
import type { Twain } from '../index.js'

/** What `twainmq bench` measures in each phase. */
export interface BenchPlan {
  messages: number
  /** Value size in bytes (ASCII). */
  size: number
  partitions: number
  /** Messages sent one at a time for the tail latency phase. */
  tailMessages: number
}

/** One row of the result table. */
export interface PhaseResult {
  phase: 'produce' | 'read' | 'consume+ack' | 'tail latency'
  messages: number
  seconds: number
  /** Messages per second. */
  rate: number
  /** Value MB per second (produce and read). */
  mbPerSec?: number
  p50Ms?: number
  p99Ms?: number
  /** The slowest delivery (tail latency): a stall cannot hide behind a percentile. */
  maxMs?: number
}

/** Progress of a running phase: `start` once with the total, `tick` with the count done. */
export interface Progress {
  start(phase: string, total: number): void
  tick(done: number): void
  stop(): void
}

const SEND_CHUNK = 1000

const result = (phase: PhaseResult['phase'], messages: number, ms: number, bytes?: number): PhaseResult => ({
  phase,
  messages,
  seconds: ms / 1000,
  rate: messages / (ms / 1000),
  ...(bytes === undefined ? {} : { mbPerSec: bytes / 1e6 / (ms / 1000) }),
})

/** Send `plan.messages` values of `plan.size` bytes in batches of 1,000 (keys spread over the partitions). */
export async function producePhase(
  twain: Twain,
  topic: string,
  plan: BenchPlan,
  progress: Progress,
): Promise<PhaseResult> {
  const value = randomBytes(Math.ceil(plan.size / 2))
    .toString('hex')
    .slice(0, plan.size)
  const producer = twain.producer<string>(topic)
  progress.start('produce', plan.messages)
  const t0 = performance.now()
  for (let i = 0; i < plan.messages; i += SEND_CHUNK) {
    const items = []
    for (let k = i; k < Math.min(plan.messages, i + SEND_CHUNK); k++) items.push({ key: k, value })
    await producer.sendBatch(items)
    progress.tick(Math.min(plan.messages, i + SEND_CHUNK))
  }
  const ms = performance.now() - t0
  progress.stop()
  await producer.close()
  return result('produce', plan.messages, ms, plan.messages * plan.size)
}

/** Read the whole topic back with `history`. */
export async function readPhase(
  twain: Twain,
  topic: string,
  plan: BenchPlan,
  progress: Progress,
): Promise<PhaseResult> {
  progress.start('read', plan.messages)
  const t0 = performance.now()
  let n = 0
  let bytes = 0
  for await (const m of twain.history<string>(topic)) {
    bytes += m.value.length
    if (++n % 4096 === 0) progress.tick(n)
  }
  const ms = performance.now() - t0
  progress.stop()
  if (n !== plan.messages) throw new Error(`read back ${n} of ${plan.messages} messages`)
  return result('read', n, ms, bytes)
}

/** Consume every message with a fresh consumer group, acking each; the group is deleted after. */
export async function consumePhase(
  twain: Twain,
  topic: string,
  plan: BenchPlan,
  progress: Progress,
): Promise<PhaseResult> {
  const group = `bench-${randomBytes(4).toString('hex')}`
  const consumer = twain.consumer<string>(topic, { group, from: 'start' })
  progress.start('consume+ack', plan.messages)
  const t0 = performance.now()
  let n = 0
  try {
    for await (const m of consumer) {
      m.ack()
      if (++n % 4096 === 0) progress.tick(n)
      if (n === plan.messages) break
    }
  } finally {
    await consumer.close()
    progress.stop()
  }
  const ms = performance.now() - t0
  await twain.deleteGroup(group)
  return result('consume+ack', n, ms)
}

/** Send one message at a time and time it until a live tail delivers it: p50, p99 and the slowest. */
export async function tailPhase(
  twain: Twain,
  topic: string,
  plan: BenchPlan,
  progress: Progress,
): Promise<PhaseResult> {
  const producer = twain.producer<string>(topic)
  const tail = twain.tail<string>(topic, { from: 'end' })
  const it = tail[Symbol.asyncIterator]()
  const latencies: number[] = []
  progress.start('tail latency', plan.tailMessages)
  const t0 = performance.now()
  try {
    for (let i = 0; i < plan.tailMessages; i++) {
      const sent = performance.now()
      const next = it.next()
      await producer.send(i, `tail-${i}`)
      const got = await next
      if (got.done) throw new Error('the tail ended')
      latencies.push(performance.now() - sent)
      if (i % 50 === 0) progress.tick(i + 1)
    }
  } finally {
    progress.stop()
    await it.return?.()
    await producer.close()
  }
  const ms = performance.now() - t0
  latencies.sort((a, b) => a - b)
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] as number
  return {
    ...result('tail latency', latencies.length, ms),
    p50Ms: at(0.5),
    p99Ms: at(0.99),
    maxMs: latencies[latencies.length - 1] as number,
  }
}
