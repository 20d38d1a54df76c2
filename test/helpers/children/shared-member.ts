// Child shared-group member: node --import tsx shared-member.ts <url> <prefix> <topics,comma> <group> <name> [optionsJSON]
// Options: any ConsumerOptions (besides group, name, mode) plus
//   ack: true → ack every message (default: hold them, never ack)
// Prints `# joined` once it is a member, then `topic/partition@offset#deliveryCount` per message.
// Meant to be killed (SIGKILL) while it holds messages; SIGTERM closes and exits 0.
import { open, type ConsumerOptions } from '../../../src/index.js'

const [url, prefix, topicsText, group, name, optsText] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
  string | undefined,
]
const { ack = false, ...opts } = JSON.parse(optsText ?? '{}') as Partial<ConsumerOptions> & { ack?: boolean }
const out = (line: string) => process.stdout.write(line + '\n')

const twain = await open(url, { prefix })
const c = twain.consumer<string>(topicsText.split(','), { ...opts, group, name, mode: 'shared' })
c.on('error', (e) => out(`# error ${e.name}: ${e.message}`))
c.on('assigned', () => out('# joined'))
process.once('SIGTERM', () => {
  void c.close().then(async () => {
    await twain.close()
    process.exit(0)
  })
})
for await (const m of c) {
  out(`${m.topic}/${m.partition}@${m.offset}#${m.deliveryCount}`)
  if (ack) m.ack()
}
