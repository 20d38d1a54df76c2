import type { Consumer, TopicPartition, Twain } from '../index.js'
import { ReportedError } from './context.js'
import { formatter, type Format } from './format.js'
import { LineWriter } from './output.js'

export interface TailGroupOptions {
  group: string
  /** The member's name (the consumer's `name` option); the library's default when undefined. */
  name: string | undefined
  /** Where the group has no commit; the library's default ('start') when undefined. */
  from: 'start' | 'end' | undefined
  format: Format
  quiet: boolean
}

const list = (tps: TopicPartition[], none = 'none'): string =>
  tps.length === 0 ? none : tps.map((tp) => `${tp.topic}/${tp.partition}`).join(', ')

/**
 * `tail --group`: consume `topic` as a member of a consumer group (partitioned mode). Each message is
 * printed and acked once its line was handed to stdout (a line lost to a closed pipe is nacked), so
 * what the group commits is what was printed. Returns when the consumer is closed (`onConsumer`
 * hands it to the signal handlers) or stdout breaks; the consumer has committed and left by then.
 */
export async function tailGroup(
  twain: Twain,
  topic: string,
  opts: TailGroupOptions,
  onConsumer: (c: Consumer) => void,
): Promise<void> {
  const consumer = twain.consumer(topic, {
    group: opts.group,
    ...(opts.name === undefined ? {} : { name: opts.name }),
    ...(opts.from === undefined ? {} : { from: opts.from }),
  })
  onConsumer(consumer)
  // A fatal failure comes as an 'error' event and is then thrown by the loop: printed once, exit 1.
  const printed = new WeakSet<Error>()
  const offs = [
    consumer.on('error', (e) => {
      const code = (e as { code?: unknown }).code
      printed.add(e)
      process.stderr.write(`${typeof code === 'string' ? code : 'ERR_CONSUMER'}: ${e.message}\n`)
    }),
  ]
  const out = new LineWriter()
  out.whenBroken(() => void consumer.close())
  const print = formatter(opts.format)
  try {
    // One coordination step first (join, take partitions), so the notice means "consuming now".
    await consumer.rebalance()
    if (!opts.quiet && !consumer.closed) {
      const from = opts.from === undefined ? '' : `, from ${opts.from} where nothing is committed`
      const parts = list(consumer.assignments(), 'none yet')
      process.stderr.write(
        `tailing ${topic} as a member of group ${opts.group} (member ${consumer.memberId}, partitions: ${parts}${from}; Ctrl-C to stop)\n`,
      )
      offs.push(
        // Not the partitions given up by close() on the way out.
        consumer.on('assigned', (tps) => void (consumer.closed || process.stderr.write(`assigned ${list(tps)}\n`))),
        consumer.on('revoked', (tps) => void (consumer.closed || process.stderr.write(`revoked ${list(tps)}\n`))),
      )
    }
    for await (const m of consumer) {
      await out.line(print(m), (ok) => (ok ? m.ack() : m.nack()))
      if (out.broken) break
    }
  } catch (e) {
    throw e instanceof Error && printed.has(e) ? new ReportedError(e) : e
  } finally {
    // Hand the last lines to stdout (which acks them), then commit and leave the group.
    await out.end()
    await consumer.close()
    for (const off of offs) off()
  }
}
