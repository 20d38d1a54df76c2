// A/B of file time seeks between two source trees (issue 15): writes N (env N, default 1,000,000)
// 100-byte values in sendBatch calls of 1,000 to one partition, then times 20 seeks to random times
// within the log (offsetForTime through the backend) and prints the median in ms.
// usage: npx tsx bench/ab-time-seek.mts <tree>   (alternate trees in fresh processes)
const [tree] = process.argv.slice(2) as [string]
const { open } = await import(`${tree}/src/index.ts`)
const { FileBackend } = await import(`${tree}/src/backends/file/file-backend.ts`)
const { mkdtempSync, rmSync } = await import('node:fs')
const dir = mkdtempSync('/tmp/ab-time-')
const twain = await open(dir)
await twain.createTopic('t', { partitions: 1, keyType: 'u32' })
const p = twain.producer('t')
const N = Number(process.env.N ?? 1_000_000)
const v = 'x'.repeat(100)
const first = Date.now()
for (let i = 0; i < N; i += 1000) await p.sendBatch(Array.from({ length: 1000 }, (_, j) => ({ key: i + j, value: v })))
await p.flush()
const last = Date.now()
await twain.close()
const b = new FileBackend(dir, {})
await b.init()
const ms: number[] = []
let seed = 7
const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31)
for (let i = 0; i < 20; i++) {
  const time = first + Math.floor(rnd() * (last - first))
  const t0 = performance.now()
  await b.offsetForTime('t', 0, time)
  ms.push(performance.now() - t0)
}
await b.close()
ms.sort((a, c) => a - c)
console.log(JSON.stringify({ tree: tree.split('/').pop(), n: N, medianMs: +(ms[10] as number).toFixed(2), maxMs: +(ms[19] as number).toFixed(2) }))
rmSync(dir, { recursive: true })
