// A/B of `windowed()` between two source trees, both loaded in one process and run in turn (one
// tree's run then the other's, the order swapped every pair), so a change of the machine's load
// falls on both: the count of `npm run bench -- processing` (200,000 clicks of 100 users, 4
// partitions, 10 s tumbling windows, 1 s lateness) on a directory, each run on topics of its own.
// Prints each pair's clicks/s and B/A, then the medians (the first pair, warming up, left out).
// usage: npx tsx bench/ab-windowed.mts <tree A> <tree B> [pairs, default 12]
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { LATENESS, SIZE, sendClicks } from './lib/clicks.js'
import { abPairs } from './lib/ab-pairs.js'

const [treeA, treeB] = process.argv.slice(2) as [string, string]
const pairs = Number(process.argv[4] ?? 12)
const n = 200_000
/** The windows the count closes over the 200,000 clicks (as the processing suite finds them by hand). */
const WINDOWS = 19_842

interface Tree {
  name: string
  api: any
  dir: string
  twain: any
}

const trees: Tree[] = []
for (const root of [treeA, treeB]) {
  const api = await import(`${root}/src/index.ts`)
  const dir = mkdtempSync(join(tmpdir(), 'ab-windowed-'))
  trees.push({ name: root, api, dir, twain: await api.open(dir) })
}

let seq = 0
/** One windowed count on fresh topics of `t`'s store: clicks/s from the processor's creation to its close. */
async function run(t: Tree): Promise<number> {
  const topic = `clicks${seq++}`
  await sendClicks(t.twain, topic, n)
  await t.twain.createTopic(`${topic}-out`, { partitions: 2, keyType: 'string' })
  const t0 = performance.now()
  const proc = t.twain.processor(topic, { group: `win-${topic}`, state: 'w', from: 'start' })
  let results = 0
  for await (const _ of t.api.windowed(proc, {
    window: t.api.tumbling(SIZE),
    latenessMs: LATENESS,
    to: `${topic}-out`,
    initial: () => 0,
    add: (x: number) => x + 1,
  }))
    if (++results === WINDOWS) break
  await proc.close()
  return (n * 1000) / (performance.now() - t0)
}

await abPairs([treeA, treeB], pairs, 'clicks/s', '', (j) => run(trees[j] as Tree))
for (const t of trees) {
  await t.twain.close()
  rmSync(t.dir, { recursive: true, force: true })
}
