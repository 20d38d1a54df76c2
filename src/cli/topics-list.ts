import type { Command } from 'commander'
import { withTwain } from './context.js'

/** `twainmq topics list`: one topic name per line, sorted. */
export function registerTopicsList(topics: Command): void {
  topics
    .command('list')
    .description('list topics, one per line')
    .action(async (_opts: unknown, cmd: Command) => {
      const names = await withTwain(cmd, (twain) => twain.listTopics())
      if (names.length > 0) process.stdout.write([...names].sort().join('\n') + '\n')
    })
}
