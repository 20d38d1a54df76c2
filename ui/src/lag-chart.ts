// Lag per partition of every group as a live uPlot chart: one series per group × partition, one
// point per snapshot the gateway pushes (it pushes when offsets or commits change), last 5 minutes.
// The container's data-* attributes mirror the chart's data (points, series, last values) so
// tests and people can read them.
import uPlot from 'uplot'
import 'uplot/dist/uPlot.min.css'
import { byId } from './dom.js'
import type { Snapshot } from './overview.js'

const KEEP_MS = 5 * 60_000
/** A lag holds until the next snapshot (they come when something changed): steps, not slopes. */
const stepped = uPlot.paths.stepped?.({ align: 1 })
const COLOURS = ['#2563eb', '#dc2626', '#16a34a', '#d97706', '#7c3aed', '#0891b2', '#db2777', '#65a30d']

export class LagChart {
  private plot: uPlot | undefined
  private keys: string[] = []
  private times: number[] = []
  private values = new Map<string, Array<number | null>>()
  private readonly box = byId('lag-chart')

  add(s: Snapshot): void {
    const now = new Map<string, number>()
    for (const g of s.groups) for (const p of g.partitions) now.set(`${g.group} ${p.stream}`, p.lag)
    this.times.push(s.at / 1000)
    for (const k of now.keys())
      if (!this.values.has(k))
        this.values.set(
          k,
          this.times.slice(0, -1).map(() => null),
        )
    for (const [k, arr] of this.values) arr.push(now.get(k) ?? null)
    while (this.times.length > 1 && s.at / 1000 - (this.times[0] as number) > KEEP_MS / 1000) {
      this.times.shift()
      for (const arr of this.values.values()) arr.shift()
    }
    for (const [k, arr] of this.values) if (arr.every((v) => v === null)) this.values.delete(k)
    const keys = [...this.values.keys()].sort()
    this.box.dataset.points = String(this.times.length)
    this.box.dataset.series = keys.join(',')
    if (keys.length === 0) {
      // No group has a partition: say so, rather than draw axes over nothing (uPlot picks a time
      // range of its own for an empty chart, years away from now).
      this.plot?.destroy()
      this.plot = undefined
      this.keys = []
      this.box.dataset.last = '{}'
      this.box.replaceChildren(
        Object.assign(document.createElement('p'), {
          className: 'empty',
          textContent: 'Nothing to chart: no consumer group has committed or owns a partition yet.',
        }),
      )
      return
    }
    if (!this.plot) this.box.replaceChildren()
    const data: uPlot.AlignedData = [this.times, ...keys.map((k) => this.values.get(k) as Array<number | null>)]
    if (!this.plot || keys.join('\n') !== this.keys.join('\n')) this.create(keys, data)
    else this.plot.setData(data)
    this.box.dataset.last = JSON.stringify(Object.fromEntries(keys.map((k) => [k, now.get(k) ?? null])))
  }

  private create(keys: string[], data: uPlot.AlignedData): void {
    this.plot?.destroy()
    this.keys = keys
    const width = Math.max(320, this.box.clientWidth || 600)
    this.plot = new uPlot(
      {
        width,
        height: 220,
        scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
        axes: [{}, { label: 'lag (messages)' }],
        series: [
          {},
          ...keys.map((k, i) => ({
            label: k,
            stroke: COLOURS[i % COLOURS.length] as string,
            width: 2,
            points: { show: false },
            paths: stepped,
          })),
        ],
      },
      data,
      this.box,
    )
  }
}
