// Server CPU of two trees' `read` and `shared-read` scripts, same run, on a private redis-server
// (test/helpers/redis-server.ts): 100,000 entries of a 110-byte record in twainmq's field order, then
// 5 rounds (env R) alternating the trees of: `read` over every entry in calls of 1024, and
// `shared-read` over every entry of a fresh group in calls of 500, plus a bare XREADGROUP in Lua
// (returning only the count: the floor of any packing). Prints µs of server CPU (`INFO cpu`) per
// entry, per round, and whether both trees' `read` replies are the same bytes.
// usage: npx tsx bench/ab-redis-lua.mts <old tree> <new tree>
const [a, b] = process.argv.slice(2) as [string, string]
const { RedisServer } = await import('../test/helpers/redis-server.js')
const { Redis } = await import('ioredis')
const { readFileSync } = await import('node:fs')
const server = await RedisServer.start()
const r = new Redis(server.url, { protocol: 2 })
const N = 100_000
const rec = Buffer.alloc(110, 120)
for (let i = 0; i < N; i += 1000) {
  const pl = r.pipeline()
  for (let j = 0; j < 1000; j++) pl.xadd('s', `${i + j}-1`, 'r', rec, 'p', 'producer-1')
  await pl.exec()
}
const script = (tree: string, name: string): string =>
  readFileSync(`${tree}/src/backends/redis/scripts/${name}.lua`, 'utf8').replace(
    '-- #include entry.lua',
    readFileSync(`${tree}/src/backends/redis/scripts/entry.lua`, 'utf8'),
  )
const bare = `local res = redis.call('XREADGROUP', 'GROUP', ARGV[1], ARGV[2], 'COUNT', ARGV[3], 'STREAMS', KEYS[1], '>')\nreturn #res[1][2]`
const cpu = async (): Promise<number> => {
  const i = await r.info('cpu')
  return (Number(/used_cpu_user:([\d.]+)/.exec(i)?.[1]) + Number(/used_cpu_sys:([\d.]+)/.exec(i)?.[1])) * 1e6
}
const same =
  Buffer.compare(
    (await r.callBuffer('EVAL', script(a, 'read-1'), 1, 's', 5, 1024, '0')) as Buffer,
    (await r.callBuffer('EVAL', script(b, 'read-1'), 1, 's', 5, 1024, '0')) as Buffer,
  ) === 0
const out: Record<string, number[]> = {}
let g = 0
const perEntry = async (name: string, f: () => Promise<void>): Promise<void> => {
  const c0 = await cpu()
  await f()
  ;(out[name] ??= []).push(+(((await cpu()) - c0) / N).toFixed(2))
}
for (let round = 0; round < Number(process.env.R ?? 5); round++) {
  for (const [label, tree] of [
    ['old', a],
    ['new', b],
  ] as const) {
    const read = script(tree, 'read-1')
    await perEntry(`read ${label}`, async () => {
      for (let o = 0; o < N; o += 1024) await r.callBuffer('EVAL', read, 1, 's', o, 1024, '0')
    })
  }
  for (const [label, src] of [
    ['old', script(a, 'shared-read-1')],
    ['new', script(b, 'shared-read-1')],
    ['bare XREADGROUP', bare],
  ] as const) {
    const group = `g${g++}`
    await r.xgroup('CREATE', 's', group, '0')
    await perEntry(`shared-read ${label}`, async () => {
      for (let o = 0; o < N; o += 500) await r.callBuffer('EVAL', src, 1, 's', group, 'm', 500)
    })
    await r.xgroup('DESTROY', 's', group)
  }
}
const med = (v: number[]): number => [...v].sort((x, y) => x - y)[v.length >> 1] as number
console.log(
  JSON.stringify({
    sameReadReply: same,
    medians: Object.fromEntries(Object.entries(out).map(([k, v]) => [k, med(v)])),
    rounds: out,
  }),
)
r.disconnect()
await server.stop()
