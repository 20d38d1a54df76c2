import type { Command } from 'commander'
import type { KeyType } from '../index.js'
import { intOption, keyTypeOption, topicArg } from './arguments.js'
import { withTwain } from './context.js'

interface CreateOptions {
  partitions: number
  keyType: string
  maxMessageBytes?: number
}

/** `twainmq topics create <name> [--partitions n] [--key-type t]`. */
export function registerTopicsCreate(topics: Command): void {
  topics
    .command('create')
    .description('create a topic')
    .argument('<name>', 'topic name (1-200 of A-Z a-z 0-9 _ . -)', topicArg)
    .option('-p, --partitions <n>', 'number of partitions (1..10000)', intOption(1, 10_000), 1)
    .option('-k, --key-type <keyType>', 'key type: u8, u16, u32, u64, charN or string', keyTypeOption, 'u16')
    .option('--max-message-bytes <n>', 'largest message accepted, key + headers + value (1..268435456; default 1048576)', intOption(1, 256 * 1024 * 1024))
    .action(async (name: string, opts: CreateOptions, cmd: Command) => {
      const info = await withTwain(cmd, (twain) =>
        twain.createTopic(name, {
          partitions: opts.partitions,
          keyType: opts.keyType as KeyType,
          ...(opts.maxMessageBytes === undefined ? {} : { maxMessageBytes: opts.maxMessageBytes }),
        }),
      )
      const s = info.partitions === 1 ? '' : 's'
      process.stdout.write(`created topic ${info.name} (${info.partitions} partition${s}, key type ${info.keyType})\n`)
    })
}
