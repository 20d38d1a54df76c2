// A/B of file partitioned-group consume+ack against history between two source trees (issue 15):
// writes 300,000 100-byte values in sendBatch calls of 1,000 (P partitions, env P, default 1), then
// alternates a history read and a fresh group's consume+ack (ack each, one member), R rounds (env R, default 3).
// Also prints CPU time per phase (`cpuRatio`: history CPU over group CPU, median of the rounds' ratios), which other
// processes on a shared machine disturb less than wall time.
// usage: npx tsx bench/ab-group.mts <tree>   (run it alternately for two trees, fresh processes, compare medians)
const [tree] = process.argv.slice(2) as [string]
const { open } = await import(`${tree}/src/index.ts`)
const { mkdtempSync, rmSync } = await import('node:fs')
const dir = mkdtempSync('/tmp/ab-group-')
const twain = await open(dir)
await twain.createTopic('t', { partitions: Number(process.env.P ?? 1), keyType: 'u32' })
const p = twain.producer('t')
const N = 300_000
const v = 'x'.repeat(100)
for (let i = 0; i < N; i += 1000) await p.sendBatch(Array.from({ length: 1000 }, (_, j) => ({ key: i + j, value: v })))
await p.flush()
const hist: number[] = []
const group: number[] = []
const cpuRatios: number[] = []
const cpu = () => {
  const u = process.cpuUsage()
  return u.user + u.system
}
for (let r = 0; r < Number(process.env.R ?? 3); r++) {
  let t0 = performance.now()
  let c0 = cpu()
  let n = 0
  for await (const _ of twain.history('t')) n++
  hist.push(Math.round(n / ((performance.now() - t0) / 1000)))
  const histCpu = cpu() - c0
  const c = twain.consumer('t', { group: `g${r}` })
  n = 0
  t0 = 0
  for await (const m of c) {
    if (n === 0) {
      t0 = performance.now()
      c0 = cpu()
    }
    m.ack()
    if (++n >= N) break
  }
  await c.commit()
  group.push(Math.round(n / ((performance.now() - t0) / 1000)))
  cpuRatios.push(histCpu / (cpu() - c0))
  await c.close()
}
const med = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1] as number
console.log(
  JSON.stringify({
    tree: tree.split('/').pop(),
    history: med(hist),
    group: med(group),
    ratio: +(med(group) / med(hist)).toFixed(2),
    cpuRatio: +med(cpuRatios).toFixed(2),
    hist,
    groups: group,
  }),
)
await twain.close()
rmSync(dir, { recursive: true })
