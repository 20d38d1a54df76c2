import type { Command } from 'commander'
import { InvalidArgumentError, type TailOptions } from '../index.js'
import { formatOption, groupArg, intOption, memberNameOption, topicArg } from './arguments.js'
import { UsageError, withTwain } from './context.js'
import { describeFrom, tailFromOption, type TailFromArg } from './time-arguments.js'
import { formatter, type Format } from './format.js'
import { LineWriter } from './output.js'
import { tailGroup } from './tail-group.js'

interface TailCliOptions {
  from?: TailFromArg
  partition?: number[]
  group?: string
  name?: string
  format: Format
  quiet?: boolean
}

const parsePartition = intOption(0)
function collectPartition(value: string, previous: number[] | undefined): number[] {
  return [...(previous ?? []), parsePartition(value)]
}

/**
 * `twainmq tail <topic> [--from start|end|<offset>|<time>] [--partition p]… [--format json|text]`:
 * prints new messages until SIGINT/SIGTERM (or a closed stdout), then closes cleanly and exits 0. A
 * numeric `--from` is the first offset of every partition read; a time (an ISO date or
 * `time:<ms>`) starts each partition at its first message at or after it.
 *
 * `twainmq tail <topic> --group <g> [--name n] [--from start|end]`: the same, as a member (named `n`)
 * of consumer group `g` (partitioned mode): the group assigns the partitions, every printed message is acked, and stopping
 * commits and leaves the group. `--from` applies only where the group has no commit (default: start).
 */
export function registerTail(program: Command): void {
  program
    .command('tail')
    .description('print messages as they arrive, until Ctrl-C')
    .argument('<topic>', 'topic name', topicArg)
    .option(
      '--from <from>',
      "where to start: 'start', 'end' (default), an offset (in every partition), an ISO date (2026-12-01T10:00:00Z) or time:<ms>; with --group: 'start' (default) or 'end', used where the group has no commit",
      tailFromOption,
    )
    .option('-p, --partition <p>', 'read only this partition (repeatable; not with --group)', collectPartition)
    .option(
      '-g, --group <group>',
      'consume as a member of this consumer group: ack what was printed, commit and leave on Ctrl-C',
      groupArg,
    )
    .option(
      '--name <name>',
      "with --group: the member's name, shown by 'groups describe' (default: none)",
      memberNameOption,
    )
    .option('-f, --format <format>', 'json or text', formatOption, 'text')
    .option('-q, --quiet', "do not print the 'tailing …' notice on stderr")
    .action(async (topic: string, opts: TailCliOptions, cmd: Command) => {
      if (opts.name !== undefined && opts.group === undefined)
        throw new UsageError(`--name needs --group: a member name is a name in a consumer group`)
      if (opts.group !== undefined) {
        if (opts.partition)
          throw new UsageError('--partition cannot be used with --group: the group assigns partitions to its members')
        if (opts.from !== undefined && typeof opts.from !== 'string') {
          throw new UsageError(
            `--from ${describeFrom(opts.from)}: with --group, --from takes 'start' or 'end' (used where the group has no commit); move a group with 'twainmq groups reset'`,
          )
        }
      }
      // Handle signals from the start, so a Ctrl-C while the store opens also ends cleanly.
      let stream: { close(): Promise<void> } | undefined
      let signals = 0
      const stop = () => {
        // A second Ctrl-C while closing gives up waiting.
        if (++signals > 1) process.exit(130)
        void stream?.close()
      }
      process.on('SIGINT', stop)
      process.on('SIGTERM', stop)
      await withTwain(cmd, async (twain) => {
        // A missing topic or partition fails here, before the notice.
        const info = await twain.describeTopic(topic)
        if (opts.group !== undefined) {
          const group = {
            group: opts.group,
            name: opts.name,
            from: opts.from as 'start' | 'end' | undefined,
            format: opts.format,
            quiet: Boolean(opts.quiet),
          }
          return tailGroup(twain, topic, group, (consumer) => {
            stream = consumer
            if (signals > 0) void consumer.close()
          })
        }
        const bad = opts.partition?.find((p) => p >= info.partitions)
        if (bad !== undefined)
          throw new InvalidArgumentError(
            `Partition ${bad} does not exist in topic "${topic}" (partitions 0..${info.partitions - 1})`,
          )
        const from = opts.from ?? 'end'
        const options: TailOptions = {
          from: typeof from === 'number' ? { offset: from } : from,
          ...(opts.partition ? { partitions: opts.partition } : {}),
        }
        const tail = twain.tail(topic, options)
        stream = tail
        if (signals > 0) await tail.close()
        const out = new LineWriter()
        const print = formatter(opts.format)
        out.whenBroken(() => void tail.close())
        try {
          if (!opts.quiet) process.stderr.write(`tailing ${topic} from ${describeFrom(from)} (Ctrl-C to stop)\n`)
          for await (const m of tail) {
            await out.line(print(m))
            if (out.broken) break
          }
        } finally {
          await out.end()
        }
      }).finally(() => {
        process.off('SIGINT', stop)
        process.off('SIGTERM', stop)
      })
    })
}
