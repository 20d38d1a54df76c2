/*
 * `npm run bench -- redis`: the Redis backend against raw ioredis on the same private redis-server,
 * in the same run (same machine state, same value sizes).
 *
 *   produce  a. producer.sendBatch of 1000 items at a time (awaited)
 *            b. Promise.all of 1000 producer.send calls at a time
 *            baseline: a pipeline of 1000 `XADD key * k <key> v <value>` at a time (awaited)
 *   read     c. for await over twain.history(topic)
 *            baseline: `XRANGE key (last + COUNT 1000` in a loop, each entry made into { id, key, value }
 *   tail     d. another Twain instance sends one message every ~3 ms; twain.tail() receives it
 *            baseline: another connection XADDs every ~3 ms; a loop of `XREAD BLOCK` receives it
 */

import { availableParallelism, cpus, loadavg, release, totalmem } from 'node:os'
import { Redis } from 'ioredis'
import { open } from '../../src/index.js'
import { makeValue, revision } from '../lib/report.js'
import { RedisServer } from '../../test/helpers/redis-server.js'

import {
  CHUNK,
  produceAll as ourProduceAll,
  produceBatch as ourProduceBatch,
  rate,
  readHistory as ourRead,
  timed,
  type Throughput,
} from '../lib/phases.js'
import { MB, MiB, fmtInt, fmtNum, sleep, summarise, machineNow, type LatencySummary } from '../lib/stats.js'
import type { Suite, SuiteOptions } from '../lib/suite.js'
import { renderTable } from '../lib/table.js'

const TAIL_INTERVAL_MS = 3
const TAIL_WARMUP = 10

interface Aggregate {
  runs: Throughput[]
  median: Throughput
}

const log = (line = ''): void => void process.stdout.write(line + '\n')
const ratio = (a: number, b: number) => `${fmtNum(a / b, 2)}×`

function aggregate(runs: Throughput[]): Aggregate {
  const sorted = [...runs].sort((x, y) => x.seconds - y.seconds)
  return { runs, median: sorted[(sorted.length - 1) >> 1] as Throughput }
}

// ---------------------------------------------------------------- raw ioredis baselines

async function rawProduce(redis: Redis, key: string, n: number, value: string, tag: string): Promise<Throughput> {
  return timed('baseline: pipelined XADD × 1000', n, value.length, tag, async (tick) => {
    for (let i = 0; i < n; i += CHUNK) {
      const p = redis.pipeline()
      for (let j = 0; j < Math.min(CHUNK, n - i); j++) p.xadd(key, '*', 'k', String((i + j) % 65536), 'v', value)
      await p.exec()
      tick(i)
    }
  })
}

async function rawRead(redis: Redis, key: string, n: number, size: number, tag: string): Promise<Throughput> {
  let count = 0
  const t = await timed('baseline: XRANGE COUNT 1000 loop', n, size, tag, async (tick) => {
    let from = '-'
    let bytes = 0
    for (;;) {
      const res = await redis.xrangeBuffer(key, from, '+', 'COUNT', CHUNK)
      if (res.length === 0) break
      for (const [id, f] of res) {
        const m = {
          id: id.toString(),
          key: Number((f[1] as Buffer).toString()),
          value: (f[3] as Buffer).toString('utf8'),
        }
        bytes += m.value.length
        count++
      }
      from = `(${(res[res.length - 1] as [Buffer, Buffer[]])[0].toString()}`
      tick(count)
    }
    if (bytes < 0) log('unreachable')
  })
  if (count !== n) throw new Error(`raw read ${count} entries, expected ${n}`)
  return t
}

async function rawTail(url: string, key: string, count: number): Promise<LatencySummary> {
  const sender = new Redis(url, { protocol: 2 })
  const reader = new Redis(url, { protocol: 2 })
  const latencies: number[] = []
  const total = count + TAIL_WARMUP
  try {
    await Promise.all([sender.ping(), reader.ping()])
    const reading = (async () => {
      let last = '$'
      while (latencies.length < total) {
        const res = await reader.xread('BLOCK', 5000, 'STREAMS', key, last)
        const now = machineNow()
        for (const [id, fields] of res?.[0]?.[1] ?? []) {
          latencies.push(now - Number(fields[1]))
          last = id
        }
      }
    })()
    await sleep(100)
    for (let i = 0; i < total; i++) {
      await sender.xadd(key, '*', 't', String(machineNow()))
      await sleep(TAIL_INTERVAL_MS)
    }
    await reading
  } finally {
    sender.disconnect()
    reader.disconnect()
  }
  return summarise(latencies.slice(TAIL_WARMUP))
}

// ---------------------------------------------------------------- ours

async function ourTail(url: string, prefix: string, count: number): Promise<LatencySummary> {
  const reader = await open(url, { prefix })
  const writer = await open(url, { prefix })
  const latencies: number[] = []
  const total = count + TAIL_WARMUP
  try {
    await reader.createTopic('tail', { keyType: 'u32' })
    const stream = reader.tail<number>('tail')
    const reading = (async () => {
      for await (const m of stream) {
        latencies.push(machineNow() - m.value)
        if (latencies.length >= total) break
      }
    })()
    await sleep(200)
    const p = writer.producer<number>('tail')
    for (let i = 0; i < total; i++) {
      await p.send(i, machineNow())
      await sleep(TAIL_INTERVAL_MS)
    }
    await reading
  } finally {
    await Promise.all([reader.close(), writer.close()])
  }
  return summarise(latencies.slice(TAIL_WARMUP))
}

// ---------------------------------------------------------------- report

function throughputRows(pairs: Array<[Aggregate, Aggregate | undefined]>): string {
  const rows: string[][] = [['phase', 'messages', 'seconds', 'msgs/s', 'MB/s', 'msgs/s range', 'ours / baseline']]
  for (const [a, base] of pairs) {
    const t = a.median
    const rates = a.runs.map(rate)
    rows.push([
      t.label,
      fmtInt(t.messages),
      fmtNum(t.seconds, 2),
      fmtInt(rate(t)),
      fmtNum(t.payloadBytes / MB / t.seconds, 1),
      a.runs.length > 1 ? `${fmtInt(Math.min(...rates))}–${fmtInt(Math.max(...rates))}` : '',
      base ? ratio(rate(t), rate(base.median)) : '(baseline)',
    ])
  }
  return renderTable(rows, [false, true, true, true, true, true, true])
}

async function run(opts: SuiteOptions): Promise<void> {
  const n = opts.messages
  const value = makeValue(opts.size)
  const server = await RedisServer.start()
  log('twainmq bench: redis')
  log(`command: ${opts.command}`)
  log(`date:    ${new Date().toISOString()}`)
  log(
    `machine: node ${process.version}, ${availableParallelism()} cpus (${cpus()[0]?.model ?? '?'}), ${fmtInt(totalmem() / MiB)} MiB RAM, ${process.platform} ${release()}, load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  )
  log(`source:  ${revision()}`)
  const admin = new Redis(server.url, { protocol: 2 })
  const version = /redis_version:(\S+)/.exec(await admin.info('server'))?.[1] ?? '?'
  log(`server:  private redis-server ${version} on 127.0.0.1:${server.port} (no persistence); ioredis, RESP2`)
  log(
    `setup:   ${opts.repeat} round(s) of ${fmtInt(n)} messages of ${opts.size} B string values, u16 keys, 1 partition; tail: ${opts.tailMessages} messages every ~${TAIL_INTERVAL_MS} ms (+${TAIL_WARMUP} warm-up not counted)`,
  )
  log('')
  log('phases:')
  const rounds: Array<Record<'raw' | 'a' | 'b' | 'rawRead' | 'c', Throughput>> = []
  try {
    for (let r = 1; r <= opts.repeat; r++) {
      const tag = `[${r}/${opts.repeat}]`
      log(`  round ${r} of ${opts.repeat}:`)
      await admin.flushall()
      // Each comparison runs back to back (produce, then read), so both sides see the same machine state.
      const twain = await open(server.url, { prefix: `bench${r}:` })
      try {
        await twain.createTopic('batch')
        await twain.createTopic('send')
        const raw = await rawProduce(admin, 'raw', n, value, tag)
        const a = await ourProduceBatch(twain, 'batch', n, value, tag)
        const b = await ourProduceAll(twain, 'send', n, value, tag)
        const rawR = await rawRead(admin, 'raw', n, value.length, tag)
        const c = await ourRead(twain, 'batch', n, value.length, tag)
        rounds.push({ raw, a, b, rawRead: rawR, c })
      } finally {
        await twain.close()
      }
      await admin.flushall()
    }
    const tb = await rawTail(server.url, 'rawtail', opts.tailMessages)
    log(`  ${'baseline: XADD → XREAD BLOCK'.padEnd(44)} p50 ${fmtNum(tb.p50, 3)} ms  p99 ${fmtNum(tb.p99, 3)} ms`)
    const tt = await ourTail(server.url, 'benchtail:', opts.tailMessages)
    log(`  ${'d. send → twain.tail()'.padEnd(44)} p50 ${fmtNum(tt.p50, 3)} ms  p99 ${fmtNum(tt.p99, 3)} ms`)

    const agg = (k: keyof (typeof rounds)[number]) => aggregate(rounds.map((x) => x[k]))
    const raw = agg('raw')
    const rawR = agg('rawRead')
    const a = agg('a')
    const b = agg('b')
    const c = agg('c')
    log('')
    log(`throughput, median of ${opts.repeat} round(s) (MB/s = value bytes; ours / baseline = ratio of median msgs/s):`)
    log(
      throughputRows([
        [raw, undefined],
        [a, raw],
        [b, raw],
        [rawR, undefined],
        [c, rawR],
      ]),
    )
    log('')
    log('tail latency (send → receive in the same process, wall clock):')
    const lat: string[][] = [['tail', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'mean ms', 'p50 ours / baseline']]
    lat.push([
      'baseline: XADD → XREAD BLOCK',
      fmtNum(tb.p50, 3),
      fmtNum(tb.p90, 3),
      fmtNum(tb.p99, 3),
      fmtNum(tb.max, 3),
      fmtNum(tb.mean, 3),
      '(baseline)',
    ])
    lat.push([
      'd. send → twain.tail()',
      fmtNum(tt.p50, 3),
      fmtNum(tt.p90, 3),
      fmtNum(tt.p99, 3),
      fmtNum(tt.max, 3),
      fmtNum(tt.mean, 3),
      ratio(tt.p50, tb.p50),
    ])
    log(renderTable(lat, [false, true, true, true, true, true, true]))
    log('')
    // Ratios per round (the two sides ran back to back), and their median: steadier than a ratio of medians.
    const perRound = (ours: 'a' | 'b' | 'c', base: 'raw' | 'rawRead') =>
      rounds.map((x) => rate(x[ours]) / rate(x[base]))
    const mid = (xs: number[]) => [...xs].sort((p, q) => p - q)[(xs.length - 1) >> 1] as number
    const ra = perRound('a', 'raw')
    const rb = perRound('b', 'raw')
    const rc = perRound('c', 'rawRead')
    log('same-round ratios (ours / baseline of the same round):')
    log(
      renderTable(
        [
          ['phase', ...rounds.map((_, i) => `round ${i + 1}`), 'median'],
          ['a. sendBatch / pipelined XADD', ...ra.map((x) => `${fmtNum(x, 2)}×`), `${fmtNum(mid(ra), 2)}×`],
          ['b. Promise.all(send) / pipelined XADD', ...rb.map((x) => `${fmtNum(x, 2)}×`), `${fmtNum(mid(rb), 2)}×`],
          ['c. history / XRANGE loop', ...rc.map((x) => `${fmtNum(x, 2)}×`), `${fmtNum(mid(rc), 2)}×`],
        ],
        [false, ...rounds.map(() => true), true],
      ),
    )
    log('')
    const goals: Array<[string, boolean, string]> = [
      ['produce sendBatch ≥ 2× pipelined XADD', mid(ra) >= 2, `${fmtNum(mid(ra), 2)}× (median of same-round ratios)`],
      [
        'produce Promise.all(send) ≥ 2× pipelined XADD',
        mid(rb) >= 2,
        `${fmtNum(mid(rb), 2)}× (median of same-round ratios)`,
      ],
      ['read history ≥ 1× XRANGE loop', mid(rc) >= 1, `${fmtNum(mid(rc), 2)}× (median of same-round ratios)`],
      [
        'tail p50 ≤ 1.5× XREAD BLOCK p50 (or < 1 ms)',
        tt.p50 <= 1.5 * tb.p50 || tt.p50 < 1,
        `${fmtNum(tt.p50, 3)} ms vs ${fmtNum(tb.p50, 3)} ms = ${ratio(tt.p50, tb.p50)}`,
      ],
    ]
    log('goals:')
    log(renderTable([['goal', 'result', 'measured'], ...goals.map(([g, ok, m]) => [g, ok ? 'PASS' : 'MISS', m])]))
  } finally {
    admin.disconnect()
    await server.destroy()
  }
}

const suite: Suite = {
  name: 'redis',
  description:
    'Redis backend: sendBatch / Promise.all(send) / history throughput and tail latency vs raw ioredis (XADD pipeline, XRANGE, XREAD BLOCK)',
  run,
}
export default suite
