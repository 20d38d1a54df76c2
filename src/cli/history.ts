import type { Command } from 'commander'
import type { HistoryOptions } from '../index.js'
import { formatOption, intOption, topicArg } from './arguments.js'
import { UsageError, withTwain } from './context.js'
import { formatter, type Format } from './format.js'
import { LineWriter } from './output.js'
import { offsetOption, timeOption } from './time-arguments.js'

interface HistoryCliOptions {
  partition?: number
  from?: number
  fromTime?: number
  to?: number
  limit?: number
  reverse?: boolean
  format: Format
}

/** The library's options for the command line's, or a usage error for options that do not go together. */
function historyOptions(opts: HistoryCliOptions): HistoryOptions {
  if (opts.from !== undefined && opts.fromTime !== undefined)
    throw new UsageError('--from and --from-time cannot be used together: give an offset or a time')
  if (opts.from !== undefined && opts.to !== undefined && opts.to < opts.from)
    throw new UsageError(`--to ${opts.to} is below --from ${opts.from}: --to is the offset to stop before`)
  return {
    ...(opts.partition === undefined ? {} : { partition: opts.partition }),
    ...(opts.from === undefined ? {} : { from: opts.from }),
    ...(opts.fromTime === undefined ? {} : { from: { time: opts.fromTime } }),
    ...(opts.to === undefined ? {} : { to: opts.to }),
    ...(opts.limit === undefined ? {} : { limit: opts.limit }),
    ...(opts.reverse ? { reverse: true } : {}),
  }
}

/**
 * `twainmq history <topic> [--partition p] [--from offset | --from-time time] [--to offset]
 * [--limit n] [--reverse] [--format json|text]`: prints the retained messages (every partition in
 * partition order, or one), then exits. `--from`/`--to` bound the offsets of every partition read
 * (`--to` exclusive); `--from-time` starts each at its first message at or after the time.
 * `--reverse --limit n` prints the n newest, newest first.
 */
export function registerHistory(program: Command): void {
  program
    .command('history')
    .description('print the messages a topic holds, then exit')
    .argument('<topic>', 'topic name', topicArg)
    .option('-p, --partition <p>', 'read only this partition', intOption(0))
    .option('--from <offset>', 'first offset to print (in every partition read)', offsetOption)
    .option(
      '--from-time <time>',
      'first time to print: an ISO date (2026-12-01, 2026-12-01T10:00:00Z) or ms since the epoch',
      timeOption,
    )
    .option('--to <offset>', 'stop before this offset (in every partition read)', offsetOption)
    .option('-n, --limit <n>', 'print at most n messages', intOption(0))
    .option('-r, --reverse', 'newest first (with --limit n: the n newest)')
    .option('-f, --format <format>', 'json or text', formatOption, 'text')
    .action(async (topic: string, opts: HistoryCliOptions, cmd: Command) => {
      const options = historyOptions(opts)
      await withTwain(cmd, async (twain) => {
        await twain.describeTopic(topic)
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
