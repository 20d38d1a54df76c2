// Child: node --import tsx exit-without-close.ts <target> <prefix> <partitioned|shared> <count>
// Consumes and acks `count` messages, ends its iteration and exits by itself: neither the consumer
// nor twain is closed, and the commit interval is far away.
import { open } from '../../../src/index.js'

const [target, prefix, mode, count] = process.argv.slice(2) as [string, string, 'partitioned' | 'shared', string]
const n = Number(count)
const twain = await open(target, prefix ? { prefix } : {})
await twain.createTopic('t').catch(() => undefined)
await twain.producer<string>('t').sendBatch(Array.from({ length: n }, (_, i) => ({ key: i, value: `m${i}` })))
const c = twain.consumer<string>('t', { group: 'g', mode, commitIntervalMs: 600_000 })
let acked = 0
for await (const m of c) {
  m.ack()
  if (++acked === n) break
}
console.log(`acked ${acked}`)
