// Fault-test producer: node --import tsx fault-producer.ts <dir> <topic> <name> [batch=100] [padBytes=200]
// Sends batches of <batch> records (Promise.all of send) until SIGTERM, each value `<name>-<seq> <padding>`.
// Prints `# started <pid>` first, then for every send: `<id> <partition> <offset>` once acknowledged, or
// `! <id> <code> <name>: <message>` when it rejected. Lines are written with blocking writes in
// chunks < PIPE_BUF (sync-out.ts), so a SIGKILL never loses or cuts a line the child printed.
// SIGTERM: finish the batch in flight, close, print `# closed`, exit 0. Safety net: it also stops by
// itself after [maxMs=120000] ms or [maxRecords=2000000] records (a test that forgets it cannot fill the disk).
import { open } from '../../../src/index.js'
import { flushLines as flush, line as out } from './sync-out.js'

const [dir, topic, name, batchText, padText, maxMsText, maxRecordsText] = process.argv.slice(2) as [
  string,
  string,
  string,
  ...Array<string | undefined>,
]
const deadline = Date.now() + Number(maxMsText ?? 120_000)
const maxRecords = Number(maxRecordsText ?? 2_000_000)
const batch = Number(batchText ?? 100)
const pad = 'p'.repeat(Number(padText ?? 200))

let stop = false
process.on('SIGTERM', () => (stop = true))

const twain = await open(dir, { clientId: `fault-${name}-${process.pid}` })
const producer = twain.producer<string>(topic)
out(`# started ${process.pid}`)
flush()
let seq = 0
while (!stop && Date.now() < deadline && seq < maxRecords) {
  // An uncontended fast-path send resolves without I/O: yield, or SIGTERM would never be seen.
  await new Promise((r) => setImmediate(r))
  const ids = Array.from({ length: batch }, () => `${name}-${seq++}`)
  const settled = await Promise.allSettled(ids.map((id, i) => producer.send(i, `${id} ${pad}`)))
  settled.forEach((s, i) => {
    if (s.status === 'fulfilled') out(`${ids[i]} ${s.value.partition} ${s.value.offset}`)
    else {
      const e = s.reason as { code?: string; name?: string; message?: string }
      out(`! ${ids[i]} ${e?.code ?? 'none'} ${e?.name ?? typeof e}: ${String(e?.message).replace(/\n/g, ' ')}`)
    }
  })
  flush()
}
await twain.close()
out('# closed')
flush()
process.exit(0)
