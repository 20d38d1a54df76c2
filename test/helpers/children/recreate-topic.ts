// Child: node --import tsx recreate-topic.ts <dir> <topic> <keyType> <partitions> <value>...
// Deletes <topic>, creates it again with <keyType> and <partitions>, and sends each <value> with key
// "k<i>" (string key types) or <i> to partition i % partitions; prints "done" when all are acknowledged.
import { open, type KeyType } from '../../../src/index.js'

const [dir, topic, keyType, partitions, ...values] = process.argv.slice(2) as [
  string,
  string,
  KeyType,
  string,
  ...string[],
]
const twain = await open(dir, { clientId: 'recreator' })
await twain.deleteTopic(topic)
await twain.createTopic(topic, { keyType, partitions: Number(partitions) })
const producer = twain.producer<string>(topic)
const stringKeys = keyType === 'string' || keyType.startsWith('char')
await producer.sendBatch(
  values.map((value, i) => ({ key: stringKeys ? `k${i}` : i, value, partition: i % Number(partitions) })),
)
process.stdout.write('done\n')
await twain.close()
