/*
 * `npm run bench -- redis-shared`: shared-group (competing consumers) consume+ack throughput of
 * twainmq against BullMQ on the same private redis-server, in the same run.
 *
 *   flow     produce-and-consume-with-ack: the consumer (or Worker) runs while the messages are
 *            produced; timed from the first send until every message is acknowledged in Redis.
 *              ours:   producer.sendBatch × 1000 into a 4-partition topic; one `mode: 'shared'`
 *                      member iterates and acks each message; `commit()` flushes the last XACKs
 *              BullMQ: Queue.addBulk × 1000; one Worker (concurrency 50, no-op processor) until
 *                      every job has completed
 *   backlog  consume+ack only, of messages/jobs already stored (the worker throughput on its own)
 *
 * BullMQ processes each job with several Redis commands (move to active, lock, complete, events), so
 * its throughput is bounded by round trips per job; a shared group reads up to 1000 entries per
 * XREADGROUP and acknowledges up to 1000 per XACK. The message count is capped at 100,000 so the
 * BullMQ phases end in reasonable time (pass a smaller --messages for a quick run).
 */
import { availableParallelism, cpus, loadavg, release, totalmem } from 'node:os'
import { Queue, Worker } from 'bullmq'
import { Redis } from 'ioredis'
import { open, type Twain } from '../../src/index.js'
import { makeValue } from '../lib/report.js'
import { RedisServer } from '../../test/helpers/redis-server.js'
import { progress } from '../lib/progress.js'
import { fmtInt, fmtNum, MiB } from '../lib/stats.js'
import type { Suite, SuiteOptions } from '../lib/suite.js'
import { renderTable } from '../lib/table.js'

const CHUNK = 1000
const PARTITIONS = 4
const CONCURRENCY = 50
const MAX_MESSAGES = 100_000

interface Run {
  label: string
  messages: number
  seconds: number
}

const log = (line = ''): void => void process.stdout.write(line + '\n')
const rate = (r: Run): number => r.messages / r.seconds
const ratio = (a: number, b: number): string => `${fmtNum(a / b, 1)}×`

function done(r: Run): Run {
  log(`  ${r.label.padEnd(52)} ${fmtNum(r.seconds, 2).padStart(7)} s  ${fmtInt(rate(r)).padStart(9)} msgs/s`)
  return r
}

// ---------------------------------------------------------------- ours

async function produce(
  twain: Twain,
  topic: string,
  n: number,
  value: string,
  tick?: (d: number) => void,
): Promise<void> {
  const p = twain.producer<string>(topic)
  for (let i = 0; i < n; i += CHUNK) {
    const m = Math.min(CHUNK, n - i)
    const items = new Array<{ key: number; value: string }>(m)
    for (let j = 0; j < m; j++) items[j] = { key: (i + j) % 65536, value }
    await p.sendBatch(items)
    tick?.(i + m)
  }
  await p.close()
}

/** One shared member acks `n` messages; resolves when the last ack reached Redis. */
async function consumeShared(twain: Twain, topic: string, n: number, tick: (d: number) => void): Promise<void> {
  const c = twain.consumer<string>(topic, { group: 'bench', mode: 'shared', name: 'bench-1' })
  let got = 0
  for await (const m of c) {
    m.ack()
    if ((++got & 0x3ff) === 0) tick(got)
    if (got >= n) break
  }
  await c.commit()
  await c.close()
}

async function oursFlow(url: string, prefix: string, n: number, value: string, tag: string): Promise<Run> {
  const twain = await open(url, { prefix })
  try {
    await twain.createTopic('flow', { partitions: PARTITIONS })
    const bar = progress(`${tag} ours: produce+consume+ack`, n)
    const t0 = performance.now()
    await Promise.all([consumeShared(twain, 'flow', n, (d) => bar.update(d)), produce(twain, 'flow', n, value)])
    const seconds = (performance.now() - t0) / 1000
    bar.stop()
    return done({ label: 'ours: sendBatch → shared member, ack each', messages: n, seconds })
  } finally {
    await twain.close()
  }
}

async function oursBacklog(url: string, prefix: string, n: number, value: string, tag: string): Promise<Run> {
  const twain = await open(url, { prefix })
  try {
    await twain.createTopic('backlog', { partitions: PARTITIONS })
    await produce(twain, 'backlog', n, value)
    const bar = progress(`${tag} ours: consume+ack backlog`, n)
    const t0 = performance.now()
    await consumeShared(twain, 'backlog', n, (d) => bar.update(d))
    const seconds = (performance.now() - t0) / 1000
    bar.stop()
    return done({ label: 'ours: shared member consume+ack of a backlog', messages: n, seconds })
  } finally {
    await twain.close()
  }
}

// ---------------------------------------------------------------- BullMQ

async function addJobs(queue: Queue, n: number, value: string, tick?: (d: number) => void): Promise<void> {
  for (let i = 0; i < n; i += CHUNK) {
    const m = Math.min(CHUNK, n - i)
    await queue.addBulk(Array.from({ length: m }, (_, j) => ({ name: 'j', data: { key: (i + j) % 65536, value } })))
    tick?.(i + m)
  }
}

/** A Worker (concurrency 50, no-op processor) until `n` jobs completed. */
function work(
  name: string,
  port: number,
  prefix: string,
  n: number,
  tick: (d: number) => void,
): { worker: Worker; finished: Promise<void> } {
  let completed = 0
  let resolve!: () => void
  const finished = new Promise<void>((r) => (resolve = r))
  const worker = new Worker(name, async () => undefined, {
    connection: { host: '127.0.0.1', port, maxRetriesPerRequest: null },
    prefix,
    concurrency: CONCURRENCY,
  })
  worker.on('completed', () => {
    if ((++completed & 0x3ff) === 0) tick(completed)
    if (completed === n) resolve()
  })
  return { worker, finished }
}

async function bullFlow(port: number, prefix: string, n: number, value: string, tag: string): Promise<Run> {
  const queue = new Queue('flow', { connection: { host: '127.0.0.1', port }, prefix })
  const bar = progress(`${tag} BullMQ: addBulk+worker`, n)
  const t0 = performance.now()
  const { worker, finished } = work('flow', port, prefix, n, (d) => bar.update(d))
  try {
    await Promise.all([finished, addJobs(queue, n, value)])
    const seconds = (performance.now() - t0) / 1000
    bar.stop()
    return done({ label: `BullMQ: addBulk → Worker (concurrency ${CONCURRENCY})`, messages: n, seconds })
  } finally {
    await worker.close()
    await queue.close()
  }
}

async function bullBacklog(port: number, prefix: string, n: number, value: string, tag: string): Promise<Run> {
  const queue = new Queue('backlog', { connection: { host: '127.0.0.1', port }, prefix })
  await addJobs(queue, n, value)
  const bar = progress(`${tag} BullMQ: worker on backlog`, n)
  const t0 = performance.now()
  const { worker, finished } = work('backlog', port, prefix, n, (d) => bar.update(d))
  try {
    await finished
    const seconds = (performance.now() - t0) / 1000
    bar.stop()
    return done({ label: `BullMQ: Worker (concurrency ${CONCURRENCY}) on a backlog`, messages: n, seconds })
  } finally {
    await worker.close()
    await queue.close()
  }
}

// ---------------------------------------------------------------- report

const median = (runs: Run[]): Run => [...runs].sort((a, b) => a.seconds - b.seconds)[(runs.length - 1) >> 1] as Run

async function run(opts: SuiteOptions): Promise<void> {
  const n = Math.min(opts.messages, MAX_MESSAGES)
  const value = makeValue(opts.size)
  const server = await RedisServer.start()
  const admin = new Redis(server.url, { protocol: 2 })
  try {
    const version = /redis_version:(\S+)/.exec(await admin.info('server'))?.[1] ?? '?'
    const bullVersion = (
      (await import('bullmq/package.json', { with: { type: 'json' } })) as { default: { version: string } }
    ).default.version
    log('twainmq bench: redis-shared')
    log(`command: ${opts.command}`)
    log(`date:    ${new Date().toISOString()}`)
    log(
      `machine: node ${process.version}, ${availableParallelism()} cpus (${cpus()[0]?.model ?? '?'}), ${fmtInt(totalmem() / MiB)} MiB RAM, ${process.platform} ${release()}, load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    )
    log(`server:  private redis-server ${version} on 127.0.0.1:${server.port} (no persistence); BullMQ ${bullVersion}`)
    log(
      `setup:   ${opts.repeat} round(s) of ${fmtInt(n)} messages of ${opts.size} B string values${opts.messages > n ? ` (--messages capped at ${fmtInt(MAX_MESSAGES)})` : ''}; ours: ${PARTITIONS} partitions, one shared member (maxInFlight 1000); BullMQ: one Worker, concurrency ${CONCURRENCY}, no-op processor, default job options`,
    )
    log('')
    log('phases:')
    const rounds: Array<{ oursFlow: Run; bullFlow: Run; oursBacklog: Run; bullBacklog: Run }> = []
    for (let r = 1; r <= opts.repeat; r++) {
      const tag = `[${r}/${opts.repeat}]`
      log(`  round ${r} of ${opts.repeat}:`)
      await admin.flushall()
      const of = await oursFlow(server.url, `s${r}:`, n, value, tag)
      const bf = await bullFlow(server.port, `bull${r}`, n, value, tag)
      await admin.flushall()
      const ob = await oursBacklog(server.url, `sb${r}:`, n, value, tag)
      const bb = await bullBacklog(server.port, `bullb${r}`, n, value, tag)
      rounds.push({ oursFlow: of, bullFlow: bf, oursBacklog: ob, bullBacklog: bb })
    }
    await admin.flushall()
    const m = (k: keyof (typeof rounds)[number]) => median(rounds.map((x) => x[k]))
    const rows: string[][] = [['phase', 'messages', 'seconds', 'msgs/s', 'msgs/s range', 'ours / BullMQ']]
    const row = (k: keyof (typeof rounds)[number], base?: Run) => {
      const x = m(k)
      const rates = rounds.map((y) => rate(y[k]))
      rows.push([
        x.label,
        fmtInt(x.messages),
        fmtNum(x.seconds, 2),
        fmtInt(rate(x)),
        rounds.length > 1 ? `${fmtInt(Math.min(...rates))}–${fmtInt(Math.max(...rates))}` : '',
        base ? ratio(rate(x), rate(base)) : '(baseline)',
      ])
    }
    row('bullFlow')
    row('oursFlow', m('bullFlow'))
    row('bullBacklog')
    row('oursBacklog', m('bullBacklog'))
    log('')
    log(`throughput, median of ${opts.repeat} round(s):`)
    log(renderTable(rows, [false, true, true, true, true, true]))
    log('')
    const goals: Array<[string, boolean, string]> = [
      [
        'produce+consume+ack ≥ 10× BullMQ addBulk + Worker',
        rate(m('oursFlow')) >= 10 * rate(m('bullFlow')),
        ratio(rate(m('oursFlow')), rate(m('bullFlow'))),
      ],
      [
        'consume+ack of a backlog ≥ 10× BullMQ Worker',
        rate(m('oursBacklog')) >= 10 * rate(m('bullBacklog')),
        ratio(rate(m('oursBacklog')), rate(m('bullBacklog'))),
      ],
    ]
    log('goals:')
    log(renderTable([['goal', 'result', 'measured'], ...goals.map(([g, ok, x]) => [g, ok ? 'PASS' : 'MISS', x])]))
  } finally {
    admin.disconnect()
    await server.destroy()
  }
}

const suite: Suite = {
  name: 'redis-shared',
  description:
    'Redis shared groups: produce+consume+ack and backlog consume+ack vs BullMQ (addBulk + Worker, concurrency 50)',
  run,
}
export default suite
