// The topics panel: one row per partition, with its stream name, start/end offsets and rate.
import { byId, el } from './dom.js'
import type { TopicRow } from './overview.js'

const rate = (r: number | null): string => (r === null ? '–' : r.toFixed(1))

export function renderTopics(topics: readonly TopicRow[]): void {
  const body = byId('topics').querySelector('tbody') as HTMLTableSectionElement
  const rows: HTMLTableRowElement[] = []
  for (const t of topics) {
    t.partitions.forEach((p, i) => {
      const row = el('tr', { 'data-stream': p.stream, 'data-topic': t.topic })
      if (i === 0)
        row.append(
          el(
            'th',
            { rowspan: String(t.partitions.length), scope: 'rowgroup' },
            t.topic,
            el('span', { class: 'rate' }, ` ${rate(t.rate)} msg/s`),
          ),
        )
      row.append(
        el('td', {}, p.partition),
        el('td', { class: 'stream' }, p.stream),
        el('td', { class: 'start' }, p.start),
        el('td', { class: 'end' }, p.end),
        el('td', { class: 'rate' }, rate(p.rate)),
      )
      rows.push(row)
    })
  }
  body.replaceChildren(...rows)
  byId('topics-empty').hidden = topics.length > 0
}
