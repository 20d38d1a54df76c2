// The groups panel: each group's members (with what they own) and committed/end/lag per partition.
import { byId, el } from './dom.js'
import type { GroupRow } from './overview.js'

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
    const head = el('tr', {}, ...['topic', 'partition', 'committed', 'end', 'lag'].map((h) => el('th', {}, h)))
    const rows = g.partitions.map((p) =>
      el(
        'tr',
        { 'data-stream': p.stream },
        el('td', {}, p.topic),
        el('td', {}, p.partition),
        el('td', { class: 'committed' }, p.committed),
        el('td', { class: 'end' }, p.end),
        el('td', { class: 'lag' }, p.lag),
      ),
    )
    return el(
      'article',
      { class: 'group', 'data-group': g.group },
      el('h3', {}, g.group, el('span', { class: 'lag-total' }, ` lag ${g.lag}`)),
      members,
      el('table', {}, el('thead', {}, head), el('tbody', {}, ...rows)),
    )
  })
  byId('groups').replaceChildren(...cards)
  byId('groups-empty').hidden = groups.length > 0
}
