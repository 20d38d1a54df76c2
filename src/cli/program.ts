import { Command, CommanderError, InvalidArgumentError as CommanderArgError, Option } from 'commander'
import { TwainError } from '../index.js'
import { registerBench } from './bench.js'
import { registerCheck } from './check.js'
import { ReportedError, UsageError } from './context.js'
import { registerGroupsDelete } from './groups-delete.js'
import { registerGroupsDescribe } from './groups-describe.js'
import { registerGroupsList } from './groups-list.js'
import { registerGroupsReset } from './groups-reset.js'
import { registerHistory } from './history.js'
import { registerImportTwainmq } from './import-twainmq.js'
import { registerProduce } from './produce.js'
import { registerRepair } from './repair.js'
import { registerServe } from './serve.js'
import { registerTail } from './tail.js'
import { registerTopicsCompact } from './topics-compact.js'
import { registerTopicsCreate } from './topics-create.js'
import { registerTopicsDelete } from './topics-delete.js'
import { registerTopicsDescribe } from './topics-describe.js'
import { registerTopicsList } from './topics-list.js'
import { registerTrim } from './trim.js'

/** Exit codes (docs/cli.md): 0 ok, 1 runtime error, 2 usage error. */
export const EXIT_OK = 0
export const EXIT_RUNTIME = 1
export const EXIT_USAGE = 2

function prefixOption(value: string): string {
  if (value.length > 1000) throw new CommanderArgError(`expected at most 1000 characters, got ${value.length}`)
  // Wrong whatever the store holds (the library's check is at open): a usage error.
  if (/[{}]/.test(value))
    throw new CommanderArgError(`${JSON.stringify(value)} has a { or }: Redis Cluster hash tags are twainmq's own`)
  return value
}

/**
 * The `twainmq` command tree. Global options are defined on the root; commander recognises them
 * before or after the command name (positional options stay off), and commands read them with
 * `optsWithGlobals()`. Commander never exits the process itself (`exitOverride`): its usage errors
 * come back as `CommanderError`s that `run` turns into exit code 2.
 */
export function buildProgram(version: string): Command {
  const program = new Command('twainmq')
  program
    .description('twainmq: a partitioned, keyed message log (file directory or Redis)')
    .version(version, '-V, --version')
    .addOption(
      new Option('--url <target>', 'store: a directory, file: URL or redis:// URL (default ./.twainmq)').env(
        'TWAINMQ_URL',
      ),
    )
    .option('--prefix <prefix>', 'Redis key prefix (default "twainmq:"; at most 1000 characters)', prefixOption)
    .exitOverride()
    .configureOutput({ outputError: () => undefined }) // `run` prints usage errors as `ERR_USAGE: …`
    .showSuggestionAfterError(true)

  const topics = program
    .command('topics')
    .description('list, create, describe, delete and compact topics (default: list)')
  registerTopicsList(topics)
  registerTopicsCreate(topics)
  registerTopicsDescribe(topics)
  registerTopicsDelete(topics)
  registerTopicsCompact(topics)
  registerProduce(program)
  registerTail(program)
  registerHistory(program)
  registerTrim(program)
  const groups = program
    .command('groups')
    .description('list, describe, reset and delete consumer groups (default: list)')
  registerGroupsList(groups)
  registerGroupsDescribe(groups)
  registerGroupsReset(groups)
  registerGroupsDelete(groups)
  registerImportTwainmq(program)
  registerCheck(program)
  registerRepair(program)
  registerBench(program)
  registerServe(program)
  return program
}

/** Print an error as `code: message` and return the exit code for it. */
export function reportError(e: unknown): number {
  if (e instanceof CommanderError) {
    // Help and --version also come through here (exit code 0).
    if (e.exitCode === 0) return EXIT_OK
    // 'commander.help' with exit code 1: the help of a command that needs a subcommand was printed.
    const message =
      e.code === 'commander.help'
        ? 'missing command (see the list above)'
        : `${e.message.replace(/^error: /, '')} (see twainmq --help)`
    process.stderr.write(`ERR_USAGE: ${message}\n`)
    return EXIT_USAGE
  }
  if (e instanceof ReportedError) return EXIT_RUNTIME
  if (e instanceof UsageError) {
    process.stderr.write(`${e.code}: ${e.message}\n`)
    return EXIT_USAGE
  }
  const raw: unknown = e instanceof TwainError ? e.code : (e as { code?: unknown } | null)?.code
  const code = typeof raw === 'string' && raw !== '' ? raw : 'ERR_UNEXPECTED'
  const message = e instanceof Error ? e.message : String(e)
  process.stderr.write(`${code}: ${message}\n`)
  if (code === 'ERR_UNEXPECTED' && e instanceof Error && process.env.TWAINMQ_DEBUG)
    process.stderr.write(`${e.stack ?? ''}\n`)
  return EXIT_RUNTIME
}

/** Run the CLI on `argv` (as `process.argv`); resolves with the exit code. */
export async function run(argv: string[], version: string): Promise<number> {
  try {
    await buildProgram(version).parseAsync(argv)
    return EXIT_OK
  } catch (e) {
    return reportError(e)
  }
}
