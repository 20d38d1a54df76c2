// Child consumer-group member: node --import tsx group-member.ts <dir> <topics,comma> <group> [optionsJSON]
// Options: any ConsumerOptions (besides group) plus
//   members: number of consumers in this process (default 1)
//   hold: true → never ack (messages stay in flight)
//   ackFirst: ack only the first n messages (per process), hold the rest
//   onUsr1Block: ms to block the event loop on SIGUSR1; then ack everything held and commit()
// Prints `topic/partition@offset` for each message it processes (before acking it), and lines
// starting with '#' for events: `# started <member>`, `# assigned <member> <ms since start> <tp,...>`,
// `# revoked <member> <tp,...>`, `# commit <member> <tp=offset,...>`, `# error <member> <name>: <message>`,
// `# commit-result <ok|name>`, `# closed`. SIGTERM closes (leaves the group) and exits 0.
import {
  open,
  type Consumer,
  type ConsumerOptions,
  type GroupMessage,
  type SharedConsumer,
} from '../../../src/index.js'

const [dir, topicsText, group, optsText] = process.argv.slice(2) as [string, string, string, string | undefined]
const {
  members = 1,
  hold = false,
  ackFirst,
  onUsr1Block,
  ...opts
} = JSON.parse(optsText ?? '{}') as Partial<ConsumerOptions> & {
  members?: number
  hold?: boolean
  ackFirst?: number
  onUsr1Block?: number
}
const out = (line: string) => process.stdout.write(line + '\n')
const tps = (xs: Array<{ topic: string; partition: number }>) => xs.map((x) => `${x.topic}/${x.partition}`).join(',')

const twain = await open(dir, { pollMs: 50 })
const consumers: Array<Consumer<string> | SharedConsumer<string>> = []
const held: GroupMessage<string>[] = []
let processed = 0

for (let i = 0; i < members; i++) {
  const started = Date.now()
  const c = twain.consumer<string>(topicsText.split(','), { group, ...opts })
  consumers.push(c)
  const id = c.memberId
  out(`# started ${id}`)
  c.on('assigned', (x) => out(`# assigned ${id} ${Date.now() - started} ${tps(x)}`))
  c.on('revoked', (x) => out(`# revoked ${id} ${tps(x)}`))
  c.on('commit', (x) => out(`# commit ${id} ${x.map((e) => `${e.topic}/${e.partition}=${e.offset}`).join(',')}`))
  c.on('error', (e) => out(`# error ${id} ${e.name}: ${e.message}`))
  void (async () => {
    for await (const m of c) {
      out(`${m.topic}/${m.partition}@${m.offset}`)
      processed++
      if (hold || (ackFirst !== undefined && processed > ackFirst)) held.push(m)
      else m.ack()
    }
  })().catch((e: Error) => out(`# error ${id} ${e.name}: ${e.message}`))
}

if (onUsr1Block !== undefined) {
  process.on('SIGUSR1', () => {
    // A zombie: the event loop stalls (no heartbeats) for longer than the session timeout…
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, onUsr1Block)
    // …and then, before any timer of the consumer can run, it acks what it held and commits.
    for (const m of held.splice(0)) m.ack()
    Promise.all(consumers.map((c) => c.commit())).then(
      () => out('# commit-result ok'),
      (e: Error) => out(`# commit-result ${e.name}`),
    )
  })
}

process.on('SIGUSR2', () => {
  // ack what is held and commit (used after SIGCONT)
  for (const m of held.splice(0)) m.ack()
  Promise.all(consumers.map((c) => c.commit())).then(
    () => out('# commit-result ok'),
    (e: Error) => out(`# commit-result ${e.name}`),
  )
})

process.on('SIGTERM', () => {
  void (async () => {
    for (const m of held.splice(0)) m.ack()
    await Promise.all(consumers.map((c) => c.close()))
    await twain.close()
    out('# closed')
    process.exit(0)
  })()
})
