/**
 * The report of the peers bench: per row, the median msgs/s (or latency) of twainmq and of its
 * peer, the median of the same-round ratios, the goal of issue 15 for that row and whether it is met.
 */
import { rate, type Throughput } from './phases.js'
import { log } from './report.js'
import { fmtInt, fmtNum, median, type LatencySummary } from './stats.js'
import { renderTable } from './table.js'

interface TwainSide {
  batch: Throughput
  all: Throughput
  history: Throughput
  group: Throughput
  tail: LatencySummary
}

export interface PeersRound {
  js: { produce: Throughput; read: Throughput; explicit: Throughput; all: Throughput; tail: LatencySummary }
  file: TwainSide & { plain: Throughput; rawTail: LatencySummary }
  redis: TwainSide & { shared: Throughput }
}

const x = (v: number): string => `${fmtNum(v, 2)}×`
const ms = (v: number): string => `${fmtNum(v, 3)} ms`

interface Row {
  row: string
  ours: string
  peer: string
  ratio: number
  goal: string
  ok: boolean
}

export function peersReport(rounds: PeersRound[]): void {
  const rows: Row[] = []
  /** Throughput row: ratio = median over rounds of ours / peer in the same round; `min` the goal. */
  const thr = (
    row: string,
    ours: (r: PeersRound) => Throughput,
    peer: (r: PeersRound) => Throughput,
    min: number,
    goal = `≥ ${fmtNum(min, 2)}×`,
  ) => {
    const ratio = median(rounds.map((r) => rate(ours(r)) / rate(peer(r))))
    rows.push({
      row,
      ours: fmtInt(median(rounds.map((r) => rate(ours(r))))),
      peer: fmtInt(median(rounds.map((r) => rate(peer(r))))),
      ratio,
      goal,
      ok: ratio >= min,
    })
  }
  /** Latency row: ratio = median over rounds of ours / peer; goal met when ≤ `max`. */
  const lat = (
    row: string,
    ours: (r: PeersRound) => number,
    peer: (r: PeersRound) => number,
    max: number,
    goal: string,
    extra = true,
  ) => {
    const ratio = median(rounds.map((r) => ours(r) / peer(r)))
    rows.push({
      row,
      ours: ms(median(rounds.map(ours))),
      peer: ms(median(rounds.map(peer))),
      ratio,
      goal,
      ok: ratio <= max && extra,
    })
  }
  thr(
    'produce: file sendBatch / JetStream publish',
    (r) => r.file.batch,
    (r) => r.js.produce,
    1,
  )
  thr(
    'produce: file Promise.all(send) / JetStream publish',
    (r) => r.file.all,
    (r) => r.js.produce,
    1,
  )
  thr(
    'produce: Redis sendBatch / JetStream publish',
    (r) => r.redis.batch,
    (r) => r.js.produce,
    1,
  )
  thr(
    'produce: Redis Promise.all(send) / JetStream publish',
    (r) => r.redis.all,
    (r) => r.js.produce,
    1,
  )
  thr(
    'produce: file Promise.all(send) / plain-Node framed log',
    (r) => r.file.all,
    (r) => r.file.plain,
    0.75,
  )
  thr(
    'read: file history / JetStream ordered consumer',
    (r) => r.file.history,
    (r) => r.js.read,
    1,
  )
  thr(
    'read: Redis history / JetStream ordered consumer',
    (r) => r.redis.history,
    (r) => r.js.read,
    1,
  )
  thr(
    'consume+ack: file partitioned / JetStream AckPolicy.All',
    (r) => r.file.group,
    (r) => r.js.all,
    1,
  )
  thr(
    'consume+ack: file partitioned / file history',
    (r) => r.file.group,
    (r) => r.file.history,
    0.8,
  )
  thr(
    'consume+ack: Redis partitioned / JetStream AckPolicy.All',
    (r) => r.redis.group,
    (r) => r.js.all,
    1.2,
  )
  thr(
    'consume+ack: Redis partitioned / JetStream AckPolicy.Explicit',
    (r) => r.redis.group,
    (r) => r.js.explicit,
    1.2,
  )
  thr(
    'consume+ack: Redis partitioned / Redis history',
    (r) => r.redis.group,
    (r) => r.redis.history,
    0.8,
  )
  thr(
    'consume+ack: Redis shared / JetStream AckPolicy.All',
    (r) => r.redis.shared,
    (r) => r.js.all,
    1.2,
  )
  thr(
    'consume+ack: Redis shared / JetStream AckPolicy.Explicit',
    (r) => r.redis.shared,
    (r) => r.js.explicit,
    1.2,
  )
  lat(
    'tail p50: file / JetStream',
    (r) => r.file.tail.p50,
    (r) => r.js.tail.p50,
    1,
    '≤ 1×',
  )
  lat(
    'tail p50: file / raw fs.watch reader',
    (r) => r.file.tail.p50,
    (r) => r.file.rawTail.p50,
    2,
    '≤ 2×',
  )
  lat(
    'tail p99: file / JetStream',
    (r) => r.file.tail.p99,
    (r) => r.js.tail.p99,
    1.2,
    '≤ 1.2×',
  )
  lat(
    'tail p50: Redis / JetStream',
    (r) => r.redis.tail.p50,
    (r) => r.js.tail.p50,
    1,
    '≤ 1×',
  )
  const worst = Math.max(...rounds.map((r) => r.redis.tail.p99))
  lat(
    'tail p99: Redis / JetStream (and every round ≤ 5 ms)',
    (r) => r.redis.tail.p99,
    (r) => r.js.tail.p99,
    1.2,
    `≤ 1.2×, max ${ms(worst)} ≤ 5 ms`,
    worst <= 5,
  )

  log('')
  log(
    `peers, median of ${rounds.length} round(s); ratio = median of the same-round ratios (ours / peer; for latency lower is better):`,
  )
  log(
    renderTable(
      [
        ['row', 'ours', 'peer', 'ratio', 'goal', 'verdict'],
        ...rows.map((r) => [r.row, r.ours, r.peer, x(r.ratio), r.goal, r.ok ? 'MET' : 'MISS']),
      ],
      [false, true, true, true, false, false],
    ),
  )
  log('')
  log('throughput medians (msgs/s) and latency per round:')
  const tp = (label: string, f: (r: PeersRound) => Throughput) => [
    label,
    fmtInt(median(rounds.map((r) => rate(f(r))))),
    rounds.map((r) => fmtInt(rate(f(r)))).join(' / '),
  ]
  log(
    renderTable(
      [
        ['phase', 'msgs/s', 'rounds'],
        tp('JetStream: 1000 × js.publish in flight', (r) => r.js.produce),
        tp('JetStream: ordered consumer', (r) => r.js.read),
        tp('JetStream: durable pull, AckPolicy.Explicit', (r) => r.js.explicit),
        tp('JetStream: durable pull, AckPolicy.All', (r) => r.js.all),
        tp('plain Node: framed log, fs.writeSync 64 KiB', (r) => r.file.plain),
        ...(['file', 'redis'] as const).flatMap((s) => [
          tp(`${s}: sendBatch × 1000`, (r) => r[s].batch),
          tp(`${s}: Promise.all(1000 × send)`, (r) => r[s].all),
          tp(`${s}: history`, (r) => r[s].history),
          tp(`${s}: partitioned group, ack each`, (r) => r[s].group),
        ]),
        tp('redis: shared group, ack each', (r) => r.redis.shared),
      ],
      [false, true, true],
    ),
  )
  log('')
  const tl = (label: string, f: (r: PeersRound) => LatencySummary) => [
    label,
    ...rounds.map((r) => `${fmtNum(f(r).p50, 3)} / ${fmtNum(f(r).p99, 3)} / ${fmtNum(f(r).max, 2)}`),
  ]
  log(
    renderTable([
      ['send → other process (p50 / p99 / max ms)', ...rounds.map((_, i) => `round ${i + 1}`)],
      tl('JetStream: ordered consumer', (r) => r.js.tail),
      tl('file: twain.tail()', (r) => r.file.tail),
      tl('raw fs.watch + fs.read', (r) => r.file.rawTail),
      tl('Redis: twain.tail()', (r) => r.redis.tail),
    ]),
  )
}
