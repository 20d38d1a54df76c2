/*
 * `npm run bench -- floors`: how far the two throughput rows issue 15 still misses can go at all,
 * each floor measured in the same run as the baseline its goal is a ratio of (rounds alternate
 * the order of the phases):
 *
 *   send    goal: file Promise.all(send) ≥ 0.75× the plain-Node framed log.
 *           plain log | the least a promise-per-send producer can do on its format
 *           (bench/lib/floor-send.ts) | twainmq's Promise.all(1000 × send), fresh file root
 *   shared  goal: Redis shared group consume+ack ≥ 1.2× JetStream AckPolicy.All.
 *           JetStream AckPolicy.All (as in the peers suite) | raw ioredis XREADGROUP + XACK loops
 *           and the server's own time for them (bench/lib/floor-shared.ts), ioredis's reply decoder
 *           alone on an XREADGROUP reply (bench/lib/decoder-cost.ts) | twainmq's shared group (one
 *           member, ack each), on a private nats-server and redis-server
 *   tail    goal: Redis tail p50 ≤ JetStream's, p99 ≤ 1.2× (send in another process → receive).
 *           JetStream ordered consumer (as in the peers suite) | a plain XADD → XREAD BLOCK through
 *           ioredis (bench/lib/floor-tail.ts) | twainmq's Redis tail; --tail-messages each
 *
 * Defaults: --messages 200000 --repeat 3, 100-byte values.
 */
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { connect } from 'nats'
import { open } from '../../src/index.js'
import { RedisServer } from '../../test/helpers/redis-server.js'
import { plainWrite } from '../baselines/plain-log.js'
import { FloorProducer, sendWindows } from '../lib/floor-send.js'
import { decoderMicrosPerEntry } from '../lib/decoder-cost.js'
import { aheadConsume, fillStream, serialConsume, serverMicros } from '../lib/floor-shared.js'
import { rawRedisTail } from '../lib/floor-tail.js'
import { createStream, jsConsume, jsProduce, jsTail } from '../lib/jetstream.js'
import { NatsServer } from '../lib/nats-server.js'
import { consumeGroup, produceBatch } from '../lib/phases.js'
import { log, machine, makeValue, revision } from '../lib/report.js'
import { fmtInt, fmtNum, median } from '../lib/stats.js'
import type { Suite, SuiteOptions } from '../lib/suite.js'
import { renderTable } from '../lib/table.js'
import { logTail, tailTwain } from '../lib/tail.js'
import { makeTempDir, removeTempDir } from '../lib/tmp.js'

type Rates = Record<string, number>

async function sendRound(r: number, n: number, value: string): Promise<Rates> {
  const dir = makeTempDir('floors-send')
  try {
    const out: Rates = {}
    const phases: Array<[string, () => Promise<number>]> = [
      [
        'plain',
        async () => {
          const t0 = performance.now()
          plainWrite(join(dir, 'plain.log'), n, 2, (i) => i % 65536, value)
          return n / ((performance.now() - t0) / 1000)
        },
      ],
      [
        'floor',
        async () => {
          const floor = new FloorProducer(join(dir, 'floor.log'))
          try {
            return await sendWindows(n, value, (k, v) => floor.send(k, v))
          } finally {
            floor.close()
          }
        },
      ],
      [
        'ours',
        async () => {
          const twain = await open(join(dir, 'root'))
          try {
            await twain.createTopic('send')
            const p = twain.producer<string>('send')
            const rate = await sendWindows(n, value, (k, v) => p.send(k, v))
            await p.close()
            return rate
          } finally {
            await twain.close()
          }
        },
      ],
    ]
    for (const [name, run] of r % 2 === 0 ? phases : [...phases].reverse()) out[name] = await run()
    log(
      `  send round ${r + 1}: plain ${fmtInt(out.plain as number)}, floor ${fmtInt(out.floor as number)}, twainmq ${fmtInt(out.ours as number)} msgs/s`,
    )
    return out
  } finally {
    removeTempDir(dir)
  }
}

async function sharedRound(
  nats: NatsServer,
  redis: Redis,
  url: string,
  r: number,
  n: number,
  value: string,
): Promise<Rates> {
  const out: Rates = {}
  const js = async () => {
    const nc = await connect({ servers: nats.url })
    try {
      const jsm = await nc.jetstreamManager()
      const stream = `floors${r}`
      const subject = await createStream(jsm, stream)
      await jsProduce(nc.jetstream(), subject, n, value, '')
      const all = await jsConsume(jsm, nc.jetstream(), stream, 'all', n, '')
      await jsm.streams.delete(stream)
      out.js = all.messages / all.seconds
    } finally {
      await nc.close()
    }
  }
  const raw = async () => {
    await redis.flushall()
    const key = `floors{t:${r}}`
    await fillStream(redis, key, n, value)
    await redis.config('RESETSTAT')
    out.serialStrings = await serialConsume(redis, key, 'strings', n, false)
    out.server = 1e6 / ((await serverMicros(redis)) / n)
    out.serialBuffers = await serialConsume(redis, key, 'buffers', n, true)
    out.ahead = await aheadConsume(redis, key, 'ahead', n, 2)
    out.decoder = 1e6 / decoderMicrosPerEntry(value.length)
  }
  const ours = async () => {
    await redis.flushall()
    const twain = await open(url, { prefix: `floors${r}:` })
    try {
      await twain.createTopic('t')
      await produceBatch(twain, 't', n, value, '', 'twainmq: sendBatch × 1000 (fill)')
      const t = await consumeGroup(twain, 't', 'floors-s', 'shared', n, '', 'twainmq: shared group, ack each')
      out.ours = t.messages / t.seconds
    } finally {
      await twain.close()
    }
  }
  const phases = [js, raw, ours]
  for (const run of r % 2 === 0 ? phases : [...phases].reverse()) await run()
  return out
}

/** p50 and p99 (ms) of JetStream's tail, the raw Redis tail and twainmq's Redis tail, in alternating order. */
async function tailRound(nats: NatsServer, redis: Redis, url: string, r: number, count: number): Promise<Rates> {
  const out: Rates = {}
  const js = async () => {
    const nc = await connect({ servers: nats.url })
    try {
      const t = logTail(await jsTail(nats.url, await nc.jetstreamManager(), `floorstail${r}`, count)).summary
      Object.assign(out, { jsP50: t.p50, jsP99: t.p99 })
    } finally {
      await nc.close()
    }
  }
  const raw = async () => {
    await redis.flushall()
    const t = logTail(await rawRedisTail(url, `floorstail{${r}}`, count)).summary
    Object.assign(out, { rawP50: t.p50, rawP99: t.p99 })
  }
  const ours = async () => {
    await redis.flushall()
    const t = logTail(await tailTwain(count, url, 'Redis: twain.tail(), other process')).summary
    Object.assign(out, { oursP50: t.p50, oursP99: t.p99 })
  }
  const phases = [js, raw, ours]
  for (const run of r % 2 === 0 ? phases : [...phases].reverse()) await run()
  return out
}

/** Median over rounds of `a / b` in the same round. */
const ratio = (rounds: readonly Rates[], a: string, b: string): string =>
  `${median(rounds.map((x) => (x[a] as number) / (x[b] as number))).toFixed(2)}×`
/** A row: its label, its rounds and key, how its value shows, and the same-round baseline and goal of its ratio. */
type Row = [
  label: string,
  rounds: readonly Rates[],
  key: string,
  show: 'rate' | 'ms' | 'none',
  base?: [name: string, key: string],
  goal?: string,
]

function report(send: Rates[], shared: Rates[], tail: Rates[]): void {
  const plain: [string, string] = ['plain', 'plain']
  const js: [string, string] = ['JetStream', 'js']
  const spec: Row[] = [
    ['send: plain-Node framed log', send, 'plain', 'rate'],
    ['send: floor (plain log + a promise per send, Promise.all)', send, 'floor', 'rate', plain, '≥ 0.75×'],
    ['send: twainmq file Promise.all(send)', send, 'ours', 'rate', plain, '≥ 0.75×'],
    ['send: twainmq file Promise.all(send)', send, 'ours', 'none', ['floor', 'floor']],
    ['shared: JetStream durable pull, AckPolicy.All', shared, 'js', 'rate'],
    ['shared: raw ioredis XREADGROUP + XACK, serial (strings)', shared, 'serialStrings', 'rate', js, '≥ 1.2×'],
    ['shared: raw ioredis XREADGROUP + XACK, serial (Buffers)', shared, 'serialBuffers', 'rate', js, '≥ 1.2×'],
    ['shared: raw ioredis, two reads in flight', shared, 'ahead', 'rate', js, '≥ 1.2×'],
    ['shared: ioredis reply decoder alone (XREADGROUP entries)', shared, 'decoder', 'rate', js, '≥ 1.2×'],
    ['shared: redis-server alone (its XREADGROUP + XACK time)', shared, 'server', 'rate', js, '≥ 1.2×'],
    ['shared: twainmq shared group, ack each', shared, 'ours', 'rate', js, '≥ 1.2×'],
    ['shared: twainmq shared group, ack each', shared, 'ours', 'none', ['raw serial', 'serialStrings']],
    ['tail p50: JetStream ordered consumer', tail, 'jsP50', 'ms'],
    ['tail p50: raw ioredis XADD → XREAD BLOCK', tail, 'rawP50', 'ms', ['JetStream', 'jsP50'], '≤ 1×'],
    ['tail p50: twainmq Redis tail', tail, 'oursP50', 'ms', ['JetStream', 'jsP50'], '≤ 1×'],
    ['tail p50: twainmq Redis tail', tail, 'oursP50', 'none', ['raw', 'rawP50']],
    ['tail p99: JetStream ordered consumer', tail, 'jsP99', 'ms'],
    ['tail p99: raw ioredis XADD → XREAD BLOCK', tail, 'rawP99', 'ms', ['JetStream', 'jsP99'], '≤ 1.2×'],
    ['tail p99: twainmq Redis tail', tail, 'oursP99', 'ms', ['JetStream', 'jsP99'], '≤ 1.2×'],
  ]
  const value = (rounds: readonly Rates[], key: string, show: Row[3]): string => {
    const m = median(rounds.map((x) => x[key] as number))
    return show === 'rate' ? fmtInt(m) : show === 'ms' ? `${fmtNum(m, 3)} ms` : ''
  }
  const rows = [
    ['row', 'value', 'of', 'ratio', 'goal'],
    ...spec.map(([label, rounds, key, show, base, goal]) => [
      label,
      value(rounds, key, show),
      base?.[0] ?? '',
      base ? ratio(rounds, key, base[1]) : '',
      goal ?? '',
    ]),
  ]
  log('')
  log(`floors, median of ${send.length} round(s) (msgs/s or ms); ratio = median of the same-round ratios:`)
  log(renderTable(rows, [false, true, false, true, false]))
}

async function run(opts: SuiteOptions): Promise<void> {
  const n = opts.messages
  const value = makeValue(opts.size)
  log(`twainmq floors — ${opts.command}`)
  log(`  ${machine()}; source ${revision()}; ${fmtInt(n)} messages of ${opts.size} bytes, ${opts.repeat} round(s)`)
  const send: Rates[] = []
  for (let r = 0; r < opts.repeat; r++) send.push(await sendRound(r, n, value))
  const nats = await NatsServer.start()
  const server = await RedisServer.start()
  const redis = new Redis(server.url, { protocol: 2 })
  const redisVersion = /redis_version:(\S+)/.exec(await redis.info('server'))?.[1] ?? '?'
  log(
    `servers: private ${nats.version} -js on 127.0.0.1:${nats.port}; private redis-server ${redisVersion} on 127.0.0.1:${server.port}`,
  )
  const shared: Rates[] = []
  const tail: Rates[] = []
  try {
    for (let r = 0; r < opts.repeat; r++) {
      log(`  shared round ${r + 1}:`)
      shared.push(await sharedRound(nats, redis, server.url, r, n, value))
    }
    for (let r = 0; r < opts.repeat; r++) {
      log(`  tail round ${r + 1}:`)
      tail.push(await tailRound(nats, redis, server.url, r, opts.tailMessages))
    }
  } finally {
    redis.disconnect()
    await server.destroy()
    await nats.stop()
  }
  report(send, shared, tail)
}

const suite: Suite = {
  name: 'floors',
  description:
    'the least the missed rows of issue 15 can reach: a promise-per-send producer vs the plain log; raw ioredis XREADGROUP + XACK and the reply decoder vs JetStream AckPolicy.All; a raw ioredis tail vs JetStream',
  run,
}
export default suite
