// A/B of file time seeks between two source trees (issue 15): writes N (env N, default 1,000,000)
// 100-byte values in sendBatch calls of 1,000 to one partition, then times 20 seeks to random times
// within the log (offsetForTime through the backend, after a `sync`; env SEEKS for more) and prints
// the median and max wall ms and the median CPU ms per seek.
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
// Let the kernel write the log back first: at 10M (1.2 GB) the writeback of what was just written
// otherwise runs through the seeks and swamps them (5-9 ms on either tree, against ~1 ms after it).
const { execSync } = await import('node:child_process')
execSync('sync')
const b = new FileBackend(dir, {})
await b.init()
const SEEKS = Number(process.env.SEEKS ?? 20)
const ms: number[] = []
const cpu: number[] = [] // user + system CPU of this process per seek: less noisy than wall time on a shared machine
let seed = 7
const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31)
for (let i = 0; i < SEEKS; i++) {
  const time = first + Math.floor(rnd() * (last - first))
  const c0 = process.cpuUsage()
  const t0 = performance.now()
  await b.offsetForTime('t', 0, time)
  ms.push(performance.now() - t0)
  const c = process.cpuUsage(c0)
  cpu.push((c.user + c.system) / 1000)
}
await b.close()
const median = (xs: number[]) => +([...xs].sort((a, c) => a - c)[xs.length >> 1] as number).toFixed(2)
console.log(JSON.stringify({ tree: tree.split('/').pop(), n: N, medianMs: median(ms), maxMs: +Math.max(...ms).toFixed(2), cpuMs: median(cpu) }))
rmSync(dir, { recursive: true })
