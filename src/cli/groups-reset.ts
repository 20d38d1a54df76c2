import type { Command } from 'commander'
import { groupArg, offsetsOption, topicArg } from './arguments.js'
import { UsageError, withTwain } from './context.js'
import { offsetsTable } from './groups-describe.js'
import { pastTimeOption } from './time-arguments.js'

type ResetTo = 'start' | 'end' | Record<number, number> | { time: number }

/** Parse `--to`: `start`, `end` or `<partition>=<offset>[,<partition>=<offset>…]` (a bad value is exit 2). */
export function parseResetTo(value: string): ResetTo {
  const v = value.trim()
  return v === 'start' || v === 'end' ? v : offsetsOption(v, "expected 'start', 'end' or")
}

const describeTo = (to: ResetTo): string =>
  typeof to === 'string'
    ? to
    : 'time' in to
      ? `the first offsets at or after ${new Date(to.time).toISOString()}`
      : Object.entries(to)
          .map(([p, o]) => `${p}=${o}`)
          .join(',')

/**
 * `twainmq groups reset <group> <topic> --to start|end|<p>=<offset>[,…] | --to-time <time>`: set the
 * group's committed offsets of a topic (refused while live members consume it), then print the
 * topic's offsets. `--to-time` (ISO 8601, ms, or `-1h`-style before now) sets every partition to its
 * first offset whose timestamp is at or after the time (its end when none is).
 */
export function registerGroupsReset(groups: Command): void {
  groups
    .command('reset')
    .description("set a group's committed offsets of a topic (no live member may consume it)")
    .argument('<group>', 'consumer group name', groupArg)
    .argument('<topic>', 'topic name', topicArg)
    .option(
      '--to <to>',
      "'start', 'end' or <partition>=<offset>[,<partition>=<offset>...] (other partitions keep their commit)",
      parseResetTo,
    )
    .option(
      '--to-time <time>',
      'every partition to its first message at or after a time: ISO 8601 (2026-12-01T10:00:00Z), ms since the epoch, or before now (-30m, -1h, -2d)',
      pastTimeOption,
    )
    .option(
      '--state <store>',
      "a processor group's state store to clear with the reset (its changelog is deleted; every partition must be set)",
    )
    .action(
      async (group: string, topic: string, given: { to?: ResetTo; toTime?: number; state?: string }, cmd: Command) => {
        if ((given.to === undefined) === (given.toTime === undefined))
          throw new UsageError('give one of --to (start, end, <partition>=<offset>) and --to-time (a time)')
        const opts = { to: given.to ?? { time: given.toTime as number } }
        const d = await withTwain(cmd, async (twain) => {
          await twain.resetGroup(group, topic, opts.to, given.state === undefined ? undefined : { state: given.state })
          return twain.describeGroup(group)
        })
        const rows = d.topics.filter((t) => t.topic === topic)
        // An offset below a partition's start (trimmed) is set to the start: say so.
        const raised: string[] =
          typeof opts.to === 'string' || 'time' in opts.to
            ? []
            : Object.entries(opts.to).flatMap(([p, o]) => {
                const row = rows.find((r) => r.partition === Number(p))
                return row && row.committed !== o
                  ? [`partition ${p}: ${o} is below its start, set to ${row.committed}`]
                  : []
              })
        if (given.state !== undefined) raised.push(`state store ${given.state} cleared`)
        const notes = raised.length ? `${raised.join('\n')}\n` : ''
        process.stdout.write(
          `reset group ${group} on topic ${topic} to ${describeTo(opts.to)}\n${notes}\n${offsetsTable(rows).join('\n')}\n`,
        )
      },
    )
}
