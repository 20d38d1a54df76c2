// Idempotent-send producer: node --import tsx id-producer.ts <target> <topic> <count> [batch=50]
// Sends messages 0..count-1 (key = seq, value `m-<seq>`, id `m-<seq>`) in batches of Promise.all of
// send, and prints `<seq> <partition> <offset> <new|dup>` for each once acknowledged (blocking
// writes, so a SIGKILL never cuts a line: sync-out.ts). Prints `# started` first, `# done` at the end.
import { open } from '../../../src/index.js'
import { flushLines as flush, line as out } from './sync-out.js'

const [target, topic, countText, batchText] = process.argv.slice(2) as [string, string, string, string | undefined]
const count = Number(countText)
const batch = Number(batchText ?? 50)

const twain = await open(target)
const producer = twain.producer<string>(topic, { dedupWindowMs: 600_000 })
out('# started')
flush()
for (let from = 0; from < count; from += batch) {
  const seqs = Array.from({ length: Math.min(batch, count - from) }, (_, i) => from + i)
  const sent = await Promise.all(seqs.map((s) => producer.send(s, `m-${s}`, { id: `m-${s}` })))
  sent.forEach((r, i) => out(`${seqs[i]} ${r.partition} ${r.offset} ${r.duplicate ? 'dup' : 'new'}`))
  flush()
}
await twain.close()
out('# done')
flush()
