import type { Command } from 'commander'
import { InvalidArgumentError as CommanderArgError } from 'commander'
import { InvalidArgumentError } from '../index.js'
import { intOption, topicArg } from './arguments.js'
import { parseKey, withTwain } from './context.js'
import { pumpLines, type PumpResult } from './line-pump.js'

interface ProduceOptions {
  key?: string
  json?: boolean
  header: Record<string, string>
  partition?: number
}

/** A line that is not valid JSON under `--json` (exit 1). */
export class InvalidJsonError extends Error {
  readonly code = 'ERR_INVALID_JSON'
}

function collectHeader(value: string, previous: Record<string, string>): Record<string, string> {
  const eq = value.indexOf('=')
  if (eq <= 0) throw new CommanderArgError('expected name=value')
  return { ...previous, [value.slice(0, eq)]: value.slice(eq + 1) }
}

/**
 * `twainmq produce <topic> [--key k] [--json] [--header name=value]… [--partition p]`: one message per
 * stdin line (empty lines are skipped). Every message gets the same key: `--key`, parsed for the
 * topic's key type (u64 as a bigint), or 0 / "" without it. Prints `produced N messages` to stderr.
 */
export function registerProduce(program: Command): void {
  program
    .command('produce')
    .description('send one message per stdin line (empty lines are skipped)')
    .argument('<topic>', 'topic name', topicArg)
    .option('-k, --key <key>', 'key of every message: an integer for u8/u16/u32/u64 topics, a string for char/string topics (default 0 or "")')
    .option('--json', 'parse each line as JSON (otherwise each line is sent as a text value)')
    .option('-H, --header <name=value>', 'add a header to every message (repeatable)', collectHeader, {})
    .option('-p, --partition <p>', "write to this partition instead of the key's", intOption(0))
    .action(async (topic: string, opts: ProduceOptions, cmd: Command) => {
      let result: PumpResult = { count: 0 }
      await withTwain(cmd, async (twain) => {
        const info = await twain.describeTopic(topic)
        const key = parseKey(info.keyType, opts.key)
        if (opts.partition !== undefined && opts.partition >= info.partitions) {
          throw new InvalidArgumentError(`Partition ${opts.partition} does not exist in topic "${topic}" (partitions 0..${info.partitions - 1})`)
        }
        const sendOptions = {
          ...(Object.keys(opts.header).length > 0 ? { headers: opts.header } : {}),
          ...(opts.partition === undefined ? {} : { partition: opts.partition }),
        }
        const parse = (line: string, lineNo: number): unknown => {
          if (!opts.json) return line
          try {
            return JSON.parse(line) as unknown
          } catch (e) {
            throw new InvalidJsonError(`line ${lineNo} is not valid JSON (${(e as Error).message}): ${line.length > 80 ? line.slice(0, 80) + '…' : line}`)
          }
        }
        if (process.stdin.isTTY) process.stderr.write(`reading messages for ${topic} from stdin, one per line; end with Ctrl-D\n`)
        const producer = twain.producer(topic)
        try {
          result = await pumpLines(process.stdin, parse, async (values) => {
            // Issued in one tick: the producer writes them as one batch per partition.
            const settled = await Promise.allSettled(values.map((v) => producer.send(key, v, sendOptions)))
            const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected')
            return { ok: settled.filter((s) => s.status === 'fulfilled').length, ...(failed ? { error: failed.reason as unknown } : {}) }
          })
          await producer.close()
        } finally {
          process.stderr.write(`produced ${result.count} message${result.count === 1 ? '' : 's'}\n`)
        }
      })
      if ('error' in result) throw result.error
    })
}
