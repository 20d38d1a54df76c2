import { resolve } from 'node:path'
import cliProgress from 'cli-progress'
import type { Command } from 'commander'
import { importTwainmqTopic } from '../index.js'
import { topicArg } from './arguments.js'
import { UsageError, storeUrl } from './context.js'

interface ImportCliOptions {
  as?: string
}

/**
 * `twainmq import-twainmq <python-root> <topic> [--as <name>]`: copy a Python TwainMQ topic into the
 * native root named by `--url`, with a progress bar on stderr when it is a terminal.
 */
export function registerImportTwainmq(program: Command): void {
  program
    .command('import-twainmq')
    .description(
      'copy a Python TwainMQ topic into the native store of --url (offsets, timestamps, keys, values, types kept)',
    )
    .argument('<python-root>', 'the Python TwainMQ root directory (holding <topic>.twc)')
    .argument('<topic>', 'the topic to copy')
    .option('--as <name>', 'name of the copy (default: the same name)', topicArg)
    .action(async (pythonRoot: string, topic: string, opts: ImportCliOptions, cmd: Command) => {
      const { target } = storeUrl(cmd)
      if (target.kind !== 'file')
        throw new UsageError(
          `import-twainmq copies into a directory store; --url ${JSON.stringify(target.url)} is not one`,
        )
      const bar = process.stderr.isTTY
        ? new cliProgress.SingleBar(
            {
              format: `  importing ${topic} [{bar}] {percentage}% | {value}/{total} messages | {duration_formatted}`,
              hideCursor: true,
              clearOnComplete: true,
              fps: 10,
            },
            cliProgress.Presets.shades_classic,
          )
        : undefined
      let started = false
      let r
      try {
        r = await importTwainmqTopic(resolve(pythonRoot), topic, target.root, {
          ...(opts.as === undefined ? {} : { as: opts.as }),
          onProgress: (done, total) => {
            if (!bar) return
            if (!started) {
              started = true
              bar.start(total, 0)
            }
            bar.update(done)
          },
        })
      } finally {
        if (started) bar?.stop()
      }
      const s = r.partitions === 1 ? '' : 's'
      const notes = [
        r.corrupt ? `${r.corrupt} corrupt line(s) kept as bytes with an x-twainmq-error header` : '',
        r.unknownTypes
          ? `${r.unknownTypes} value(s) of unknown type ids kept as JSON with an x-twainmq-type-id header`
          : '',
        r.missing ? `${r.missing} missing offset(s) filled with empty x-twainmq-missing records` : '',
      ].filter(Boolean)
      process.stdout.write(
        `imported ${r.messages} message${r.messages === 1 ? '' : 's'} of TwainMQ topic ${topic} (${r.partitions} partition${s}) into topic ${r.topic} of ${target.root}\n` +
          notes.map((n) => `  note: ${n}\n`).join(''),
      )
    })
}
