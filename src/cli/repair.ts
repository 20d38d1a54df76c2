import type { Command } from 'commander'
import { checkTopic } from '../backends/file/check.js'
import { repairTopic } from '../backends/file/repair.js'
import { topicArg } from './arguments.js'
import { checkText, failIfDamaged, fileRoot } from './check.js'

/** `twainmq repair <topic>`: quarantine damaged bytes, keep every intact record at its offset, then check again. */
export function registerRepair(program: Command): void {
  program
    .command('repair')
    .description('move damaged bytes of a topic aside and rewrite its segments from the intact frames (file backend)')
    .argument('<topic>', 'topic name', topicArg)
    .action(async (topic: string, _opts: unknown, cmd: Command) => {
      const root = fileRoot(cmd, 'repair')
      const done = await repairTopic(root, topic)
      const lines: string[] = []
      for (const { partition, actions } of done) {
        if (actions.length === 0) lines.push(`partition ${partition}: no damage, nothing to do`)
        for (const a of actions) lines.push(`partition ${partition}: ${a}`)
      }
      const after = await checkTopic(root, topic)
      process.stdout.write(lines.join('\n') + '\n\nafter repair:\n' + checkText(after))
      failIfDamaged(topic, after)
    })
}
