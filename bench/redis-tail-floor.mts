// The Redis tail against its floor in the same run, round after round:
//   npx tsx bench/redis-tail-floor.mts [messages per round] [rounds]
// Each round runs the raw ioredis tail of `npm run bench -- floors` (a child's plain XADD, read with
// XREAD BLOCK; bench/lib/floor-tail.ts) and then twain.tail() against a child's producer.send
// (bench/lib/tail.ts), on one private redis-server, and prints both p50s and their ratio (issue 24's
// goal: twainmq ≤ 1.5× the raw tail). One message every ~3 ms, 10 warm-up messages not counted.
import { rawRedisTail } from './lib/floor-tail.js'
import { tailTwain } from './lib/tail.js'
import { RedisServer } from '../test/helpers/redis-server.js'

const n = Number(process.argv[2] ?? 500)
const rounds = Number(process.argv[3] ?? 3)
if (!Number.isSafeInteger(n) || n < 20 || !Number.isSafeInteger(rounds) || rounds < 1)
  throw new Error(
    `usage: npx tsx bench/redis-tail-floor.mts [messages ≥ 20] [rounds ≥ 1], got ${process.argv.slice(2).join(' ')}`,
  )
const server = await RedisServer.start()
try {
  for (let r = 1; r <= rounds; r++) {
    const raw = (await rawRedisTail(server.url, `floor{${r}}`, n)).summary
    const ours = (await tailTwain(n, server.url, 'twain.tail()')).summary
    process.stdout.write(
      `round ${r}: raw XADD → XREAD BLOCK p50 ${raw.p50.toFixed(3)} ms p99 ${raw.p99.toFixed(3)} | twain.tail() p50 ${ours.p50.toFixed(3)} ms p99 ${ours.p99.toFixed(3)} max ${ours.max.toFixed(2)} | p50 ratio ${(ours.p50 / raw.p50).toFixed(2)}×\n`,
    )
  }
} finally {
  await server.destroy()
}
