// A/B of the file send and read paths of two trees: `npx tsx bench/ab-file.mts <repo root>` prints one JSON line
// ({ send, read } msgs/s: 500 sendBatch calls of 1,000 100-byte values to one partition, then a history).
// Alternate it between two checkouts in fresh processes and compare medians.
const root = process.argv[2]
const { open } = await import(`${root}/src/index.ts`)
const { mkdtempSync, rmSync } = await import('node:fs')
const dir = mkdtempSync('/tmp/ab-')
const t = await open(dir)
await t.createTopic('t', { partitions: 1 })
const p = t.producer('t')
const v = 'x'.repeat(100)
const items = Array.from({ length: 1000 }, (_, i) => ({ key: i % 65536, value: v }))
const t0 = performance.now()
for (let i = 0; i < 500; i++) await p.sendBatch(items)
const w = performance.now() - t0
const t1 = performance.now()
let n = 0
for await (const _ of t.history('t')) n++
const r = performance.now() - t1
console.log(JSON.stringify({ send: Math.round((500000 / w) * 1000), read: Math.round((n / r) * 1000) }))
await t.close()
rmSync(dir, { recursive: true })
