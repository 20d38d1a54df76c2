import type { Command } from 'commander'
import { UsageError, withTwain } from './context.js'

/** `twainmq groups list` (also bare `twainmq groups`): one consumer group name per line, sorted. */
export function registerGroupsList(groups: Command): void {
  groups
    .command('list', { isDefault: true })
    .description('list consumer groups, one per line (the default)')
    // As the default command, `list` receives whatever follows `groups`: refuse it ourselves, so
    // `twainmq groups bogus` says "unknown command" rather than "too many arguments for 'list'".
    .allowExcessArguments(true)
    .action(async (_opts: unknown, cmd: Command) => {
      const [extra] = cmd.args
      if (extra !== undefined) {
        if (cmd.parent?.args[0] === 'list')
          throw new UsageError(`too many arguments for 'list': ${JSON.stringify(extra)} (see twainmq groups --help)`)
        throw new UsageError(
          `unknown command 'groups ${extra}' (expected list, describe, reset or delete; see twainmq groups --help)`,
        )
      }
      const names = await withTwain(cmd, (twain) => twain.listGroups())
      if (names.length > 0) process.stdout.write([...names].sort().join('\n') + '\n')
    })
}
