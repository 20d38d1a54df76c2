import type { Command } from 'commander'
import { groupArg } from './arguments.js'
import { withTwain } from './context.js'
import { askLine } from './stdin.js'
import { NotConfirmedError } from './topics-delete.js'

/**
 * `twainmq groups delete <group> [--yes]`: delete a consumer group and its committed offsets (refused
 * while it has live members). Without `--yes` the user must type the group name; anything else, end
 * of input or (for a non-terminal stdin) 30 s of silence aborts with exit 1.
 */
export function registerGroupsDelete(groups: Command): void {
  groups
    .command('delete')
    .description('delete a consumer group and its committed offsets (asks for the name unless --yes)')
    .argument('<group>', 'consumer group name', groupArg)
    .option('-y, --yes', 'do not ask for confirmation')
    .action(async (group: string, opts: { yes?: boolean }, cmd: Command) => {
      await withTwain(cmd, async (twain) => {
        // Check first, so nobody is asked to confirm the deletion of a group that does not exist.
        await twain.describeGroup(group)
        if (!opts.yes) {
          const answer = await askLine(
            `This deletes consumer group "${group}" and its committed offsets. Type the group name to confirm: `,
          )
          if (answer?.trim() !== group) {
            const why =
              answer === undefined ? 'no confirmation on stdin' : `${JSON.stringify(answer.trim())} does not match`
            throw new NotConfirmedError(`Group "${group}" was not deleted: ${why} (use --yes to skip the question)`)
          }
        }
        await twain.deleteGroup(group)
      })
      process.stdout.write(`deleted group ${group}\n`)
    })
}
