import type { Command } from 'commander'
import { checkTopic, describeDamage, range, type Damage, type PartitionCheck } from '../backends/file/check.js'
import { TopicCorruptError } from '../index.js'
import { formatOption, topicArg } from './arguments.js'
import { UsageError, storeUrl } from './context.js'

/** The directory named by `--url`: check and repair read and rewrite segment files, which Redis has not. */
export function fileRoot(cmd: Command, what: string): string {
  const { target } = storeUrl(cmd)
  if (target.kind !== 'file')
    throw new UsageError(
      `${what} works on a directory store (file backend) only; --url ${JSON.stringify(target.url)} is a Redis store`,
    )
  return target.root
}

function where(d: Damage): string {
  if (d.kind === 'start') return d.file
  if (d.kind === 'index') return `${d.file} bytes ${d.from}..${d.to - 1}`
  return d.to > d.from ? `${d.file} bytes ${d.from}..${d.to - 1}` : `${d.file} at byte ${d.from}`
}

/** One summary line per partition, then its damaged ranges and notes (indented). */
export function checkText(parts: PartitionCheck[]): string {
  const lines: string[] = []
  for (const r of parts) {
    const n = r.segments.length
    const offsets = r.first === undefined ? 'no records' : `offsets ${range(r.first, Math.max(r.end, r.first + 1))}`
    lines.push(
      `partition ${r.partition}: ${n} segment${n === 1 ? '' : 's'}, ${r.records} record${r.records === 1 ? '' : 's'}, ${offsets}${r.damage.length ? ', DAMAGED' : ', ok'}`,
    )
    for (const d of r.damage) {
      const lost = d.kind === 'frames' && !d.offsets ? '; offsets unknown or none' : ''
      lines.push(`  damage: ${where(d)}: ${describeDamage(d)}${lost}`)
    }
    for (const note of r.notes) lines.push(`  note: ${note}`)
  }
  return lines.join('\n') + '\n'
}

/** Exit with 1 (after the report is printed) when any partition is damaged. */
export function failIfDamaged(topic: string, parts: PartitionCheck[]): void {
  const bad = parts.filter((r) => r.damage.length > 0).length
  if (bad > 0)
    throw new TopicCorruptError(
      `Topic "${topic}" has damage in ${bad} of ${parts.length} partition${parts.length === 1 ? '' : 's'}; run \`twainmq repair ${topic}\``,
    )
}

/** `twainmq check <topic> [--format json|text]`. */
export function registerCheck(program: Command): void {
  program
    .command('check')
    .description(
      'verify every segment, frame, seal, index entry and trim mark of a topic (file backend); exit 1 on damage',
    )
    .argument('<topic>', 'topic name', topicArg)
    .option('-f, --format <format>', 'json or text', formatOption, 'text')
    .action(async (topic: string, opts: { format: 'json' | 'text' }, cmd: Command) => {
      const parts = await checkTopic(fileRoot(cmd, 'check'), topic)
      process.stdout.write(opts.format === 'json' ? JSON.stringify(parts) + '\n' : checkText(parts))
      failIfDamaged(topic, parts)
    })
}
