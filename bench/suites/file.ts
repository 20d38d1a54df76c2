/*
 * `npm run bench -- file`: the embedded file backend against plain-Node baselines measured in the
 * same run (same machine state, same record shapes).
 *
 *   write  a. producer.sendBatch of 1000 items at a time (awaited)
 *          b. Promise.all of 1000 producer.send calls at a time
 *          baseline: records framed into 64 KiB buffers written with fs.writeSync
 *   read   c. for await over twain.history(topic), memory sampled every 50 ms
 *          baseline: 64 KiB readSync chunks decoded into { key, timestamp, value } objects
 *   tail   e. a child process sends one message every ~3 ms, the parent tails with twain.tail()
 *          baseline: a child appends a line every ~3 ms, the parent uses fs.watch + fs.read
 */

import { readdirSync, statSync } from 'node:fs'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { open, type Twain } from '../../src/index.js'
import { log, machine, makeValue, revision } from '../lib/report.js'
import { plainRead, plainWrite, type KeyWidth } from '../baselines/plain-log.js'
import { TAIL_INTERVAL_MS, TAIL_WARMUP, tailBaseline, tailTwain, type TailResult } from '../lib/tail.js'
import { MemorySampler, fullGc, rssTimeline, type MemoryReport } from '../lib/memory.js'
import { progress } from '../lib/progress.js'
import { MB, MiB, fmtInt, fmtMiB, fmtNum } from '../lib/stats.js'
import type { Suite, SuiteOptions } from '../lib/suite.js'
import { renderTable } from '../lib/table.js'
import { makeTempDir, removeTempDir } from '../lib/tmp.js'

const CHUNK = 1000
/** Read-phase RSS growth we still call "flat". */
const FLAT_RSS_BYTES = 64 * MiB

interface Throughput {
  label: string
  messages: number
  seconds: number
  /** Bytes of values moved (messages × size), for MB/s. */
  payloadBytes: number
  /** Bytes on disk after the phase. */
  diskBytes?: number
}

/** One phase over several rounds: the median round is reported, with the spread. */
interface Aggregate {
  label: string
  runs: Throughput[]
  median: Throughput
  baseline?: Aggregate
}

interface Round {
  bw: Throughput
  br: { t: Throughput; mem: MemoryReport }
  wa: Throughput
  wb: Throughput
  rc: { t: Throughput; mem: MemoryReport }
}

function aggregate(runs: Throughput[], baseline?: Aggregate): Aggregate {
  const sorted = [...runs].sort((x, y) => x.seconds - y.seconds)
  const median = sorted[(sorted.length - 1) >> 1] as Throughput
  return { label: median.label, runs, median, baseline }
}

const msgsPerSec = (t: Throughput) => t.messages / t.seconds
const mbPerSec = (t: Throughput) => t.payloadBytes / MB / t.seconds

function dirBytes(dir: string): number {
  let n = 0
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name)
    n += e.isDirectory() ? dirBytes(p) : statSync(p).size
  }
  return n
}

function phaseDone(label: string, t: Throughput): void {
  log(
    `  ${label.padEnd(40)} ${fmtNum(t.seconds, 2).padStart(7)} s  ${fmtInt(msgsPerSec(t)).padStart(10)} msgs/s  ${fmtNum(mbPerSec(t), 1).padStart(6)} MB/s`,
  )
}

// ---------------------------------------------------------------- write / read throughput

function baselineWrite(dir: string, n: number, keyWidth: KeyWidth, value: string, tag: string): Throughput {
  const path = join(dir, 'plain.log')
  const bar = progress(`${tag} baseline write`, n)
  const t0 = performance.now()
  const r = plainWrite(
    path,
    n,
    keyWidth,
    (i) => i % 2 ** (keyWidth * 8),
    value,
    (i) => bar.update(i),
  )
  const seconds = (performance.now() - t0) / 1000
  bar.stop()
  return {
    label: 'baseline: frame + fs.writeSync 64 KiB',
    messages: n,
    seconds,
    payloadBytes: n * value.length,
    diskBytes: r.bytes,
  }
}

function baselineRead(dir: string, n: number, keyWidth: KeyWidth): { t: Throughput; mem: MemoryReport } {
  const path = join(dir, 'plain.log')
  fullGc()
  const mem = new MemorySampler(50).start()
  const t0 = performance.now()
  let touched = 0
  let payload = 0
  // plainRead is synchronous, so the sampler cannot fire during it; sample between batches instead.
  let lastSample = t0
  const peak = { rss: 0, heap: 0 }
  const got = plainRead(path, keyWidth, (batch) => {
    for (const r of batch) {
      touched += r.key + (r.timestamp > 0 ? 1 : 0)
      payload += r.value.length
    }
    const now = performance.now()
    if (now - lastSample >= 50) {
      lastSample = now
      const m = process.memoryUsage()
      if (m.rss > peak.rss) peak.rss = m.rss
      if (m.heapUsed > peak.heap) peak.heap = m.heapUsed
    }
  })
  const seconds = (performance.now() - t0) / 1000
  const report = mem.stop()
  report.peakRss = Math.max(report.peakRss, peak.rss)
  report.peakHeapUsed = Math.max(report.peakHeapUsed, peak.heap)
  if (got !== n) throw new Error(`baseline read ${got} records, expected ${n}`)
  if (touched < 0) log('unreachable')
  return {
    t: { label: 'baseline: readSync 64 KiB + decode', messages: got, seconds, payloadBytes: payload },
    mem: report,
  }
}

async function writeSendBatch(twain: Twain, topic: string, n: number, value: string, tag: string): Promise<Throughput> {
  const producer = twain.producer<string>(topic)
  const bar = progress(`${tag} a. producer.sendBatch(1000)`, n)
  const t0 = performance.now()
  for (let i = 0; i < n; i += CHUNK) {
    const m = Math.min(CHUNK, n - i)
    const items = new Array<{ key: number; value: string }>(m)
    for (let j = 0; j < m; j++) items[j] = { key: i + j, value }
    await producer.sendBatch(items)
    if ((i / CHUNK) % 64 === 0) bar.update(i + m)
  }
  await producer.close()
  const seconds = (performance.now() - t0) / 1000
  bar.stop()
  const length = await twain.length(topic)
  if (length !== n) throw new Error(`topic ${topic} holds ${length} messages after sendBatch, expected ${n}`)
  return { label: 'a. producer.sendBatch × 1000', messages: n, seconds, payloadBytes: n * value.length }
}

async function writeSendAll(twain: Twain, topic: string, n: number, value: string, tag: string): Promise<Throughput> {
  const producer = twain.producer<string>(topic)
  const bar = progress(`${tag} b. Promise.all(1000 × send)`, n)
  const t0 = performance.now()
  const sends = new Array<Promise<unknown>>(CHUNK)
  for (let i = 0; i < n; i += CHUNK) {
    const m = Math.min(CHUNK, n - i)
    sends.length = m
    for (let j = 0; j < m; j++) sends[j] = producer.send(i + j, value)
    await Promise.all(sends)
    if ((i / CHUNK) % 64 === 0) bar.update(i + m)
  }
  await producer.close()
  const seconds = (performance.now() - t0) / 1000
  bar.stop()
  const length = await twain.length(topic)
  if (length !== n) throw new Error(`topic ${topic} holds ${length} messages after send, expected ${n}`)
  return { label: 'b. Promise.all(1000 × producer.send)', messages: n, seconds, payloadBytes: n * value.length }
}

async function readHistory(
  twain: Twain,
  topic: string,
  n: number,
  tag: string,
): Promise<{ t: Throughput; mem: MemoryReport }> {
  fullGc()
  const bar = progress(`${tag} c. for await twain.history()`, n)
  const mem = new MemorySampler(50).start()
  const t0 = performance.now()
  let count = 0
  let payload = 0
  let touched = 0
  for await (const m of twain.history<string>(topic)) {
    payload += m.value.length
    touched += (m.key as number) + (m.timestamp > 0 ? 1 : 0)
    if ((++count & 0xffff) === 0) bar.update(count)
  }
  const seconds = (performance.now() - t0) / 1000
  const report = mem.stop()
  bar.stop()
  if (count !== n) throw new Error(`history read ${count} messages, expected ${n}`)
  if (touched < 0) log('unreachable')
  return {
    t: { label: 'c. for await (twain.history(topic))', messages: count, seconds, payloadBytes: payload },
    mem: report,
  }
}

// ---------------------------------------------------------------- tail latency

// ---------------------------------------------------------------- report

function ratio(ours: number, base: number): string {
  return `${fmtNum(ours / base, 2)}×`
}

function throughputTable(rows: Aggregate[]): string {
  const out: string[][] = [
    ['phase', 'messages', 'seconds', 'msgs/s', 'MB/s', 'msgs/s range', 'B/msg on disk', 'ours / baseline'],
  ]
  for (const a of rows) {
    const t = a.median
    const rates = a.runs.map(msgsPerSec)
    out.push([
      t.label,
      fmtInt(t.messages),
      fmtNum(t.seconds, 2),
      fmtInt(msgsPerSec(t)),
      fmtNum(mbPerSec(t), 1),
      a.runs.length > 1 ? `${fmtInt(Math.min(...rates))}–${fmtInt(Math.max(...rates))}` : '',
      t.diskBytes === undefined ? '' : fmtNum(t.diskBytes / t.messages, 1),
      a.baseline ? ratio(msgsPerSec(t), msgsPerSec(a.baseline.median)) : '(baseline)',
    ])
  }
  return renderTable(out, [false, true, true, true, true, true, true, true])
}

function memoryTable(rows: Array<{ label: string; mem: MemoryReport; timeline: boolean }>): string {
  const out: string[][] = [
    ['read phase', 'RSS start', 'RSS peak', 'RSS growth', 'heap start', 'heap peak', 'samples', 'RSS timeline (MiB)'],
  ]
  for (const { label, mem, timeline } of rows) {
    out.push([
      label,
      fmtMiB(mem.start.rss),
      fmtMiB(mem.peakRss),
      fmtMiB(mem.peakRss - mem.start.rss),
      fmtMiB(mem.start.heapUsed),
      fmtMiB(mem.peakHeapUsed),
      String(mem.samples.length),
      timeline ? rssTimeline(mem).join(' ') : '(sync loop: peak sampled between chunks)',
    ])
  }
  return renderTable(out, [false, true, true, true, true, true, true, false])
}

function latencyTable(rows: TailResult[], base: TailResult): string {
  const out: string[][] = [
    ['tail', 'received', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'mean ms', 'p50 ours / baseline'],
  ]
  for (const r of rows) {
    const s = r.summary
    out.push([
      r.label,
      `${r.received}/${r.sent}`,
      fmtNum(s.p50, 3),
      fmtNum(s.p90, 3),
      fmtNum(s.p99, 3),
      fmtNum(s.max, 3),
      fmtNum(s.mean, 3),
      r === base ? '(baseline)' : ratio(s.p50, base.summary.p50),
    ])
  }
  return renderTable(out, [false, true, true, true, true, true, true, true])
}

// ---------------------------------------------------------------- the suite

/** One round of the throughput phases, each on a fresh temp dir removed afterwards. */
async function throughputRound(
  n: number,
  keyType: 'u16' | 'u32',
  keyWidth: KeyWidth,
  value: string,
  tag: string,
): Promise<Round> {
  // Baselines first in each round, so they never run in a heap our phases have just grown.
  const plainDir = makeTempDir('plain')
  let bw: Throughput
  let br: Round['br']
  try {
    bw = baselineWrite(plainDir, n, keyWidth, value, tag)
    phaseDone(bw.label, bw)
    br = baselineRead(plainDir, n, keyWidth)
    phaseDone(br.t.label, br.t)
  } finally {
    removeTempDir(plainDir)
  }
  const root = makeTempDir('file')
  const twain = await open(root)
  try {
    await twain.createTopic('batch', { keyType })
    await twain.createTopic('send', { keyType })
    const wa = await writeSendBatch(twain, 'batch', n, value, tag)
    wa.diskBytes = dirBytes(join(root, 'batch'))
    phaseDone(wa.label, wa)
    const wb = await writeSendAll(twain, 'send', n, value, tag)
    wb.diskBytes = dirBytes(join(root, 'send'))
    phaseDone(wb.label, wb)
    const rc = await readHistory(twain, 'batch', n, tag)
    phaseDone(rc.t.label, rc.t)
    return { bw, br, wa, wb, rc }
  } finally {
    await twain.close()
    removeTempDir(root)
  }
}

async function run(opts: SuiteOptions): Promise<void> {
  const n = opts.messages
  const size = opts.size
  const keyType = n <= 65536 ? ('u16' as const) : ('u32' as const)
  const keyWidth: KeyWidth = keyType === 'u16' ? 2 : 4
  const value = makeValue(size)

  log(`twainmq bench: file`)
  log(`command: ${opts.command}`)
  log(`date:    ${new Date().toISOString()}`)
  log(
    `machine: ${machine()}, load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  )
  log(`source:  ${revision()}`)
  log(
    `setup:   ${opts.repeat} round(s) of ${fmtInt(n)} messages of ${size} B string values, ${keyType} keys, 1 partition, fsync 'never'; tail: ${opts.tailMessages} messages every ~${TAIL_INTERVAL_MS} ms (+${TAIL_WARMUP} warm-up not counted)`,
  )
  log('')
  log('phases:')

  const rounds: Round[] = []
  for (let r = 1; r <= opts.repeat; r++) {
    const tag = `[${r}/${opts.repeat}]`
    log(`  round ${r} of ${opts.repeat}:`)
    rounds.push(await throughputRound(n, keyType, keyWidth, value, tag))
  }
  const bw = aggregate(rounds.map((x) => x.bw))
  const br = aggregate(rounds.map((x) => x.br.t))
  const wa = aggregate(
    rounds.map((x) => x.wa),
    bw,
  )
  const wb = aggregate(
    rounds.map((x) => x.wb),
    bw,
  )
  const rc = aggregate(
    rounds.map((x) => x.rc.t),
    br,
  )
  // Memory: the round whose read grew RSS the most (the least flat one).
  const growth = (m: MemoryReport) => m.peakRss - m.start.rss
  const worst = <K extends 'br' | 'rc'>(k: K) =>
    rounds.map((x) => x[k].mem).reduce((a, b) => (growth(b) > growth(a) ? b : a))
  const brMem = worst('br')
  const rcMem = worst('rc')

  const tb = await tailBaseline(opts.tailMessages)
  log(`  ${tb.label.padEnd(40)} p50 ${fmtNum(tb.summary.p50, 3)} ms  p99 ${fmtNum(tb.summary.p99, 3)} ms`)
  const tt = await tailTwain(opts.tailMessages)
  log(`  ${tt.label.padEnd(40)} p50 ${fmtNum(tt.summary.p50, 3)} ms  p99 ${fmtNum(tt.summary.p99, 3)} ms`)

  log('')
  log(`throughput, median of ${opts.repeat} round(s) (MB/s = value bytes; ours / baseline = ratio of median msgs/s):`)
  log(throughputTable([bw, wa, wb, br, rc]))
  log('')
  const gcNote = fullGc() ? 'after a full GC' : 'no --expose-gc, so without a GC first'
  log(
    `memory while reading ${fmtInt(n)} messages (${fmtMiB(n * size)} of values; sampled every 50 ms ${gcNote}; the round with the largest RSS growth):`,
  )
  log(
    memoryTable([
      { label: 'baseline read', mem: brMem, timeline: false },
      { label: 'c. twain.history()', mem: rcMem, timeline: true },
    ]),
  )
  log('')
  log(`cross-process notice latency (child → parent, wall clock from performance.timeOrigin + now()):`)
  log(latencyTable([tb, tt], tb))
  log('')

  const rate = (a: Aggregate) => msgsPerSec(a.median)
  const goals: Array<[string, boolean, string]> = [
    // Issue 26 raised the write and read goals to 0.65×; `Promise.all(send)` keeps 0.5×: the floors
    // suite measures a producer with only a promise per send at about 0.59× (decision 177).
    ['write sendBatch ≥ 0.65× baseline', rate(wa) >= 0.65 * rate(bw), ratio(rate(wa), rate(bw))],
    ['write Promise.all(send) ≥ 0.5× baseline', rate(wb) >= 0.5 * rate(bw), ratio(rate(wb), rate(bw))],
    ['read history ≥ 0.65× baseline', rate(rc) >= 0.65 * rate(br), ratio(rate(rc), rate(br))],
    [
      `memory flat while reading (RSS growth < ${fmtMiB(FLAT_RSS_BYTES)})`,
      growth(rcMem) < FLAT_RSS_BYTES,
      `+${fmtMiB(growth(rcMem))}`,
    ],
    [
      'tail p50 ≤ 2× fs.watch p50 (or < 1 ms)',
      tt.summary.p50 <= 2 * tb.summary.p50 || tt.summary.p50 < 1,
      `${fmtNum(tt.summary.p50, 3)} ms vs ${fmtNum(tb.summary.p50, 3)} ms = ${ratio(tt.summary.p50, tb.summary.p50)}`,
    ],
  ]
  log('goals:')
  log(renderTable([['goal', 'result', 'measured'], ...goals.map(([g, ok, m]) => [g, ok ? 'PASS' : 'MISS', m])]))
}

const suite: Suite = {
  name: 'file',
  description:
    'file backend: sendBatch / Promise.all(send) / history throughput, read memory, cross-process tail latency, vs plain-Node baselines',
  run,
}
export default suite
