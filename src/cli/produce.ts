import type { Command } from 'commander'
import { InvalidArgumentError as CommanderArgError, Option } from 'commander'
import { InvalidArgumentError, UnknownMessageTypeError, type Key } from '../index.js'
import { intOption, topicArg, typeNameOption } from './arguments.js'
import { InvalidJsonError, LineError, LinesSkippedError, sendUntilBad } from './bad-lines.js'
import { parseKey, withTwain } from './context.js'
import { pumpLines, type PumpResult } from './line-pump.js'

interface ProduceOptions {
  key?: string
  json?: boolean
  type?: string
  header: Record<string, string>
  partition?: number
  skipBad?: boolean
}

/** A stdin line: its value, or (with `--skip-bad`) why it has none. */
interface Line {
  lineNo: number
  value?: unknown
  error?: unknown
}

function collectHeader(value: string, previous: Record<string, string>): Record<string, string> {
  const eq = value.indexOf('=')
  if (eq <= 0) throw new CommanderArgError('expected name=value')
  return { ...previous, [value.slice(0, eq)]: value.slice(eq + 1) }
}

function parseJson(line: string): unknown {
  try {
    return JSON.parse(line) as unknown
  } catch (e) {
    throw new InvalidJsonError(
      `not valid JSON (${(e as Error).message}): ${line.length > 80 ? line.slice(0, 80) + '…' : line}`,
    )
  }
}

/**
 * `twainmq produce <topic> [--key k] [--json | --type T] [--header name=value]… [--partition p]
 * [--skip-bad]`: one message per stdin line (empty lines are skipped), all with the same key:
 * `--key`, parsed for the topic's key type (u64 as a bigint), or 0 / "" without it. A bad line
 * (not JSON, too large) stops it, after every line before it was written; with `--skip-bad` each
 * bad line is reported and skipped, and the exit code is 1 at the end. Prints `produced N messages`.
 */
export function registerProduce(program: Command): void {
  program
    .command('produce')
    .description('send one message per stdin line (empty lines are skipped)')
    .argument('<topic>', 'topic name', topicArg)
    .option(
      '-k, --key <key>',
      'key of every message: an integer for u8/u16/u32/u64 topics, a string for char/string topics (default 0 or "")',
    )
    .option('--json', 'parse each line as JSON (otherwise each line is sent as a text value)')
    .option('-t, --type <type>', 'send each line (as JSON) as a message of this registered type name', typeNameOption)
    .addOption(
      new Option('-H, --header <name=value>', 'add a header to every message (repeatable)')
        .argParser(collectHeader)
        .default({}, 'none'),
    )
    .option('-p, --partition <p>', "write to this partition instead of the key's", intOption(0))
    .option(
      '--skip-bad',
      'report a bad line (not JSON, too large) on stderr and go on; exit 1 at the end if any was skipped',
    )
    .action(async (topic: string, opts: ProduceOptions, cmd: Command) => {
      let result: PumpResult = { count: 0 }
      const skipped: number[] = []
      await withTwain(cmd, async (twain) => {
        const info = await twain.describeTopic(topic)
        const key: Key = parseKey(info.keyType, opts.key)
        if (opts.partition !== undefined && opts.partition >= info.partitions) {
          throw new InvalidArgumentError(
            `Partition ${opts.partition} does not exist in topic "${topic}" (partitions 0..${info.partitions - 1})`,
          )
        }
        const type = opts.type
        if (type !== undefined) {
          if (info.messageTypes.length > 0 && !info.messageTypes.includes(type)) {
            throw new UnknownMessageTypeError(
              `Message type ${JSON.stringify(type)} is not one of topic "${topic}"'s types: ${info.messageTypes.join(', ')}`,
            )
          }
          twain.registerType(type) // by name only: values are JSON, checked by nothing but the topic
        }
        const common = {
          key,
          ...(type === undefined ? {} : { type }),
          ...(Object.keys(opts.header).length > 0 ? { headers: opts.header } : {}),
          ...(opts.partition === undefined ? {} : { partition: opts.partition }),
        }
        const json = opts.json === true || type !== undefined
        const parse = (line: string, lineNo: number): Line => {
          if (!json) return { lineNo, value: line }
          try {
            return { lineNo, value: parseJson(line) }
          } catch (e) {
            if (opts.skipBad) return { lineNo, error: e }
            throw new LineError(lineNo, e)
          }
        }
        if (process.stdin.isTTY)
          process.stderr.write(`reading messages for ${topic} from stdin, one per line; end with Ctrl-D\n`)
        const producer = twain.producer(topic)
        const sendBatch = (lines: Line[]) => producer.sendBatch(lines.map((l) => ({ ...common, value: l.value })))
        // A chunk of lines, in order: the good runs in one batch each, each bad line stops it or is skipped.
        const sendLines = async (lines: Line[]) => {
          const progress = { sent: 0 }
          try {
            for (let rest = lines; rest.length > 0;) {
              const cut = rest.findIndex((l) => 'error' in l)
              const good = cut < 0 ? rest : rest.slice(0, cut)
              const bad = await sendUntilBad(good, sendBatch, progress)
              const at = bad ? bad.index : cut
              if (at < 0) break
              const error = new LineError(rest[at]!.lineNo, bad ? bad.error : rest[at]!.error)
              if (!opts.skipBad) return { ok: progress.sent, error }
              process.stderr.write(`${error.code}: ${error.message}; skipped\n`)
              skipped.push(error.line)
              rest = rest.slice(at + 1)
            }
            return { ok: progress.sent }
          } catch (e) {
            return { ok: progress.sent, error: e }
          }
        }
        try {
          result = await pumpLines(process.stdin, parse, sendLines)
          await producer.close()
        } finally {
          const s = result.count === 1 ? '' : 's'
          const k = skipped.length === 1 ? '' : 's'
          process.stderr.write(
            `produced ${result.count} message${s}${skipped.length > 0 ? ` (${skipped.length} bad line${k} skipped)` : ''}\n`,
          )
        }
      })
      const e = result.error
      if (e instanceof LineError) {
        throw new LineError(
          e.line,
          e.reason,
          `; stopped there: ${result.count === 1 ? 'the 1 message before it was' : `the ${result.count} messages before it were`} sent, none after it (--skip-bad skips bad lines)`,
        )
      }
      if (e !== undefined) throw e
      if (skipped.length > 0) throw new LinesSkippedError(skipped)
    })
}
