// A/B of history throughput between two source trees (issue 11 regression check): writes 300,000
// 100-byte values (P partitions, env P, default 1), then times five full histories.
// usage: P=6 npx tsx bench/ab-history.mts <tree> <redis-url|dir>   (run in <tree>, alternate trees)
const [tree, target] = process.argv.slice(2) as [string, string]
const { open } = await import(`${tree}/src/index.ts`)
const twain = await open(target, target.startsWith('redis') ? { prefix: `h${Date.now()}:` } : {})
await twain.createTopic('t', { partitions: Number(process.env.P ?? 1), keyType: 'u32' })
const p = twain.producer('t')
const N = 300_000
const v = 'x'.repeat(100)
for (let i = 0; i < N; i += 1000) await p.sendBatch(Array.from({ length: 1000 }, (_, j) => ({ key: i + j, value: v })))
await p.flush()
const rates: number[] = []
for (let r = 0; r < 5; r++) {
  const t0 = performance.now()
  let n = 0
  for await (const _ of twain.history('t')) n++
  rates.push(Math.round(n / ((performance.now() - t0) / 1000)))
}
console.log(tree.split('/').pop(), rates.join(' '))
await twain.close()
