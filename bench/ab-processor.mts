// A/B of the processor suite's exactly-once pipeline (b: `twain.processor` + `m.send`) between two
// source trees, both loaded in one process and run in turn (one tree's run then the other's, the
// order swapped every pair), so a change of the machine's load falls on both. Each run fills a new
// 4-partition topic with 100,000 inputs and runs each tree's own `pipeline()` of
// bench/suites/processor.ts to another. Prints each pair's inputs/s and B/A, then the medians (the
// first pair, warming up, left out).
// usage: npx tsx bench/ab-processor.mts <tree A> <tree B> [pairs, default 10] [file|redis] [map|enrich] [batch|each]
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { RedisServer } from '../test/helpers/redis-server.js'
import { abPairs } from './lib/ab-pairs.js'

const [treeA, treeB] = process.argv.slice(2) as [string, string]
const pairs = Number(process.argv[4] ?? 10)
const backend = process.argv[5] ?? 'file'
const shape = process.argv[6] ?? 'map'
const idiom = process.argv[7] ?? 'batch'
const n = 100_000
const value = 'x'.repeat(100)

interface Tree {
  name: string
  suite: any
  dir: string | undefined
  twain: any
}

const server = backend === 'redis' ? await RedisServer.start() : undefined
const trees: Tree[] = []
for (const root of [treeA, treeB]) {
  const api = await import(`${root}/src/index.ts`)
  const suite = await import(`${root}/bench/suites/processor.ts`)
  const dir = server ? undefined : mkdtempSync(join(tmpdir(), 'ab-processor-'))
  const target = server ? `redis://127.0.0.1:${server.port}` : (dir as string)
  trees.push({ name: root, suite, dir, twain: await api.open(target) })
}

let seq = 0
/** Pipeline b on fresh topics of `t`'s store: inputs/s as the suite times it. */
async function run(t: Tree): Promise<number> {
  const input = `in${seq}`
  const out = `out${seq++}`
  await t.twain.createTopic(input, { keyType: 'u32', partitions: 4 })
  await t.twain.createTopic(out, { keyType: 'u32', partitions: 4 })
  await t.suite.fill(t.twain, input, n, value)
  const { rate } = await t.suite.pipeline(t.twain, 'b', shape, idiom, input, out, n, `[${seq}]`)
  return rate
}

await abPairs([treeA, treeB], pairs, 'inputs/s', `${backend} ${shape} ${idiom}: `, (j) => run(trees[j] as Tree))
for (const t of trees) {
  await t.twain.close()
  if (t.dir !== undefined) rmSync(t.dir, { recursive: true, force: true })
}
await server?.destroy()
