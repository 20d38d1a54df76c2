/*
 * `npm run bench -- gateway`: the HTTP gateway (`twainmq serve`, file backend) against the Durable
 * Streams reference server (`@durable-streams/server`, file-backed), each a child process over a
 * fresh temp directory on loopback, with the same workload from this process (node:http clients):
 *
 *   a. sequential appends: `--posts` POSTs of one JSON item each, one at a time on one connection
 *   b. batched appends: `--messages` JSON items, 100 per POST, one at a time
 *   c. catch-up read: the stream of (b) from the start, paged by Stream-Next-Offset, 5 times (the
 *      median is reported, and the first, cold read on its own)
 *   d. append→SSE latency: `--tail-messages` single-item POSTs, each timed until an SSE reader has it;
 *      before each, a HEAD of the stream is timed: the server's local latency on loopback
 *   e. fan-out: `--readers` SSE readers of one stream: server RSS per reader, and the delivery
 *      latency of each of 20 appends to every reader (p50/p99 over all deliveries). Measured on
 *      fresh server processes: what (a)–(d) left to collect (megabytes of read buffers) made the
 *      RSS difference of 1,000 readers swing by more than their own memory.
 *
 * Items are JSON strings of `--size` bytes. (a)–(c) run `--repeat` rounds, the median is reported.
 * Both servers run at the same time and each phase alternates between them.
 */
import { loadavg } from 'node:os'
import { keepAlive, openSse, sendOk, type SseClient } from '../lib/http.js'
import { startReference, startTwainmq, type Peer } from '../lib/peers.js'
import { log, machine, makeValue, revision } from '../lib/report.js'
import { fmtInt, fmtNum, sleep, summarise, type LatencySummary } from '../lib/stats.js'
import type { Suite, SuiteOptions } from '../lib/suite.js'
import { renderTable } from '../lib/table.js'

const BATCH = 100
const FANOUT_APPENDS = 20
const JSON_TYPE = { 'content-type': 'application/json' }

interface Figures {
  sequential: number
  batched: number
  catchUp: number
  catchUpCold: number
  catchUpMBps: number
  latency: LatencySummary
  /** HEAD round trip p50 (ms), measured between the latency samples. */
  local: number
  rssPerReader: number
  delivery: LatencySummary
  cpuSeconds: number
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[(xs.length - 1) >> 1] as number

async function create(peer: Peer, name: string): Promise<string> {
  const url = `${peer.streams}${name}`
  await sendOk(keepAlive(), 'PUT', url, [201], JSON_TYPE)
  return url
}

async function appendSequential(peer: Peer, name: string, posts: number, item: string): Promise<number> {
  const url = await create(peer, name)
  const agent = keepAlive()
  const body = `[${item}]`
  const t0 = performance.now()
  for (let i = 0; i < posts; i++) await sendOk(agent, 'POST', url, [200, 204], JSON_TYPE, body)
  const s = (performance.now() - t0) / 1000
  agent.destroy()
  return posts / s
}

async function appendBatched(peer: Peer, name: string, messages: number, item: string): Promise<number> {
  const url = await create(peer, name)
  const agent = keepAlive()
  const full = `[${Array.from({ length: BATCH }, () => item).join(',')}]`
  const t0 = performance.now()
  for (let sent = 0; sent < messages; sent += BATCH) {
    const n = Math.min(BATCH, messages - sent)
    await sendOk(
      agent,
      'POST',
      url,
      [200, 204],
      JSON_TYPE,
      n === BATCH ? full : `[${Array.from({ length: n }, () => item).join(',')}]`,
    )
  }
  const s = (performance.now() - t0) / 1000
  agent.destroy()
  return messages / s
}

/** Read a stream from the start until up to date; returns [msgs/s, MB/s of bodies]. */
async function catchUp(peer: Peer, name: string, messages: number): Promise<[number, number]> {
  const url = `${peer.streams}${name}`
  const agent = keepAlive()
  let offset = '-1'
  let items = 0
  let bytes = 0
  const t0 = performance.now()
  for (;;) {
    const r = await sendOk(agent, 'GET', `${url}?offset=${encodeURIComponent(offset)}`, [200])
    items += (JSON.parse(r.body.toString('utf8')) as unknown[]).length
    bytes += r.body.length
    offset = String(r.headers['stream-next-offset'])
    if (r.headers['stream-up-to-date'] === 'true') break
  }
  const s = (performance.now() - t0) / 1000
  agent.destroy()
  if (items !== messages) throw new Error(`${peer.label}: catch-up read ${items} items, expected ${messages}`)
  return [items / s, bytes / 1e6 / s]
}

async function tailOffset(url: string): Promise<string> {
  const r = await sendOk(keepAlive(), 'HEAD', url, [200])
  return String(r.headers['stream-next-offset'])
}

/** Wait until `check` holds, yielding to the event loop (timeout: `ms`). */
async function until(check: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = performance.now() + ms
  while (!check()) {
    if (performance.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`)
    await new Promise((r) => setImmediate(r))
  }
}

/** Phase d: append→SSE, and the server's local latency (a HEAD round trip on the same connection kind) it is compared with. */
interface Push {
  push: LatencySummary
  /** HEAD of the stream, p50 (ms): what any answer from this server costs on loopback. */
  local: number
}

async function latency(peer: Peer, count: number, item: string): Promise<Push> {
  const url = await create(peer, 'latency')
  const reader = openSse(keepAlive(), url, await tailOffset(url))
  await reader.ready
  let arrived = 0
  reader.onData = (_items, at) => (arrived = at)
  const agent = keepAlive()
  const samples: number[] = []
  const heads: number[] = []
  for (let i = 1; i <= count; i++) {
    const h0 = performance.now()
    await sendOk(agent, 'HEAD', url, [200])
    heads.push(performance.now() - h0)
    const t0 = performance.now()
    await sendOk(agent, 'POST', url, [200, 204], JSON_TYPE, `[${item}]`)
    await until(() => reader.items >= i, 10_000, `SSE delivery ${i}`)
    samples.push(arrived - t0)
  }
  reader.close()
  agent.destroy()
  return { push: summarise(samples), local: median(heads) }
}

async function fanOut(
  peer: Peer,
  readers: number,
  item: string,
): Promise<{ rssPerReader: number; delivery: LatencySummary }> {
  const url = await create(peer, 'fanout')
  const offset = await tailOffset(url)
  await peer.collect() // what the phases before left to collect is not the readers' memory
  const before = peer.rss()
  const agent = keepAlive(readers + 10)
  const clients: SseClient[] = []
  for (let i = 0; i < readers; i += 100) {
    // 50 readers per loopback source address: under the gateway's 64 live reads per client.
    const wave = Array.from({ length: Math.min(100, readers - i) }, (_, j) =>
      openSse(agent, url, offset, `127.0.1.${1 + Math.floor((i + j) / 50)}`),
    )
    await Promise.all(wave.map((c) => c.ready))
    clients.push(...wave)
  }
  await sleep(200)
  await peer.collect()
  const after = peer.rss()
  const writer = keepAlive()
  const samples: number[] = []
  for (let k = 1; k <= FANOUT_APPENDS; k++) {
    let t0 = 0
    for (const c of clients) c.onData = (_items, at) => samples.push(at - t0)
    t0 = performance.now()
    await sendOk(writer, 'POST', url, [200, 204], JSON_TYPE, `[${item}]`)
    await until(() => clients.every((c) => c.items >= k), 60_000, `append ${k} at all ${readers} readers`)
  }
  for (const c of clients) c.close()
  agent.destroy()
  writer.destroy()
  return { rssPerReader: (after - before) / readers, delivery: summarise(samples) }
}

/** Reads of each stream in phase c: the first is cold (the reads' code not yet optimised), the median is reported. */
const CATCH_UP_READS = 5

/** Phases a–c of one round on one peer. */
async function throughputRound(
  peer: Peer,
  o: SuiteOptions & GatewayExtras,
  item: string,
  r: number,
  f: Rounds,
): Promise<void> {
  f.seq.push(await appendSequential(peer, `seq-${r}`, o.posts, item))
  f.bat.push(await appendBatched(peer, `batch-${r}`, o.messages, item))
  const reads: Array<[number, number]> = []
  for (let i = 0; i < CATCH_UP_READS; i++) reads.push(await catchUp(peer, `batch-${r}`, o.messages))
  f.cold.push(reads[0]![0])
  f.cu.push(median(reads.map((x) => x[0])))
  f.cuMB.push(median(reads.map((x) => x[1])))
  log(
    `  ${peer.label}, round ${r}: sequential ${fmtInt(f.seq.at(-1)!)} POSTs/s, batched ${fmtInt(f.bat.at(-1)!)} msgs/s, catch-up ${reads.map((x) => fmtInt(x[0])).join(' / ')} msgs/s`,
  )
}

interface Rounds {
  seq: number[]
  bat: number[]
  cold: number[]
  cu: number[]
  cuMB: number[]
}

/**
 * Both servers run at once and every phase alternates between them (a–c round by round, then d,
 * then e), so a change in the machine's load meets both alike. Phase e runs on `fresh()` servers.
 */
async function measureBoth(
  peers: readonly Peer[],
  fresh: () => Promise<readonly Peer[]>,
  o: SuiteOptions & GatewayExtras,
  item: string,
): Promise<Figures[]> {
  const rounds = peers.map((): Rounds => ({ seq: [], bat: [], cold: [], cu: [], cuMB: [] }))
  const cpu0 = peers.map((p) => p.cpuSeconds())
  for (let r = 1; r <= o.repeat; r++)
    for (const [i, peer] of peers.entries()) await throughputRound(peer, o, item, r, rounds[i]!)
  const lat: Push[] = []
  for (const peer of peers) {
    lat.push(await latency(peer, o.tailMessages, item))
    log(
      `  ${peer.label}: append→SSE p50 ${fmtNum(lat.at(-1)!.push.p50, 3)} ms, p99 ${fmtNum(lat.at(-1)!.push.p99, 3)} ms; HEAD round trip p50 ${fmtNum(lat.at(-1)!.local, 3)} ms`,
    )
  }
  const cpu = peers.map((p, i) => p.cpuSeconds() - cpu0[i]!)
  const fans: Array<{ rssPerReader: number; delivery: LatencySummary }> = []
  for (const peer of await fresh()) {
    fans.push(await fanOut(peer, o.readers, item))
    log(
      `  ${peer.label}: ${fmtInt(o.readers)} SSE readers, ${fmtNum(fans.at(-1)!.rssPerReader / 1024, 1)} KiB RSS each, delivery p99 ${fmtNum(fans.at(-1)!.delivery.p99, 1)} ms`,
    )
  }
  return peers.map((_peer, i) => {
    const f = rounds[i]!
    return {
      sequential: median(f.seq),
      batched: median(f.bat),
      catchUpCold: median(f.cold),
      catchUp: median(f.cu),
      catchUpMBps: median(f.cuMB),
      latency: lat[i]!.push,
      local: lat[i]!.local,
      ...fans[i]!,
      cpuSeconds: cpu[i]!,
    }
  })
}

/** Options only this suite takes (bench/run.ts: --posts, --readers, --cpu-prof). */
export interface GatewayExtras {
  posts: number
  readers: number
  cpuProf: string | undefined
}

async function run(options: SuiteOptions): Promise<void> {
  const o = options as SuiteOptions & GatewayExtras
  const item = JSON.stringify(makeValue(o.size))
  log('twainmq bench: gateway (HTTP, Durable Streams protocol)')
  log(`command: ${o.command}`)
  log(
    `date:    ${new Date().toISOString()}, load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  )
  log(`machine: ${machine()}`)
  log(`source:  ${revision()}`)
  log(
    `setup:   ${fmtInt(o.posts)} sequential POSTs; ${fmtInt(o.messages)} messages in POSTs of ${BATCH}, read back from the start; ${fmtInt(o.tailMessages)} latency samples; ${fmtInt(o.readers)} SSE readers × ${FANOUT_APPENDS} appends; items: JSON strings of ${o.size} B; ${o.repeat} round(s) of a–c, median reported`,
  )
  const peers: Peer[] = []
  const start = async () => {
    for (const p of peers.splice(0)) await p.stop()
    peers.push(await startTwainmq(o.cpuProf === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${o.cpuProf}`]))
    peers.push(await startReference())
    return peers
  }
  let figures: Figures[]
  try {
    figures = await measureBoth([...(await start())], start, o, item)
  } finally {
    for (const p of peers) await p.stop()
  }
  const [ours, ref] = figures as [Figures, Figures]
  const x = (a: number, b: number) => `${fmtNum(a / b, 2)}×`
  log('')
  log(
    renderTable(
      [
        ['phase', 'twainmq serve', 'reference', 'ours / reference'],
        [
          'a. sequential append (POSTs/s, 1 item each)',
          fmtInt(ours.sequential),
          fmtInt(ref.sequential),
          x(ours.sequential, ref.sequential),
        ],
        [
          `b. batched append (msgs/s, ${BATCH} per POST)`,
          fmtInt(ours.batched),
          fmtInt(ref.batched),
          x(ours.batched, ref.batched),
        ],
        [
          `c. catch-up read (msgs/s, median of ${CATCH_UP_READS} reads)`,
          fmtInt(ours.catchUp),
          fmtInt(ref.catchUp),
          x(ours.catchUp, ref.catchUp),
        ],
        [
          'c. catch-up read, first (cold) read (msgs/s)',
          fmtInt(ours.catchUpCold),
          fmtInt(ref.catchUpCold),
          x(ours.catchUpCold, ref.catchUpCold),
        ],
        [
          'c. catch-up read (MB/s of bodies)',
          fmtNum(ours.catchUpMBps, 1),
          fmtNum(ref.catchUpMBps, 1),
          x(ours.catchUpMBps, ref.catchUpMBps),
        ],
        [
          'd. append→SSE p50 (ms)',
          fmtNum(ours.latency.p50, 3),
          fmtNum(ref.latency.p50, 3),
          x(ours.latency.p50, ref.latency.p50),
        ],
        [
          'd. append→SSE p99 (ms)',
          fmtNum(ours.latency.p99, 3),
          fmtNum(ref.latency.p99, 3),
          x(ours.latency.p99, ref.latency.p99),
        ],
        [
          'd. local latency: HEAD round trip p50 (ms)',
          fmtNum(ours.local, 3),
          fmtNum(ref.local, 3),
          x(ours.local, ref.local),
        ],
        [
          'd. append→SSE p50 over local latency (ms)',
          fmtNum(ours.latency.p50 - ours.local, 3),
          fmtNum(ref.latency.p50 - ref.local, 3),
          '',
        ],
        [
          `e. RSS per SSE reader (KiB, ${fmtInt(o.readers)} readers)`,
          fmtNum(ours.rssPerReader / 1024, 1),
          fmtNum(ref.rssPerReader / 1024, 1),
          x(ours.rssPerReader, ref.rssPerReader),
        ],
        [
          'e. fan-out delivery p50 (ms)',
          fmtNum(ours.delivery.p50, 1),
          fmtNum(ref.delivery.p50, 1),
          x(ours.delivery.p50, ref.delivery.p50),
        ],
        [
          'e. fan-out delivery p99 (ms)',
          fmtNum(ours.delivery.p99, 1),
          fmtNum(ref.delivery.p99, 1),
          x(ours.delivery.p99, ref.delivery.p99),
        ],
        [
          'server CPU seconds, phases a–d',
          fmtNum(ours.cpuSeconds, 1),
          fmtNum(ref.cpuSeconds, 1),
          x(ours.cpuSeconds, ref.cpuSeconds),
        ],
      ],
      [false, true, true, true],
    ),
  )
  log('')
  const goals: Array<[string, boolean, string]> = [
    ['sequential append ≥ 2× reference', ours.sequential >= 2 * ref.sequential, x(ours.sequential, ref.sequential)],
    ['batched append ≥ 2× reference', ours.batched >= 2 * ref.batched, x(ours.batched, ref.batched)],
    ['catch-up read ≥ 2× reference', ours.catchUp >= 2 * ref.catchUp, x(ours.catchUp, ref.catchUp)],
    [
      'append→SSE p50 ≤ reference',
      ours.latency.p50 <= ref.latency.p50,
      `${fmtNum(ours.latency.p50, 3)} vs ${fmtNum(ref.latency.p50, 3)} ms`,
    ],
    [
      'append→SSE p50 within 1 ms of local latency',
      ours.latency.p50 - ours.local < 1,
      `${fmtNum(ours.latency.p50, 3)} − ${fmtNum(ours.local, 3)} ms`,
    ],
    ['append→SSE p50 < 1 ms (absolute)', ours.latency.p50 < 1, `${fmtNum(ours.latency.p50, 3)} ms`],
    [
      `${fmtInt(o.readers)} SSE readers at < 50 KiB RSS each`,
      ours.rssPerReader < 50 * 1024,
      `${fmtNum(ours.rssPerReader / 1024, 1)} KiB`,
    ],
  ]
  log('goals:')
  log(renderTable([['goal', 'result', 'measured'], ...goals.map(([g, ok, m]) => [g, ok ? 'PASS' : 'MISS', m])]))
  if (o.cpuProf !== undefined) log(`\nCPU profile of the twainmq serve process: ${o.cpuProf}/*.cpuprofile`)
}

const suite: Suite = {
  name: 'gateway',
  description:
    'HTTP gateway (twainmq serve) vs @durable-streams/server file-backed: appends, catch-up, SSE latency, 1,000-reader fan-out',
  run,
}
export default suite
