// A/B of the Promise.all(send) path of two trees: `npx tsx bench/ab-send.mts <repo root> [messages] [reps]`
// prints one JSON line ({ all, plain, ratio }: msgs/s over all reps, and their ratio): `reps` (default 10)
// times, `messages` (default 100,000) `producer.send` calls of 100-byte values to a fresh 1-partition file
// topic in windows of 1000 (`await Promise.all`, as bench/lib/phases.ts produceAll), then the plain-Node
// framed log (bench/baselines/plain-log.ts) writing as many records, in the same process (a 20,000-message
// warm-up of each first); cpuRatio is the same ratio of the main thread's on-CPU time (Linux, /proc/thread-self/schedstat: less disturbed by other load than wall time). The two alternate in short runs so that both see the same machine load.
// Alternate it between two checkouts in fresh processes and compare the median ratios.
const root = process.argv[2]
const n = Number(process.argv[3] ?? 100_000)
const reps = Number(process.argv[4] ?? 10)
const { open } = await import(`${root}/src/index.ts`)
const { plainWrite } = await import(`${root}/bench/baselines/plain-log.ts`)
const { mkdtempSync, rmSync } = await import('node:fs')
const { join } = await import('node:path')
const dir = mkdtempSync('/tmp/ab-send-')
const t = await open(dir)
const v = 'x'.repeat(100)
const sends = new Array<Promise<unknown>>(1000)
/** Milliseconds to send `count` messages to a new topic. */
async function sendAll(topic: string, count: number): Promise<number> {
  await t.createTopic(topic)
  const p = t.producer(topic)
  const t0 = performance.now()
  for (let i = 0; i < count; i += 1000) {
    for (let j = 0; j < 1000; j++) sends[j] = p.send((i + j) % 65536, v)
    await Promise.all(sends)
  }
  const ms = performance.now() - t0
  await p.close()
  return ms
}
/** Milliseconds to write `count` records with the plain log. */
function plain(count: number): number {
  const t0 = performance.now()
  plainWrite(join(dir, 'plain.log'), count, 2, (i: number) => i % 65536, v)
  return performance.now() - t0
}
await sendAll('warm', 20_000)
plain(20_000)
let allMs = 0
let plainMs = 0
let allCpu = 0
let plainCpu = 0
const { readFileSync } = await import('node:fs')
// On-CPU time of this (the main) thread in ms, from /proc/thread-self/schedstat (Linux): GC helper threads are not counted.
const cpu = () => Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1e6
for (let r = 0; r < reps; r++) {
  let c = cpu()
  allMs += await sendAll(`send${r}`, n)
  allCpu += cpu() - c
  c = cpu()
  plainMs += plain(n)
  plainCpu += cpu() - c
}
await t.close()
const all = (n * reps) / allMs
const pl = (n * reps) / plainMs
console.log(
  JSON.stringify({
    all: Math.round(all * 1000),
    plain: Math.round(pl * 1000),
    ratio: Math.round((plainMs / allMs) * 1000) / 1000,
    cpuRatio: Math.round((plainCpu / allCpu) * 1000) / 1000,
  }),
)
rmSync(dir, { recursive: true })
