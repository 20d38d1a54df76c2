/**
 * The scale suite's table: one column per log size, one row per measure, the growth from the
 * smallest to the largest size, and a flag where it exceeds 20% (issue 15: flat per-message cost,
 * flat memory; seek and join are applied the same rule, though O(log n) would be acceptable there).
 */
import type { Throughput } from './phases.js'
import { MiB, fmtInt, fmtNum } from './stats.js'
import { renderTable } from './table.js'

export interface ScalePoint {
  n: number
  produce: { t: Throughput; rss: number }
  read: { t: Throughput; rss: number }
  consume: { t: Throughput; rss: number }
  seekOffset: number
  seekTime: number
  joinStart: number
  joinEnd: number
}

/** Growth above which a row is flagged. */
export const FLAG_GROWTH = 1.2

const usPerMsg = (t: Throughput): number => (t.seconds * 1e6) / t.messages

export function scaleTable(points: ScalePoint[]): string {
  const rows: Array<[string, (p: ScalePoint) => number, number]> = [
    ['produce sendBatch, µs/msg', (p) => usPerMsg(p.produce.t), 3],
    ['history, µs/msg', (p) => usPerMsg(p.read.t), 3],
    ['partitioned group consume+ack, µs/msg', (p) => usPerMsg(p.consume.t), 3],
    ['peak RSS while producing, MiB', (p) => p.produce.rss / MiB, 0],
    ['peak RSS while reading history, MiB', (p) => p.read.rss / MiB, 0],
    ['peak RSS while consuming, MiB', (p) => p.consume.rss / MiB, 0],
    ['seek to a random offset, ms (median of 20)', (p) => p.seekOffset, 2],
    ['seek to a random time, ms (median of 20)', (p) => p.seekTime, 2],
    ["join from 'start' → first message, ms", (p) => p.joinStart, 1],
    ["join from 'end' → owns the partition, ms", (p) => p.joinEnd, 1],
  ]
  const first = points[0] as ScalePoint
  const last = points[points.length - 1] as ScalePoint
  const header = [
    'measure',
    ...points.map((p) => `${fmtInt(p.n)} msgs`),
    `growth ${fmtInt(first.n)} → ${fmtInt(last.n)}`,
    'flag (> 20%)',
  ]
  const body = rows.map(([label, f, digits]) => {
    const growth = f(last) / f(first)
    return [
      label,
      ...points.map((p) => fmtNum(f(p), digits)),
      `${fmtNum(growth, 2)}×`,
      points.length > 1 && growth > FLAG_GROWTH ? 'FLAG' : '',
    ]
  })
  return renderTable([header, ...body], [false, ...points.map(() => true), true, false])
}
