// The groups panel: each group's members (with what they own) and committed/end/lag/lag age per partition.
import { byId, el } from './dom.js'
import type { GroupRow } from './overview.js'

/** A lag's age for people: `0`, `850 ms`, `12.5 s`, `7 min`, `3.2 h`. */
export function lagAge(ms: number): string {
  if (ms <= 0) return '0'
  if (ms < 1000) return `${Math.round(ms)} ms`
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`
  if (ms < 3_600_000) return `${Math.round(ms / 60_000)} min`
  return `${(ms / 3_600_000).toFixed(1)} h`
}

export function renderGroups(groups: readonly GroupRow[]): void {
  const cards = groups.map((g) => {
    const members =
      g.members.length === 0
        ? el('p', { class: 'members' }, 'no live members')
        : el(
            'ul',
            { class: 'members' },
            ...g.members.map((m) =>
              el(
                'li',
                { 'data-member': m.name },
                m.name,
                ' → ',
                m.assignments.map((a) => `${a.topic}[${a.partition}]`).join(', ') || 'nothing',
              ),
            ),
          )
    const head = el(
      'tr',
      {},
      ...['topic', 'partition', 'committed', 'end', 'lag', 'lag age'].map((h) => el('th', {}, h)),
    )
    const rows = g.partitions.map((p) =>
      el(
        'tr',
        { 'data-stream': p.stream },
        el('td', {}, p.topic),
        el('td', {}, p.partition),
        el('td', { class: 'committed' }, p.committed),
        el('td', { class: 'end' }, p.end),
        el('td', { class: 'lag' }, p.lag),
        el('td', { class: 'lag-age', title: `${p.lagMs} ms` }, lagAge(p.lagMs)),
      ),
    )
    return el(
      'article',
      { class: 'group', 'data-group': g.group },
      el(
        'h3',
        {},
        g.group,
        el('span', { class: 'lag-total' }, ` lag ${g.lag}`, g.lagMs > 0 ? `, oldest ${lagAge(g.lagMs)}` : ''),
      ),
      members,
      el('table', {}, el('thead', {}, head), el('tbody', {}, ...rows)),
    )
  })
  byId('groups').replaceChildren(...cards)
  byId('groups-empty').hidden = groups.length > 0
}
