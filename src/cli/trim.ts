import type { Command } from 'commander'
import { intOption, offsetsOption, topicArg } from './arguments.js'
import { UsageError, withTwain } from './context.js'

interface TrimOptions {
  maxMessages?: number
  before?: Record<number, number>
}

/**
 * `twainmq trim <topic> --max-messages n | --before <p>=<offset>[,…]` (`twain.trim`, see docs/cli.md):
 * keep the n newest messages of every partition, or remove the offsets below the given one of each
 * partition named; prints how many messages were removed. No question asked, unlike `delete`.
 */
export function registerTrim(program: Command): void {
  program
    .command('trim')
    .description(
      "remove a topic's oldest messages: keep the n newest per partition, or remove those below given offsets",
    )
    .argument('<topic>', 'topic name', topicArg)
    .option('--max-messages <n>', 'keep the n newest messages of every partition (0: remove all)', intOption(0))
    .option(
      '--before <p=offset,...>',
      'remove the offsets below <offset> of partition <p> (`:` may stand for `=`)',
      (v: string) => offsetsOption(v),
    )
    .action(async (topic: string, opts: TrimOptions, cmd: Command) => {
      if (opts.maxMessages === undefined && opts.before === undefined)
        throw new UsageError('trim needs --max-messages or --before (see twainmq trim --help)')
      if (opts.maxMessages !== undefined && opts.before !== undefined)
        throw new UsageError('trim takes --max-messages or --before, not both')
      const how = opts.before === undefined ? { maxMessages: opts.maxMessages as number } : { before: opts.before }
      const removed = await withTwain(cmd, async (twain) => {
        await twain.describeTopic(topic)
        return twain.trim(topic, how)
      })
      process.stdout.write(`removed ${removed} message${removed === 1 ? '' : 's'} from topic ${topic}\n`)
    })
}
