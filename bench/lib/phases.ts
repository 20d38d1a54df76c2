/**
 * twainmq throughput phases shared by the redis, peers and scale suites: sendBatch and
 * Promise.all(send) in chunks of 1000, and a full `history` read. Each prints its result line and
 * returns a `Throughput`; any backend (a file root or a Redis URL).
 */
import type { Twain } from '../../src/index.js'
import { progress } from './progress.js'
import { log } from './report.js'
import { MB, fmtInt, fmtNum } from './stats.js'

export const CHUNK = 1000

export interface Throughput {
  label: string
  messages: number
  seconds: number
  payloadBytes: number
}

export const rate = (t: Throughput): number => t.messages / t.seconds

export function phaseDone(t: Throughput): void {
  log(
    `  ${t.label.padEnd(44)} ${fmtNum(t.seconds, 2).padStart(7)} s  ${fmtInt(rate(t)).padStart(10)} msgs/s  ${fmtNum(t.payloadBytes / MB / t.seconds, 1).padStart(6)} MB/s`,
  )
}

/** Time `body`, with a progress bar (on a TTY) and a result line. */
export async function timed(
  label: string,
  n: number,
  size: number,
  tag: string,
  body: (tick: (done: number) => void) => Promise<void>,
): Promise<Throughput> {
  const bar = progress(`${tag} ${label}`, n)
  const t0 = performance.now()
  await body((d) => bar.update(d))
  const seconds = (performance.now() - t0) / 1000
  bar.stop()
  const t = { label, messages: n, seconds, payloadBytes: n * size }
  phaseDone(t)
  return t
}

/** `producer.sendBatch` of 1000 items at a time, each awaited. */
export async function produceBatch(
  twain: Twain,
  topic: string,
  n: number,
  value: string,
  tag: string,
  label = 'a. producer.sendBatch × 1000',
): Promise<Throughput> {
  const p = twain.producer<string>(topic)
  const t = await timed(label, n, value.length, tag, async (tick) => {
    for (let i = 0; i < n; i += CHUNK) {
      const m = Math.min(CHUNK, n - i)
      const items = new Array<{ key: number; value: string }>(m)
      for (let j = 0; j < m; j++) items[j] = { key: (i + j) % 65536, value }
      await p.sendBatch(items)
      tick(i)
    }
  })
  await p.close()
  return t
}

/** `Promise.all` of 1000 `producer.send` calls at a time. */
export async function produceAll(
  twain: Twain,
  topic: string,
  n: number,
  value: string,
  tag: string,
  label = 'b. Promise.all(1000 × producer.send)',
): Promise<Throughput> {
  const p = twain.producer<string>(topic)
  const t = await timed(label, n, value.length, tag, async (tick) => {
    const sends = new Array<Promise<unknown>>(CHUNK)
    for (let i = 0; i < n; i += CHUNK) {
      const m = Math.min(CHUNK, n - i)
      sends.length = m
      for (let j = 0; j < m; j++) sends[j] = p.send((i + j) % 65536, value)
      await Promise.all(sends)
      tick(i)
    }
  })
  await p.close()
  return t
}

/** `for await` over `twain.history(topic)`, touching each value; fails unless it saw `n` messages. */
export async function readHistory(
  twain: Twain,
  topic: string,
  n: number,
  size: number,
  tag: string,
  label = 'c. for await (twain.history(topic))',
): Promise<Throughput> {
  let count = 0
  const t = await timed(label, n, size, tag, async (tick) => {
    let bytes = 0
    for await (const m of twain.history<string>(topic)) {
      bytes += m.value.length
      if ((++count & 0xffff) === 0) tick(count)
    }
    if (bytes < 0) log('unreachable')
  })
  if (count !== n) throw new Error(`history read ${count} messages, expected ${n}`)
  return t
}

/**
 * One group member (partitioned or shared) consumes and acks `n` messages, then commits. Timed from
 * the first message delivered (the join is not counted) until the commit of the last ack returned.
 */
export async function consumeGroup(
  twain: Twain,
  topic: string,
  group: string,
  mode: 'partitioned' | 'shared',
  n: number,
  tag: string,
  label: string,
): Promise<Throughput> {
  const bar = progress(`${tag} ${label}`, n)
  const c = twain.consumer<string>(topic, { group, mode, name: `${group}-1` })
  let got = 0
  let bytes = 0
  let t0 = 0
  for await (const m of c) {
    if (got === 0) t0 = performance.now()
    bytes += m.value.length
    m.ack()
    if ((++got & 0xffff) === 0) bar.update(got)
    if (got >= n) break
  }
  await c.commit()
  const seconds = (performance.now() - t0) / 1000
  bar.stop()
  await c.close()
  if (bytes < 0) log('unreachable')
  const t = { label, messages: got, seconds, payloadBytes: bytes }
  phaseDone(t)
  return t
}
