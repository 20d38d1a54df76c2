// Fault-test consumer-group member: node --import tsx fault-member.ts <dir> <topic> <group>
// Consumes with commitIntervalMs 50 and acks every message. Prints `# started <pid>`, then per
// message `<id> <partition> <offset>` (before acking it, with a blocking write: a line is in the
// pipe before the ack, and a SIGKILL never cuts one), `# assigned|revoked <partitions>`,
// `# commit <p>=<offset>,…`, and `# error <code> <name>: <message>` for 'error' events.
// SIGTERM: close (commit, leave), print `# closed`, exit 0.
import { open } from '../../../src/index.js'
import { lineNow as out } from './sync-out.js'
import { until } from '../wait.js'

const [dir, topic, group] = process.argv.slice(2) as [string, string, string]
const idOf = (v: unknown) => (typeof v === 'string' ? v.split(' ')[0] : JSON.stringify(v))

// Registered first: a SIGTERM that arrives while opening still closes cleanly.
let closing: Promise<void> | undefined
let ready: (() => Promise<void>) | undefined
process.on('SIGTERM', () => {
  closing ??= (async () => {
    await until(() => ready !== undefined, 60_000, 'the member to open')
    await ready?.()
    out('# closed')
    process.exit(0)
  })()
})

const twain = await open(dir, { pollMs: 50 })
const consumer = twain.consumer<string>(topic, { group, commitIntervalMs: 50 })
consumer.on('assigned', (x) => out(`# assigned ${x.map((t) => t.partition).join(',')}`))
consumer.on('revoked', (x) => out(`# revoked ${x.map((t) => t.partition).join(',')}`))
consumer.on('commit', (x) => out(`# commit ${x.map((t) => `${t.partition}=${t.offset}`).join(',')}`))
consumer.on('error', (e) =>
  out(`# error ${(e as { code?: string }).code ?? 'none'} ${e.name}: ${e.message.replace(/\n/g, ' ')}`),
)
ready = async () => {
  await consumer.close()
  await twain.close()
}
out(`# started ${process.pid}`)

try {
  for await (const m of consumer) {
    out(`${idOf(m.value)} ${m.partition} ${m.offset}`)
    m.ack()
  }
} catch (e) {
  out(`# error ${(e as { code?: string }).code ?? 'none'} ${(e as Error).name}: ${(e as Error).message}`)
}
