import type { Command } from 'commander'
import type { GroupDescription } from '../index.js'
import { formatOption, groupArg } from './arguments.js'
import { withTwain } from './context.js'

/** Rows as columns two spaces apart: the first column left-aligned, the others right-aligned. */
export function table(rows: string[][], leftColumns = 1): string[] {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)))
  return rows.map((r) =>
    r
      .map((cell, c) => (c < leftColumns ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!)))
      .join('  ')
      .trimEnd(),
  )
}

/** A lag age for people: `0s`, `420ms`, `4.2s`, `3m07s`, `5h02m`, `2d03h`. */
export function formatAge(ms: number): string {
  if (ms < 1000) return ms === 0 ? '0s' : `${Math.round(ms)}ms`
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`
  const two = (n: number) => String(n).padStart(2, '0')
  const s = Math.floor(ms / 1000)
  if (s < 3600) return `${Math.floor(s / 60)}m${two(s % 60)}s`
  if (s < 86_400) return `${Math.floor(s / 3600)}h${two(Math.floor(s / 60) % 60)}m`
  return `${Math.floor(s / 86_400)}d${two(Math.floor(s / 3600) % 24)}h`
}

/**
 * The committed/end/lag table of a group's partitions, with `age` (how old the oldest message not
 * committed is) and `pending` when the backend reports it.
 */
export function offsetsTable(topics: GroupDescription['topics']): string[] {
  const pending = topics.some((t) => t.pending !== undefined)
  const head = ['topic', 'partition', 'committed', 'end', 'lag', 'age', ...(pending ? ['pending'] : [])]
  const rows = topics.map((t) =>
    [t.topic, t.partition, t.committed, t.end, t.lag, formatAge(t.lagMs), ...(pending ? [t.pending ?? ''] : [])].map(
      String,
    ),
  )
  return table([head, ...rows])
}

/**
 * A readable description: the live members (id, name, kind — `processor` or `consumer` —,
 * partitions), then committed/end/lag per
 * partition. A member without a name (its name is its id) shows `-`.
 */
export function describeGroupText(d: GroupDescription): string {
  const lag = d.topics.reduce((sum, t) => sum + t.lag, 0)
  const lines = [`group:     ${d.group}`, `members:   ${d.members.length}`, `total lag: ${lag}`, '']
  if (d.members.length === 0) lines.push('(no live members)')
  else {
    const rows = d.members.map((m) => {
      const parts = [...m.assignments].sort((a, b) =>
        a.topic === b.topic ? a.partition - b.partition : a.topic < b.topic ? -1 : 1,
      )
      return [
        m.id,
        m.name === m.id ? '-' : m.name,
        m.kind,
        parts.length > 0 ? parts.map((tp) => `${tp.topic}/${tp.partition}`).join(' ') : '(none)',
      ]
    })
    lines.push(...table([['member', 'name', 'kind', 'assignments'], ...rows], 4))
  }
  lines.push('')
  if (d.topics.length === 0) lines.push('(no topics)')
  else lines.push(...offsetsTable(d.topics))
  return lines.join('\n') + '\n'
}

/** `twainmq groups describe <group> [--format json|text]`. */
export function registerGroupsDescribe(groups: Command): void {
  groups
    .command('describe')
    .description("show a group's live members and their partitions, and committed offset, end and lag per partition")
    .argument('<group>', 'consumer group name', groupArg)
    .option('-f, --format <format>', 'json or text', formatOption, 'text')
    .action(async (group: string, opts: { format: 'json' | 'text' }, cmd: Command) => {
      const d = await withTwain(cmd, (twain) => twain.describeGroup(group))
      process.stdout.write(opts.format === 'json' ? JSON.stringify(d) + '\n' : describeGroupText(d))
    })
}
