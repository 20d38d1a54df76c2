import type { Command } from 'commander'
import { formatOption, topicArg } from './arguments.js'
import { withTwain } from './context.js'
import { compactionText } from './topics-describe.js'

/** `twainmq topics compact <name> [--format json|text]`: one compaction pass over a compacted topic now. */
export function registerTopicsCompact(topics: Command): void {
  topics
    .command('compact')
    .description('run one compaction pass over a compacted topic now (older messages of each key are removed)')
    .argument('<name>', 'topic name', topicArg)
    .option('-f, --format <format>', 'json or text', formatOption, 'text')
    .action(async (name: string, opts: { format: 'json' | 'text' }, cmd: Command) => {
      const stats = await withTwain(cmd, (twain) => twain.compactTopic(name))
      process.stdout.write(
        opts.format === 'json' ? JSON.stringify(stats) + '\n' : `compacted topic ${name}: ${compactionText(stats)}\n`,
      )
    })
}
