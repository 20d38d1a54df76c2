// A/B of Redis history vs partitioned and shared group consume+ack between two source trees (issue 15):
// starts a private redis-server (test/helpers/redis-server.ts), writes N 100-byte values (env N,
// default 100,000) in sendBatch calls of 1,000 to a topic of P partitions (env P, default 1), then
// R rounds (env R, default 3) of: a history read, a fresh partitioned group's consume+ack, a fresh
// shared group's consume+ack (ack each, one member, default options). Besides msgs/s it reports
// the CPU time per message of this process and of the server (`INFO cpu`) per phase, which the
// machine's load disturbs less than wall time. With env STATS=1 it also prints the server's
// `INFO commandstats` per phase (calls and µs per call). Env PHASES (e.g. `shared`) limits the phases run.
// usage: npx tsx bench/ab-redis-group.mts <tree>   (run it alternately for two trees, fresh processes, compare medians)
const [tree] = process.argv.slice(2) as [string]
const { open } = await import(`${tree}/src/index.ts`)
const { RedisServer } = await import('../test/helpers/redis-server.js')
const { Redis } = await import('ioredis')
const server = await RedisServer.start()
const admin = new Redis(server.url, { protocol: 2 })
const stats = process.env.STATS === '1'
const phaseStats = async (label: string): Promise<void> => {
  if (!stats) return
  const info = await admin.info('commandstats')
  const rows = [...info.matchAll(/cmdstat_(\w+):calls=(\d+),usec=(\d+),usec_per_call=([\d.]+)/g)]
    .filter((m) => Number(m[2]) > 10)
    .map((m) => `${m[1]} ${m[2]}×${Math.round(Number(m[4]))}µs=${Math.round(Number(m[3]) / 1000)}ms`)
  console.error(`  ${label}: ${rows.join(', ')}`)
  await admin.config('RESETSTAT')
}
const twain = await open(server.url, { prefix: 'ab:' })
await twain.createTopic('t', { partitions: Number(process.env.P ?? 1), keyType: 'u32' })
const p = twain.producer('t')
const N = Number(process.env.N ?? 100_000)
const v = 'x'.repeat(100)
for (let i = 0; i < N; i += 1000) await p.sendBatch(Array.from({ length: 1000 }, (_, j) => ({ key: i + j, value: v })))
await p.flush()
await phaseStats('produce')
const serverCpu = async (): Promise<number> => {
  const info = await admin.info('cpu')
  return (Number(/used_cpu_user:([\d.]+)/.exec(info)?.[1]) + Number(/used_cpu_sys:([\d.]+)/.exec(info)?.[1])) * 1e6
}
const cpu: Record<string, { client: number[]; server: number[] }> = {
  history: { client: [], server: [] },
  partitioned: { client: [], server: [] },
  shared: { client: [], server: [] },
}
async function measured<T>(phase: string, f: () => Promise<T>): Promise<T> {
  const c0 = process.cpuUsage()
  const s0 = await serverCpu()
  const out = await f()
  const c = process.cpuUsage(c0)
  const rec = cpu[phase] as { client: number[]; server: number[] }
  rec.client.push(+((c.user + c.system) / N).toFixed(2))
  rec.server.push(+(((await serverCpu()) - s0) / N).toFixed(2))
  return out
}
const rate = (n: number, t0: number): number => Math.round(n / ((performance.now() - t0) / 1000))
async function consume(group: string, mode: 'partitioned' | 'shared'): Promise<number> {
  const c = twain.consumer('t', { group, mode, name: `${group}-1` })
  let n = 0
  let t0 = 0
  for await (const m of c) {
    if (n === 0) t0 = performance.now()
    m.ack()
    if (++n >= N) break
  }
  await c.commit()
  const r = rate(n, t0)
  await c.close()
  return r
}
const hist: number[] = []
const part: number[] = []
const shared: number[] = []
const phases = new Set((process.env.PHASES ?? 'history,partitioned,shared').split(','))
for (let r = 0; r < Number(process.env.R ?? 3); r++) {
  if (phases.has('history'))
    hist.push(
      await measured('history', async () => {
        const t0 = performance.now()
        let n = 0
        for await (const _ of twain.history('t')) n++
        return rate(n, t0)
      }),
    )
  await phaseStats('history')
  if (phases.has('partitioned')) part.push(await measured('partitioned', () => consume(`p${r}`, 'partitioned')))
  await phaseStats('partitioned')
  if (phases.has('shared')) shared.push(await measured('shared', () => consume(`s${r}`, 'shared')))
  await phaseStats('shared')
}
const med = (a: number[]) => ([...a].sort((x, y) => x - y)[a.length >> 1] ?? 0) as number
console.log(
  JSON.stringify({
    tree: tree.split('/').pop(),
    history: med(hist),
    partitioned: med(part),
    shared: med(shared),
    partOverHist: +(med(part) / med(hist)).toFixed(2),
    hist,
    part,
    sharedAll: shared,
    cpuUsPerMsg: Object.fromEntries(
      Object.entries(cpu).map(([k, v]) => [k, { client: med(v.client), server: med(v.server) }]),
    ),
  }),
)
await twain.close()
admin.disconnect()
await server.stop()
