/*
 * `npm run bench -- scale`: how twainmq's per-message cost and memory change with the size of
 * the log. For each size (decades from --min to --max: 10k, 100k, 1M, 10M messages of 100 B on the
 * file backend; Redis up to --redis-max, 1M by default, so a run fits in minutes and in memory),
 * on a fresh store with one 1-partition topic:
 *
 *   produce   producer.sendBatch × 1000 of all the messages         µs/msg, peak RSS
 *   read      for await (history(topic))                              µs/msg, peak RSS
 *   consume   one partitioned-group member, ack each, commit          µs/msg, peak RSS
 *   seek      20 random offsets: history({ from: offset, limit: 1 }) → first message; 20 random
 *             times: history({ from: { time }, limit: 1 })           median ms
 *   join      a new group over the deep history: from 'start' → first message; from 'end' → owns the partition
 *
 * Any row whose value at the largest size is more than 20% above its value at the smallest is
 * flagged (bench/lib/scale-table.ts). Measuring code: bench/lib/phases.ts.
 */
import { Redis } from 'ioredis'
import { open, type Twain } from '../../src/index.js'
import { RedisServer } from '../../test/helpers/redis-server.js'
import { MemorySampler, fullGc } from '../lib/memory.js'
import { consumeGroup, produceBatch, readHistory, type Throughput } from '../lib/phases.js'
import { log, machine, makeValue, revision } from '../lib/report.js'
import { scaleTable, type ScalePoint } from '../lib/scale-table.js'
import { fmtInt } from '../lib/stats.js'
import type { Suite, SuiteOptions } from '../lib/suite.js'
import { makeTempDir, removeTempDir } from '../lib/tmp.js'

const SEEKS = 20

export interface ScaleOptions extends SuiteOptions {
  min: number
  max: number
  redisMax: number
}

/** Decades from `min` up to `max` (and `max` itself when it is not one). */
export function sizes(min: number, max: number): number[] {
  const out: number[] = []
  for (let s = min; s <= max; s *= 10) out.push(s)
  if (out[out.length - 1] !== max && max > min) out.push(max)
  return out
}

async function sampled(body: () => Promise<Throughput>): Promise<{ t: Throughput; rss: number }> {
  fullGc()
  const mem = new MemorySampler(50).start()
  const t = await body()
  return { t, rss: mem.stop().peakRss }
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[(xs.length - 1) >> 1] as number

/** Median ms from asking for `from` until the first message arrived, over the given starts. */
async function seekMs(twain: Twain, topic: string, froms: Array<number | { time: number }>): Promise<number> {
  const ms: number[] = []
  for (const from of froms) {
    const t0 = performance.now()
    let got = 0
    for await (const m of twain.history<string>(topic, { partition: 0, from, limit: 1 })) if (m.value.length >= 0) got++
    ms.push(performance.now() - t0)
    if (got !== 1) throw new Error(`seek to ${JSON.stringify(from)} gave ${got} messages`)
  }
  return median(ms)
}

async function joinMs(twain: Twain, topic: string, group: string): Promise<{ start: number; end: number }> {
  let t0 = performance.now()
  const a = twain.consumer<string>(topic, { group: `${group}-start`, from: 'start' })
  for await (const m of a) {
    m.ack() // an unacked delivered message would hold close() for its drain timeout
    break
  }
  const start = performance.now() - t0
  await a.close()
  t0 = performance.now()
  const b = twain.consumer<string>(topic, { group: `${group}-end`, from: 'end' })
  await new Promise<void>((resolve) => {
    const off = b.on('assigned', () => {
      off()
      resolve()
    })
  })
  const end = performance.now() - t0
  await b.close()
  return { start, end }
}

async function measure(
  url: string,
  opts: { prefix?: string },
  n: number,
  value: string,
  tag: string,
): Promise<ScalePoint> {
  const twain = await open(url, opts)
  try {
    await twain.createTopic('scale')
    const produce = await sampled(() => produceBatch(twain, 'scale', n, value, tag, `produce ${fmtInt(n)}`))
    const read = await sampled(() => readHistory(twain, 'scale', n, value.length, tag, `history ${fmtInt(n)}`))
    const consume = await sampled(() =>
      consumeGroup(twain, 'scale', 'scale-p', 'partitioned', n, tag, `group consume ${fmtInt(n)}`),
    )
    const offsets = Array.from({ length: SEEKS }, () => Math.floor(Math.random() * n))
    const stamp = async (reverse: boolean) => {
      for await (const m of twain.history<string>('scale', { partition: 0, limit: 1, reverse })) return m.timestamp
      throw new Error('empty topic')
    }
    const tFirst = await stamp(false)
    const tLast = await stamp(true)
    const times = Array.from({ length: SEEKS }, () => ({ time: tFirst + Math.random() * (tLast - tFirst) }))
    const seekOffset = await seekMs(twain, 'scale', offsets)
    const seekTime = await seekMs(twain, 'scale', times)
    const join = await joinMs(twain, 'scale', 'scale-join')
    log(
      `  ${tag} seek offset ${seekOffset.toFixed(2)} ms, seek time ${seekTime.toFixed(2)} ms, join from start → first message ${join.start.toFixed(1)} ms, from end → assigned ${join.end.toFixed(1)} ms`,
    )
    return { n, produce, read, consume, seekOffset, seekTime, joinStart: join.start, joinEnd: join.end }
  } finally {
    await twain.close()
  }
}

async function run(o: SuiteOptions): Promise<void> {
  const opts = o as ScaleOptions
  if (opts.max < opts.min) throw new Error(`--max (${opts.max}) must be at least --min (${opts.min})`)
  const value = makeValue(opts.size)
  const fileSizes = sizes(opts.min, opts.max)
  const redisSizes = sizes(opts.min, Math.min(opts.max, opts.redisMax))
  const server = await RedisServer.start()
  const admin = new Redis(server.url, { protocol: 2 })
  try {
    log('twainmq bench: scale')
    log(`command: ${opts.command}`)
    log(`date:    ${new Date().toISOString()}`)
    log(`machine: ${machine()}`)
    log(`source:  ${revision()}`)
    log(
      `setup:   ${opts.size} B string values, one 1-partition topic per size on a fresh store; file: ${fileSizes.map(fmtInt).join(', ')}; Redis (private redis-server, no persistence): ${redisSizes.map(fmtInt).join(', ')} (--redis-max ${fmtInt(opts.redisMax)}); ${opts.repeat} round(s) per size, median round; fsync 'never'`,
    )
    log('')
    const backends: Array<{ name: string; points: ScalePoint[] }> = []
    for (const backend of ['file', 'redis'] as const) {
      const points: ScalePoint[] = []
      // One unreported pass at the smallest size first, so that size is not the one paying for the JIT.
      const warm = Math.min(opts.min, 10_000)
      log(`  ${backend}: warm-up pass of ${fmtInt(warm)} messages (not reported)`)
      if (backend === 'file') {
        const root = makeTempDir('scale-warm')
        await measure(root, {}, warm, value, `[${backend} warm-up]`).finally(() => removeTempDir(root))
      } else {
        await measure(server.url, { prefix: 'scale-warm:' }, warm, value, `[${backend} warm-up]`)
        await admin.flushall()
      }
      for (const n of backend === 'file' ? fileSizes : redisSizes) {
        const rounds: ScalePoint[] = []
        for (let r = 1; r <= opts.repeat; r++) {
          const tag = `[${backend} ${fmtInt(n)} ${r}/${opts.repeat}]`
          if (backend === 'file') {
            const root = makeTempDir('scale')
            try {
              rounds.push(await measure(root, {}, n, value, tag))
            } finally {
              removeTempDir(root)
            }
          } else {
            await admin.flushall()
            rounds.push(await measure(server.url, { prefix: `scale${r}:` }, n, value, tag))
            await admin.flushall()
          }
        }
        points.push(
          [...rounds].sort((a, b) => a.read.t.seconds - b.read.t.seconds)[(rounds.length - 1) >> 1] as ScalePoint,
        )
      }
      backends.push({ name: backend, points })
    }
    for (const b of backends) {
      log('')
      log(`${b.name}:`)
      log(scaleTable(b.points))
    }
  } finally {
    admin.disconnect()
    await server.destroy()
  }
}

const suite: Suite = {
  name: 'scale',
  description:
    'per-message produce/read/consume cost and RSS from 10k to 10M messages, seek time, group join with deep history',
  run,
}
export default suite
