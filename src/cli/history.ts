import type { Command } from 'commander'
import type { HistoryOptions } from '../index.js'
import { formatOption, intOption, topicArg } from './arguments.js'
import { withTwain } from './context.js'
import { formatter, type Format } from './format.js'
import { LineWriter } from './output.js'

interface HistoryCliOptions {
  partition?: number
  limit?: number
  reverse?: boolean
  format: Format
}

/**
 * `twainmq history <topic> [--partition p] [--limit n] [--reverse] [--format json|text]`: prints the
 * retained messages (every partition in partition order, or one), then exits. `--reverse --limit n`
 * prints the n newest, newest first.
 */
export function registerHistory(program: Command): void {
  program
    .command('history')
    .description('print the messages a topic holds, then exit')
    .argument('<topic>', 'topic name', topicArg)
    .option('-p, --partition <p>', 'read only this partition', intOption(0))
    .option('-n, --limit <n>', 'print at most n messages', intOption(0))
    .option('-r, --reverse', 'newest first (with --limit n: the n newest)')
    .option('-f, --format <format>', 'json or text', formatOption, 'text')
    .action(async (topic: string, opts: HistoryCliOptions, cmd: Command) => {
      await withTwain(cmd, async (twain) => {
        await twain.describeTopic(topic)
        const options: HistoryOptions = {
          ...(opts.partition === undefined ? {} : { partition: opts.partition }),
          ...(opts.limit === undefined ? {} : { limit: opts.limit }),
          ...(opts.reverse ? { reverse: true } : {}),
        }
        const stream = twain.history(topic, options)
        const out = new LineWriter()
        out.whenBroken(() => void stream.close())
        const print = formatter(opts.format)
        try {
          for await (const m of stream) {
            await out.line(print(m))
            if (out.broken) break
          }
        } finally {
          await out.end()
        }
      })
    })
}
