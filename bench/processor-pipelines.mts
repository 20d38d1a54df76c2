// The processor suite's pipelines (bench/suites/processor.ts) on their own, for A/B runs of two trees:
//   npx tsx bench/processor-pipelines.mts <file|redis> <way-idiom,...> <map|enrich> <rounds>
// e.g. `npx tsx bench/processor-pipelines.mts file a-batch,b-batch,b-each enrich 2` prints each pipeline's inputs/s.
import { open } from '../src/index.js'
import { makeTempDir, removeTempDir } from './lib/tmp.js'
import { fill, pipeline } from './suites/processor.js'
import { RedisServer } from '../test/helpers/redis-server.js'
const backend = process.argv[2] ?? 'file'
const ways = (process.argv[3] ?? 'a-batch,b-batch,b-each').split(',')
const shape = (process.argv[4] ?? 'enrich') as 'map' | 'enrich'
const rounds = Number(process.argv[5] ?? 2)
const server = backend === 'redis' ? await RedisServer.start() : undefined
const dir = server ? undefined : makeTempDir('pipelines')
const twain = await open(server ? `redis://127.0.0.1:${server.port}` : (dir as string))
const n = 100000
const value = 'x'.repeat(100)
for (let r = 0; r < rounds; r++) {
  await twain.createTopic(`in${r}`, { keyType: 'u32', partitions: 4 })
  await fill(twain, `in${r}`, n, value)
  for (const w of ways) {
    const [way, idiom] = w.split('-') as ['a' | 'b' | 'c' | 'd', 'each' | 'batch']
    const out = `out${r}${w}`
    await twain.createTopic(out, { keyType: 'u32', partitions: 4 })
    await pipeline(twain, way, shape, idiom, `in${r}`, out, n, `[${r}]`)
  }
}
await twain.close()
await server?.destroy()
if (dir !== undefined) removeTempDir(dir)
