// Bench child: one member of a consumer group. Joins, reports its assignment, waits for "go",
// then consumes and acks, reporting progress over IPC until the parent kills or stops it.
// Usage: node --import tsx group-member.ts <root> <topic> <group> <name>
import { open } from '../../src/index.js'
import { waitForGo } from '../lib/child.js'

const [root, topic, group, name] = process.argv.slice(2) as [string, string, string, string]
const twain = await open(root)
const consumer = twain.consumer<string>(topic, { group, name, sessionTimeoutMs: 10_000, commitIntervalMs: 200 })
consumer.on('assigned', (tps) => process.send?.({ type: 'assigned', partitions: tps.map((t) => t.partition) }))
process.send?.({ type: 'ready' })
await waitForGo()
let acked = 0
const timer = setInterval(() => process.send?.({ type: 'progress', acked }), 50)
process.once('SIGTERM', () => void consumer.close())
for await (const m of consumer) {
  if (m.value.length >= 0) acked++
  m.ack()
}
clearInterval(timer)
process.send?.({ type: 'progress', acked })
await twain.close()
process.disconnect?.()
