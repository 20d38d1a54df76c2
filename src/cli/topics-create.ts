import type { Command } from 'commander'
import type { CreateTopicOptions, KeyType, Retention } from '../index.js'
import { intOption, keyTypeOption, topicArg, typeListOption } from './arguments.js'
import { withTwain } from './context.js'
import { durationOption } from './time-arguments.js'
import { retentionText } from './topics-describe.js'

interface CreateOptions {
  partitions: number
  keyType: KeyType
  maxMessageBytes?: number
  messageTypes?: string[]
  retentionMaxMessages?: number
  retentionMaxAge?: number
  retentionMaxBytes?: number
  retentionConsumed?: boolean
  compact?: boolean
  tombstoneRetention?: number
}

function createOptions(opts: CreateOptions): CreateTopicOptions {
  const retention: Retention = {
    ...(opts.retentionMaxMessages === undefined ? {} : { maxMessages: opts.retentionMaxMessages }),
    ...(opts.retentionMaxAge === undefined ? {} : { maxAgeMs: opts.retentionMaxAge }),
    ...(opts.retentionMaxBytes === undefined ? {} : { maxBytes: opts.retentionMaxBytes }),
    ...(opts.retentionConsumed ? { consumed: true } : {}),
  }
  return {
    partitions: opts.partitions,
    keyType: opts.keyType,
    ...(opts.messageTypes === undefined ? {} : { messageTypes: opts.messageTypes }),
    ...(Object.keys(retention).length === 0 ? {} : { retention }),
    ...(opts.maxMessageBytes === undefined ? {} : { maxMessageBytes: opts.maxMessageBytes }),
    ...(opts.compact ? { compact: true } : {}),
    ...(opts.tombstoneRetention === undefined ? {} : { tombstoneRetentionMs: opts.tombstoneRetention }),
  }
}

/**
 * `twainmq topics create <name> [--partitions n] [--key-type t] [--message-types A,B]
 * [--retention-max-messages n] [--retention-max-age d] [--retention-max-bytes n]
 * [--retention-consumed] [--max-message-bytes n] [--compact [--tombstone-retention d]]`
 * (createTopic's options).
 */
export function registerTopicsCreate(topics: Command): void {
  topics
    .command('create')
    .description('create a topic')
    .argument('<name>', 'topic name (1-200 of A-Z a-z 0-9 _ . - +)', topicArg)
    .option('-p, --partitions <n>', 'number of partitions (1..10000)', intOption(1, 10_000), 1)
    .option('-k, --key-type <keyType>', 'key type: u8, u16, u32, u64, charN or string', keyTypeOption, 'u16')
    .option(
      '--message-types <A,B>',
      'the message types the topic takes, separated by commas (default: any)',
      typeListOption,
    )
    .option('--retention-max-messages <n>', 'keep at most the n newest messages of each partition', intOption(1))
    .option(
      '--retention-max-age <duration>',
      'delete messages older than this: ms, or a number with ms, s, m, h or d (30m, 7d)',
      durationOption,
    )
    .option('--retention-max-bytes <n>', 'keep at most about n bytes of messages per partition', intOption(1))
    .option('--retention-consumed', 'delete what every consumer group of the topic has committed')
    .option(
      '--max-message-bytes <n>',
      'largest message accepted, key + headers + value (1..268435456; default 1048576)',
      intOption(1, 256 * 1024 * 1024),
    )
    .option('--compact', 'a compacted topic: keep at least the latest message of every key')
    .option(
      '--tombstone-retention <duration>',
      'with --compact: keep a null value (a tombstone) this long: ms, or a number with ms, s, m, h or d (default 1d)',
      durationOption,
    )
    .action(async (name: string, opts: CreateOptions, cmd: Command) => {
      const info = await withTwain(cmd, (twain) => twain.createTopic(name, createOptions(opts)))
      const s = info.partitions === 1 ? '' : 's'
      const types = info.messageTypes.length > 0 ? `, message types ${info.messageTypes.join(', ')}` : ''
      const retention = Object.keys(info.retention).length > 0 ? `, retention ${retentionText(info.retention)}` : ''
      const compacted = info.compact ? ', compacted' : ''
      process.stdout.write(
        `created topic ${info.name} (${info.partitions} partition${s}, key type ${info.keyType}${types}${retention}${compacted})\n`,
      )
    })
}
