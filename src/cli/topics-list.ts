import type { Command } from 'commander'
import { withTwain } from './context.js'

/** `twainmq topics list` (or `twainmq topics`, as `groups` lists groups): one topic name per line, sorted. */
export function registerTopicsList(topics: Command): void {
  topics
    .command('list', { isDefault: true })
    .description('list topics, one per line (also: twainmq topics)')
    .action(async (_opts: unknown, cmd: Command) => {
      const names = await withTwain(cmd, (twain) => twain.listTopics())
      if (names.length > 0) process.stdout.write([...names].sort().join('\n') + '\n')
    })
}
