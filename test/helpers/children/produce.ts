// Child producer: node --import tsx produce.ts <dir> <topic> <id> <count> <batch>
// Sends <count> messages in sendBatch chunks of <batch>; prints each acknowledged chunk as a JSON line.
import { open } from '../../../src/index.js'

const [dir, topic, id, countText, batchText] = process.argv.slice(2) as [string, string, string, string, string]
const count = Number(countText)
const batch = Number(batchText)
const twain = await open(dir, { clientId: `producer-${id}` })
const producer = twain.producer<string>(topic)
for (let i = 0; i < count; i += batch) {
  const items: Array<{ key: number; value: string }> = []
  for (let j = i; j < Math.min(count, i + batch); j++) items.push({ key: Number(id), value: `${id}:${j}` })
  const res = await producer.sendBatch(items)
  process.stdout.write(JSON.stringify(res.map((r, k) => [r.partition, r.offset, items[k]!.value])) + '\n')
}
await twain.close()
