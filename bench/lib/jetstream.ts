/**
 * NATS JetStream phases of the peers bench (nats.js 2.29, its `jetstream()`/`jetstreamManager()`
 * API), each the counterpart of a twainmq phase in bench/lib/phases.ts:
 *
 *   produce  windowed async publish: 1000 `js.publish` in flight, awaited together (each resolves with its PubAck)
 *   read     an ordered consumer (`js.consumers.get(stream)`) from the first message, `consume()`
 *   consume  a durable pull consumer, AckPolicy.Explicit (ack each) or AckPolicy.All (ack every
 *            1000th and the last); timed from the first message until the server confirmed the last ack
 *   tail     a child publishes (awaited) every ~3 ms; here an ordered consumer from DeliverPolicy.New
 */
import {
  AckPolicy,
  DeliverPolicy,
  StorageType,
  StringCodec,
  connect,
  type JetStreamClient,
  type JetStreamManager,
} from 'nats'
import { spawnBenchChild } from './child.js'
import { progress } from './progress.js'
import { CHUNK, phaseDone, timed, type Throughput } from './phases.js'
import { log } from './report.js'
import { machineNow } from './stats.js'
import { TAIL_INTERVAL_MS, TAIL_WARMUP, tailAcross, type TailResult } from './tail.js'

const sc = StringCodec()

export async function createStream(jsm: JetStreamManager, name: string): Promise<string> {
  const subject = `${name}.m`
  await jsm.streams.add({ name, subjects: [subject], storage: StorageType.File })
  return subject
}

export async function jsProduce(
  js: JetStreamClient,
  subject: string,
  n: number,
  value: string,
  tag: string,
): Promise<Throughput> {
  return timed('JetStream: 1000 × js.publish in flight', n, value.length, tag, async (tick) => {
    const acks = new Array<Promise<unknown>>(CHUNK)
    for (let i = 0; i < n; i += CHUNK) {
      const m = Math.min(CHUNK, n - i)
      acks.length = m
      for (let j = 0; j < m; j++) acks[j] = js.publish(subject, sc.encode(value))
      await Promise.all(acks)
      tick(i)
    }
  })
}

export async function jsRead(
  js: JetStreamClient,
  stream: string,
  n: number,
  size: number,
  tag: string,
): Promise<Throughput> {
  let count = 0
  const t = await timed('JetStream: ordered consumer', n, size, tag, async (tick) => {
    const c = await js.consumers.get(stream) // ordered, from the first message
    const it = await c.consume({ max_messages: CHUNK })
    let bytes = 0
    for await (const m of it) {
      bytes += m.string().length
      if ((++count & 0xffff) === 0) tick(count)
      if (count >= n) break
    }
    await it.close()
    if (bytes < 0) log('unreachable')
  })
  if (count !== n) throw new Error(`ordered consumer read ${count} messages, expected ${n}`)
  return t
}

export async function jsConsume(
  jsm: JetStreamManager,
  js: JetStreamClient,
  stream: string,
  policy: 'explicit' | 'all',
  n: number,
  tag: string,
): Promise<Throughput> {
  const durable = `bench-${policy}`
  await jsm.consumers.add(stream, {
    durable_name: durable,
    ack_policy: policy === 'all' ? AckPolicy.All : AckPolicy.Explicit,
    max_ack_pending: 10 * CHUNK,
  })
  const label = `JetStream: durable pull, AckPolicy.${policy === 'all' ? 'All' : 'Explicit'}`
  const bar = progress(`${tag} ${label}`, n)
  const c = await js.consumers.get(stream, durable)
  const it = await c.consume({ max_messages: CHUNK })
  let got = 0
  let bytes = 0
  let t0 = 0
  for await (const m of it) {
    if (got === 0) t0 = performance.now()
    bytes += m.string().length
    got++
    if (got >= n) {
      await m.ackAck() // acks go out in order on one connection: this one confirmed means all are
      break
    }
    if (policy === 'explicit' || got % CHUNK === 0) m.ack()
    if ((got & 0xffff) === 0) bar.update(got)
  }
  const seconds = (performance.now() - t0) / 1000
  bar.stop()
  void it.close() // breaking out already stopped it; awaiting close() after that never resolves (nats.js 2.29)
  const info = await c.info()
  if (info.num_ack_pending !== 0 || info.ack_floor.stream_seq < n)
    throw new Error(`${label}: ${info.num_ack_pending} acks pending, ack floor ${info.ack_floor.stream_seq} of ${n}`)
  await jsm.consumers.delete(stream, durable)
  const t = { label, messages: got, seconds, payloadBytes: bytes }
  phaseDone(t)
  return t
}

/** Send → other-process latency: bench/children/nats-send.ts publishes, an ordered consumer here receives. */
export async function jsTail(
  url: string,
  jsm: JetStreamManager,
  stream: string,
  count: number,
  label = 'JetStream: ordered consumer, other process',
): Promise<TailResult> {
  const subject = await createStream(jsm, stream)
  const nc = await connect({ servers: url })
  const total = count + TAIL_WARMUP
  try {
    const child = spawnBenchChild('nats-send.ts', [url, subject, String(total), String(TAIL_INTERVAL_MS)])
    return await tailAcross(label, child, total, (latencies) => {
      let close: () => Promise<void> = async () => undefined
      const done = (async () => {
        const c = await nc.jetstream().consumers.get(stream, { deliver_policy: DeliverPolicy.New })
        const it = await c.consume({ max_messages: 100 })
        close = async () => void it.close() // not awaited: see jsConsume
        for await (const m of it) {
          const now = machineNow()
          const sent = Number(m.string())
          if (!Number.isFinite(sent)) continue
          latencies.push(now - sent)
          if (latencies.length >= total) break
        }
      })()
      return { done, stop: () => close() }
    })
  } finally {
    await nc.close()
    await jsm.streams.delete(stream)
  }
}
