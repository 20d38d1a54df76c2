import type { Command } from 'commander'
import type { Retention, TopicCompaction, TopicInfo } from '../index.js'
import { formatOption, topicArg } from './arguments.js'
import { withTwain } from './context.js'

/** Retention limits as `maxMessages=100, consumed=true` (or `keep everything`). */
export function retentionText(r: Retention): string {
  const parts = Object.entries(r)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${String(v)}`)
  return parts.length > 0 ? parts.join(', ') : 'keep everything'
}

/** A pass as `2026-12-05T08:00:00.000Z: 1000 records (52000 bytes) -> 10 records (700 bytes)`. */
export function compactionText(c: TopicCompaction): string {
  const side = (s: { records: number; bytes: number }) => `${s.records} records (${s.bytes} bytes)`
  return `${new Date(c.at).toISOString()}: ${side(c.before)} -> ${side(c.after)}`
}

/** A readable description: settings, then a start/end/count table per partition. */
export function describeText(info: TopicInfo): string {
  const lines = [
    `topic:             ${info.name}`,
    `partitions:        ${info.partitions}`,
    `key type:          ${info.keyType}`,
    `message types:     ${info.messageTypes.length > 0 ? info.messageTypes.join(', ') : '(none)'}`,
    `retention:         ${retentionText(info.retention)}`,
    `max message bytes: ${info.maxMessageBytes}`,
  ]
  if (info.compact) {
    lines.push(`compacted:         yes (tombstones kept ${String(info.tombstoneRetentionMs)} ms)`)
    lines.push(`last compaction:   ${info.lastCompaction ? compactionText(info.lastCompaction) : '(none yet)'}`)
  }
  const rows = [
    ['partition', 'start', 'end', 'messages'],
    ...info.offsets.map((o) => [o.partition, o.start, o.end, o.end - o.start].map(String)),
  ]
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)))
  lines.push('')
  for (const r of rows)
    lines.push(r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  '))
  return lines.join('\n') + '\n'
}

/** `twainmq topics describe <name> [--format json|text]`. */
export function registerTopicsDescribe(topics: Command): void {
  topics
    .command('describe')
    .description('show partitions, key type, message types, retention and per-partition start/end offsets')
    .argument('<name>', 'topic name', topicArg)
    .option('-f, --format <format>', 'json or text', formatOption, 'text')
    .action(async (name: string, opts: { format: 'json' | 'text' }, cmd: Command) => {
      const info = await withTwain(cmd, (twain) => twain.describeTopic(name))
      process.stdout.write(opts.format === 'json' ? JSON.stringify(info) + '\n' : describeText(info))
    })
}
