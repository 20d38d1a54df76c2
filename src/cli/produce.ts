import type { Command } from 'commander'
import { InvalidArgumentError as CommanderArgError, Option } from 'commander'
import { InvalidArgumentError, UnknownMessageTypeError, type Key } from '../index.js'
import { intOption, topicArg, typeNameOption } from './arguments.js'
import { InvalidJsonError, LineError, LinesSkippedError, sendUntilBad } from './bad-lines.js'
import { UsageError, parseKey, withTwain } from './context.js'
import { pumpLines, type PumpResult } from './line-pump.js'
import { timeOption } from './time-arguments.js'

interface ProduceOptions {
  key?: string
  json?: boolean
  type?: string
  header: Record<string, string>
  partition?: number
  skipBad?: boolean
  timestamp?: number
  timestampField?: string
}

/** A stdin line: its value, or (with `--skip-bad`) why it has none. */
interface Line {
  lineNo: number
  value?: unknown
  /** From `--timestamp-field`. */
  timestamp?: number
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
 * The event time in field `field` of a JSON line's value: ms since the epoch, or an ISO 8601 date
 * or date-time string (`2026-12-01T10:00:00Z`). Anything else, or no such field, refuses the line.
 */
function timestampOf(value: unknown, field: string): number {
  const v =
    value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)[field]
      : undefined
  if (typeof v === 'number') return v // checked by send(): finite, ≥ 0
  if (typeof v === 'string') {
    const ms = /^\d{4}-\d{2}-\d{2}/.test(v) ? Date.parse(v) : Number.NaN
    if (!Number.isNaN(ms)) return ms
  }
  throw new InvalidArgumentError(
    `--timestamp-field ${JSON.stringify(field)}: expected ms since the epoch or an ISO 8601 date in the line's field "${field}", got ${v === undefined ? 'no such field' : JSON.stringify(v)}`,
  )
}

/**
 * `twainmq produce <topic> [--key k] [--json | --type T] [--header name=value]… [--partition p]
 * [--timestamp <time> | --timestamp-field <field>] [--skip-bad]`: one message per stdin line (empty lines are skipped), all with the same key:
 * `--key`, parsed for the topic's key type (u64 as a bigint), or 0 / "" without it. A bad line
 * (not JSON, too large) stops it, after every line before it was written; with `--skip-bad` each
 * bad line is reported and skipped, and the exit code is 1 at the end. Prints `produced N messages`.
 * Each message's timestamp is the append time, or `--timestamp` (one time for all), or with
 * `--json` the field `--timestamp-field` names in each line (ms or an ISO date; the value is sent whole).
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
      '--timestamp <time>',
      'event time of every message: an ISO 8601 date or date-time (2026-12-01T10:00:00Z) or ms since the epoch (default: the append time)',
      timeOption,
    )
    .option(
      '--timestamp-field <field>',
      "with --json: each message's event time is this field of its line (ms since the epoch or an ISO 8601 date)",
    )
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
          ...(opts.timestamp === undefined ? {} : { timestamp: opts.timestamp }),
        }
        const json = opts.json === true || type !== undefined
        const field = opts.timestampField
        if (field !== undefined && !json)
          throw new UsageError('--timestamp-field reads a field of each JSON line: add --json (or --type)')
        if (field !== undefined && opts.timestamp !== undefined)
          throw new UsageError('--timestamp and --timestamp-field exclude each other: give one')
        const parse = (line: string, lineNo: number): Line => {
          if (!json) return { lineNo, value: line }
          try {
            const value = parseJson(line)
            return field === undefined ? { lineNo, value } : { lineNo, value, timestamp: timestampOf(value, field) }
          } catch (e) {
            if (opts.skipBad) return { lineNo, error: e }
            throw new LineError(lineNo, e)
          }
        }
        if (process.stdin.isTTY)
          process.stderr.write(`reading messages for ${topic} from stdin, one per line; end with Ctrl-D\n`)
        const producer = twain.producer(topic)
        const sendBatch = (lines: Line[]) =>
          producer.sendBatch(
            lines.map((l) =>
              l.timestamp === undefined
                ? { ...common, value: l.value }
                : { ...common, value: l.value, timestamp: l.timestamp },
            ),
          )
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
