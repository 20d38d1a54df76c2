// Compacted topic on a directory: N updates of K keys (default 1,000,000 over 5,000, 100-byte
// values) sent to a plain topic and to a compacted one; history over the plain one (the
// uncompacted baseline), then over the compacted one after `compactTopic`, and the pass's time;
// and history over a plain topic of K messages, one per key (what a compacted history cannot beat).
// usage: N=1000000 K=5000 npx tsx bench/compaction.mts <empty dir>
// Times are medians of 3 histories; compare the ratio, not the times (a shared machine).
import { open } from '../src/index.js'

const dir = process.argv[2]
if (dir === undefined) throw new Error('usage: npx tsx bench/compaction.mts <empty dir>')
const N = Number(process.env.N ?? 1_000_000)
const K = Number(process.env.K ?? 5000)
const twain = await open(dir)
await twain.createTopic('plain', { keyType: 'u32' })
await twain.createTopic('compacted', { keyType: 'u32', compact: true })
await twain.createTopic('keys', { keyType: 'u32' }) // K messages, one per key: the floor of a compacted history
await twain.producer('keys').sendBatch(Array.from({ length: K }, (_, key) => ({ key, value: 'x'.repeat(100) })))
const v = 'x'.repeat(100)
for (const topic of ['plain', 'compacted']) {
  const p = twain.producer(topic)
  for (let i = 0; i < N; i += 1000)
    await p.sendBatch(Array.from({ length: Math.min(1000, N - i) }, (_, j) => ({ key: (i + j) % K, value: v })))
  await p.close()
}

async function history(topic: string): Promise<{ ms: number; n: number }> {
  const times: number[] = []
  let n = 0
  for (let r = 0; r < 3; r++) {
    const t0 = performance.now()
    n = 0
    for await (const _ of twain.history(topic)) n++
    times.push(performance.now() - t0)
  }
  return { ms: times.sort((a, b) => a - b)[1] as number, n }
}

const fmt = (ms: number) => `${Math.round(ms)} ms`
const plain = await history('plain')
console.log(`history of the plain topic: ${plain.n} messages in ${fmt(plain.ms)}`)
const t0 = performance.now()
const stats = await twain.compactTopic('compacted')
console.log(`compactTopic: ${fmt(performance.now() - t0)}; ${JSON.stringify(stats)}`)
const after = await history('compacted')
console.log(`history of the compacted topic: ${after.n} messages in ${fmt(after.ms)}`)
const floor = await history('keys')
console.log(`history of a plain topic of one message per key: ${floor.n} messages in ${fmt(floor.ms)}`)
console.log(
  `compacted/plain: ${((100 * after.ms) / plain.ms).toFixed(2)} %; floor/plain: ${((100 * floor.ms) / plain.ms).toFixed(2)} %`,
)
await twain.close()
