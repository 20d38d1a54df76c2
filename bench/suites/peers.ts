/*
 * `npm run bench -- peers`: twainmq (file and Redis backends) against NATS JetStream (file
 * storage) in one run, on a private `nats-server -js` and a private `redis-server`, both on free
 * loopback ports over temp directories. Rounds alternate which peer goes first.
 *
 *   produce  JetStream: 1000 js.publish in flight | ours: sendBatch × 1000, Promise.all(1000 × send)
 *   read     JetStream: ordered consumer           | ours: for await (history(topic))
 *   consume  JetStream: durable pull, AckPolicy.Explicit / AckPolicy.All
 *            ours: one member of a partitioned group (file, Redis), of a shared group (Redis)
 *   tail     send in a child process → receive here: JetStream ordered consumer | twain.tail()
 *            (file, Redis) | raw fs.watch + fs.read of a file a child appends to
 *   plain    a plain-Node framed log (bench/baselines/plain-log.ts), for Promise.all(send) on file
 *
 * Measuring code: bench/lib/phases.ts (ours), bench/lib/jetstream.ts, bench/lib/tail.ts; the table
 * with ratios and goals: bench/lib/peers-table.ts.
 */
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { connect } from 'nats'
import { open, type Twain } from '../../src/index.js'
import { RedisServer } from '../../test/helpers/redis-server.js'
import { plainWrite } from '../baselines/plain-log.js'
import { createStream, jsConsume, jsProduce, jsRead, jsTail } from '../lib/jetstream.js'
import { NatsServer } from '../lib/nats-server.js'
import { peersReport, type PeersRound } from '../lib/peers-table.js'
import { consumeGroup, phaseDone, produceAll, produceBatch, readHistory, type Throughput } from '../lib/phases.js'
import { log, machine, makeValue, revision } from '../lib/report.js'
import { fmtInt } from '../lib/stats.js'
import type { Suite, SuiteOptions } from '../lib/suite.js'
import { TAIL_INTERVAL_MS, TAIL_WARMUP, logTail, tailBaseline, tailTwain } from '../lib/tail.js'
import { makeTempDir, removeTempDir } from '../lib/tmp.js'

type Side = 'js' | 'file' | 'redis'

async function jetstreamRound(
  nats: NatsServer,
  r: number,
  n: number,
  value: string,
  tail: number,
  tag: string,
): Promise<PeersRound['js']> {
  const nc = await connect({ servers: nats.url })
  try {
    const jsm = await nc.jetstreamManager()
    const js = nc.jetstream()
    const stream = `bench${r}`
    const subject = await createStream(jsm, stream)
    const produce = await jsProduce(js, subject, n, value, tag)
    const read = await jsRead(js, stream, n, value.length, tag)
    const explicit = await jsConsume(jsm, js, stream, 'explicit', n, tag)
    const all = await jsConsume(jsm, js, stream, 'all', n, tag)
    await jsm.streams.delete(stream)
    const t = logTail(await jsTail(nats.url, jsm, `tail${r}`, tail))
    return { produce, read, explicit, all, tail: t.summary }
  } finally {
    await nc.close()
  }
}

/** Produce (both ways), history, a partitioned group and (Redis) a shared group on one store. */
async function twainPhases(
  twain: Twain,
  n: number,
  value: string,
  tag: string,
  label: string,
  shared: boolean,
): Promise<{ batch: Throughput; all: Throughput; history: Throughput; group: Throughput; shared?: Throughput }> {
  await twain.createTopic('batch')
  await twain.createTopic('send')
  const batch = await produceBatch(twain, 'batch', n, value, tag, `${label}: producer.sendBatch × 1000`)
  const all = await produceAll(twain, 'send', n, value, tag, `${label}: Promise.all(1000 × send)`)
  const history = await readHistory(twain, 'batch', n, value.length, tag, `${label}: for await (history(topic))`)
  const group = await consumeGroup(
    twain,
    'batch',
    'bench-p',
    'partitioned',
    n,
    tag,
    `${label}: partitioned group, ack each`,
  )
  const sh = shared
    ? await consumeGroup(twain, 'batch', 'bench-s', 'shared', n, tag, `${label}: shared group, ack each`)
    : undefined
  return { batch, all, history, group, ...(sh ? { shared: sh } : {}) }
}

async function fileRound(n: number, value: string, tail: number, tag: string): Promise<PeersRound['file']> {
  const root = makeTempDir('peers-file')
  try {
    const twain = await open(root)
    let phases
    try {
      phases = await twainPhases(twain, n, value, tag, 'file', false)
    } finally {
      await twain.close()
    }
    const t0 = performance.now()
    plainWrite(join(root, 'plain.log'), n, 2, (i) => i % 65536, value)
    const plain: Throughput = {
      label: 'plain Node: frame + fs.writeSync 64 KiB',
      messages: n,
      seconds: (performance.now() - t0) / 1000,
      payloadBytes: n * value.length,
    }
    phaseDone(plain)
    const t = logTail(await tailTwain(tail, undefined, 'file: twain.tail(), other process'))
    const raw = logTail(await tailBaseline(tail, 'raw fs.watch + fs.read, other process'))
    return { ...phases, plain, tail: t.summary, rawTail: raw.summary }
  } finally {
    removeTempDir(root)
  }
}

async function redisRound(
  server: RedisServer,
  admin: Redis,
  r: number,
  n: number,
  value: string,
  tail: number,
  tag: string,
): Promise<PeersRound['redis']> {
  await admin.flushall()
  const twain = await open(server.url, { prefix: `peers${r}:` })
  let phases
  try {
    phases = await twainPhases(twain, n, value, tag, 'Redis', true)
  } finally {
    await twain.close()
  }
  await admin.flushall()
  const t = logTail(await tailTwain(tail, server.url, 'Redis: twain.tail(), other process'))
  return { ...phases, shared: phases.shared as Throughput, tail: t.summary }
}

async function run(opts: SuiteOptions): Promise<void> {
  const n = opts.messages
  const value = makeValue(opts.size)
  const nats = await NatsServer.start()
  const redis = await RedisServer.start()
  const admin = new Redis(redis.url, { protocol: 2 })
  try {
    const redisVersion = /redis_version:(\S+)/.exec(await admin.info('server'))?.[1] ?? '?'
    const natsVersion = (
      (await import('nats/package.json', { with: { type: 'json' } })) as { default: { version: string } }
    ).default.version
    log('twainmq bench: peers')
    log(`command: ${opts.command}`)
    log(`date:    ${new Date().toISOString()}`)
    log(`machine: ${machine()}`)
    log(`source:  ${revision()}`)
    log(
      `servers: private ${nats.version} -js on 127.0.0.1:${nats.port} (file storage, store in a temp dir), nats.js ${natsVersion}; private redis-server ${redisVersion} on 127.0.0.1:${redis.port}`,
    )
    log(
      `setup:   ${opts.repeat} round(s) of ${fmtInt(n)} messages of ${opts.size} B string values, 1 stream / 1-partition topics; tail: ${opts.tailMessages} messages every ~${TAIL_INTERVAL_MS} ms (+${TAIL_WARMUP} warm-up) per round; rounds alternate which peer runs first`,
    )
    log(
      'durable: JetStream 2.9 file store: a publish is acked once written to the store file (page cache); fsync every 2 min (sync_interval, fixed in 2.9)',
    )
    log(
      "         twainmq file: fsync 'never' (the default: page cache, survives a process crash, like JetStream's); Redis: the private server has no RDB and no AOF (memory only)",
    )
    log('')
    log('phases:')
    const rounds: PeersRound[] = []
    for (let r = 1; r <= opts.repeat; r++) {
      const tag = `[${r}/${opts.repeat}]`
      const order: Side[] = r % 2 === 1 ? ['js', 'file', 'redis'] : ['redis', 'file', 'js']
      log(`  round ${r} of ${opts.repeat} (${order.join(', ')}):`)
      const round: Partial<PeersRound> = {}
      for (const side of order) {
        if (side === 'js') round.js = await jetstreamRound(nats, r, n, value, opts.tailMessages, tag)
        else if (side === 'file') round.file = await fileRound(n, value, opts.tailMessages, tag)
        else round.redis = await redisRound(redis, admin, r, n, value, opts.tailMessages, tag)
      }
      rounds.push(round as PeersRound)
    }
    peersReport(rounds)
  } finally {
    admin.disconnect()
    await redis.destroy()
    await nats.stop()
  }
}

const suite: Suite = {
  name: 'peers',
  description:
    'twainmq (file, Redis) vs NATS JetStream (file storage): produce, backlog read, consume+ack, send → other-process latency',
  run,
}
export default suite
