// Fault-test processor: node --import tsx zombie-processor.ts <target> <in> <out> <group> [optionsJSON]
// A `twain.processor()` member of <group> reading <in>; each message sends `outputs` outputs to
// <out>, the i-th to partition (offset + i) % `outPartitions`, its value `<pid> <p>@<offset>#<i>`
// and header `x-pid: <pid>`, then acks. Options: sessionTimeoutMs, heartbeatIntervalMs,
// commitIntervalMs, outputs (3), outPartitions (3), hold: read nothing until SIGUSR2.
// Prints (blocking writes): `# started <pid> <memberId>`, `# assigned|revoked <partitions>`,
// `# error <name>: <message>`, `# go`, per message `# sent <p>@<offset>` once its sends are issued,
// then per output `out <p>@<offset>#<i> <partition> <offset> <new|dup>` or `! <p>@<offset>#<i> <name>: <message>`.
// SIGUSR1: right after issuing the next message's sends (none of them written yet), print
// `# stopping <p>@<offset>` and SIGSTOP itself; `# resumed` once continued. On losing a partition
// (a FencedError 'error' event: its lease was taken, found by a heartbeat or a refused commit) it
// closes once the message in hand is handled (so it is assigned nothing again), prints `# closed`
// and exits 0; SIGTERM closes too.
import { open, type ProcessorMessage } from '../../../src/index.js'
import { lineNow as out } from './sync-out.js'

const [target, input, output, group, optsText] = process.argv.slice(2) as [string, string, string, string, string?]
const {
  outputs = 3,
  outPartitions = 3,
  hold = false,
  ...opts
} = JSON.parse(optsText ?? '{}') as {
  outputs?: number
  outPartitions?: number
  hold?: boolean
  sessionTimeoutMs?: number
  heartbeatIntervalMs?: number
  commitIntervalMs?: number
}
const oneLine = (s: string) => s.replace(/\n/g, ' ')

let stopNext = false
process.on('SIGUSR1', () => (stopNext = true))
let go: (() => void) | undefined
const started = new Promise<void>((r) => (go = r))
process.on('SIGUSR2', () => go?.())

const twain = await open(target, target.startsWith('redis') ? {} : { pollMs: 50 })
const processor = twain.processor<string>(input, { group, ...opts })
let closing: Promise<void> | undefined
/** The handling of the message in hand (its sends settled, its ack). */
let inHand: Promise<void> = Promise.resolve()
const close = () =>
  (closing ??= (async () => {
    await processor.close().catch((e: Error) => out(`# close-error ${e.name}: ${oneLine(e.message)}`))
    await twain.close()
    out('# closed')
    process.exit(0)
  })())
process.on('SIGTERM', () => void close())
processor.on('assigned', (x) => out(`# assigned ${x.map((t) => t.partition).join(',')}`))
processor.on('revoked', (x) => out(`# revoked ${x.map((t) => t.partition).join(',')}`))
processor.on('error', (e) => {
  out(`# error ${e.name}: ${oneLine(e.message)}`)
  // Its lease taken (found by a heartbeat or a refused commit): it leaves before it is given
  // another, once the sends of the message in hand have settled (they go to the store first).
  if (e.name === 'FencedError') void inHand.then(close, close)
})
out(`# started ${process.pid} ${processor.memberId}`)

if (hold) {
  const keep = setInterval(() => undefined, 1000) // a member that reads nothing keeps no handle
  await started
  clearInterval(keep)
}
out('# go')

const handle = async (m: ProcessorMessage<string>) => {
  const at = `${m.partition}@${m.offset}`
  if (stopNext) await new Promise((r) => setTimeout(r, 20)) // let locks held a moment after a write go
  const sends = Array.from({ length: outputs }, (_, i) =>
    m.send(output, `${at}#${i}`, `${process.pid} ${at}#${i}`, {
      headers: { 'x-pid': String(process.pid) },
      partition: (m.offset + i) % outPartitions,
    }),
  )
  out(`# sent ${at}`)
  if (stopNext) {
    stopNext = false
    // Stopped here, the sends are queued, none written: they go once the process runs again.
    out(`# stopping ${at}`)
    process.kill(process.pid, 'SIGSTOP')
    out('# resumed')
  }
  const settled = await Promise.allSettled(sends)
  settled.forEach((s, i) => {
    if (s.status === 'fulfilled')
      out(`out ${at}#${i} ${s.value.partition} ${s.value.offset} ${s.value.duplicate ? 'dup' : 'new'}`)
    else out(`! ${at}#${i} ${(s.reason as Error).name}: ${oneLine((s.reason as Error).message)}`)
  })
  m.ack()
}

try {
  for await (const m of processor) await (inHand = handle(m))
} catch (e) {
  out(`# error ${(e as Error).name}: ${oneLine((e as Error).message)}`)
}
