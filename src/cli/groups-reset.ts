import type { Command } from 'commander'
import { groupArg, offsetsOption, topicArg } from './arguments.js'
import { withTwain } from './context.js'
import { offsetsTable } from './groups-describe.js'

type ResetTo = 'start' | 'end' | Record<number, number>

/** Parse `--to`: `start`, `end` or `<partition>=<offset>[,<partition>=<offset>…]` (a bad value is exit 2). */
export function parseResetTo(value: string): ResetTo {
  const v = value.trim()
  return v === 'start' || v === 'end' ? v : offsetsOption(v, "expected 'start', 'end' or")
}

const describeTo = (to: ResetTo): string =>
  typeof to === 'string'
    ? to
    : Object.entries(to)
        .map(([p, o]) => `${p}=${o}`)
        .join(',')

/**
 * `twainmq groups reset <group> <topic> --to start|end|<p>=<offset>[,…]`: set the group's committed
 * offsets of a topic (refused while live members consume it), then print the topic's offsets.
 */
export function registerGroupsReset(groups: Command): void {
  groups
    .command('reset')
    .description("set a group's committed offsets of a topic (no live member may consume it)")
    .argument('<group>', 'consumer group name', groupArg)
    .argument('<topic>', 'topic name', topicArg)
    .requiredOption(
      '--to <to>',
      "'start', 'end' or <partition>=<offset>[,<partition>=<offset>...] (other partitions keep their commit)",
      parseResetTo,
    )
    .action(async (group: string, topic: string, opts: { to: ResetTo }, cmd: Command) => {
      const d = await withTwain(cmd, async (twain) => {
        await twain.resetGroup(group, topic, opts.to)
        return twain.describeGroup(group)
      })
      const rows = d.topics.filter((t) => t.topic === topic)
      // An offset below a partition's start (trimmed) is set to the start: say so.
      const raised =
        typeof opts.to === 'string'
          ? []
          : Object.entries(opts.to).flatMap(([p, o]) => {
              const row = rows.find((r) => r.partition === Number(p))
              return row && row.committed !== o
                ? [`partition ${p}: ${o} is below its start, set to ${row.committed}`]
                : []
            })
      const notes = raised.length ? `${raised.join('\n')}\n` : ''
      process.stdout.write(
        `reset group ${group} on topic ${topic} to ${describeTo(opts.to)}\n${notes}\n${offsetsTable(rows).join('\n')}\n`,
      )
    })
}
