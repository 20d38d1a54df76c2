import type { Command } from 'commander'
import { topicArg } from './arguments.js'
import { withTwain } from './context.js'
import { askLine } from './stdin.js'

/** Refused confirmation: a runtime error (exit 1), printed as `ERR_NOT_CONFIRMED: …`. */
export class NotConfirmedError extends Error {
  readonly code = 'ERR_NOT_CONFIRMED'
}

/**
 * `twainmq topics delete <name> [--yes]`. Without `--yes` the user must type the topic name; anything
 * else, end of input or (for a non-terminal stdin) 30 s of silence aborts with exit 1.
 */
export function registerTopicsDelete(topics: Command): void {
  topics
    .command('delete')
    .description('delete a topic and all its messages (asks for the name unless --yes)')
    .argument('<name>', 'topic name', topicArg)
    .option('-y, --yes', 'do not ask for confirmation')
    .action(async (name: string, opts: { yes?: boolean }, cmd: Command) => {
      await withTwain(cmd, async (twain) => {
        // Check first, so nobody is asked to confirm the deletion of a topic that does not exist.
        await twain.describeTopic(name)
        if (!opts.yes) {
          const answer = await askLine(
            `This deletes topic "${name}" and all its messages. Type the topic name to confirm: `,
          )
          if (answer?.trim() !== name) {
            const why =
              answer === undefined ? 'no confirmation on stdin' : `${JSON.stringify(answer.trim())} does not match`
            throw new NotConfirmedError(`Topic "${name}" was not deleted: ${why} (use --yes to skip the question)`)
          }
        }
        await twain.deleteTopic(name)
      })
      process.stdout.write(`deleted topic ${name}\n`)
    })
}
