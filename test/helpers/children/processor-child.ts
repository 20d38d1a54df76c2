// Processor-chaos child: node --import tsx processor-child.ts <target> [open options as JSON]
// A member of group 'enrich' (a processor of topic 'in', from the start) that maps input `<id>` to
// the outputs of processor-checker.ts's `outputsOf(id)`: none when id % 3 == 0, one to 'out-a' when
// id % 3 == 1, three when id % 3 == 2 (two to 'out-a', one to 'out-b'), each with key `o<id>-<j>`
// and value `<id>.<j>`. One input in 7 awaits its sends; the others' are not awaited (their
// failures are left to `ack()`, which then delivers the message again). Every message is acked.
// Prints (blocking writes: sync-out.ts) `# started <pid>`, `# assigned|revoked <partitions>`,
// `# working` after its first message, `# duplicate <value>` for an output found stored (an
// earlier delivery's), `# error …` for failures; SIGTERM: close, `# closed <n>`, exit 0.
import { open, type FileOpenOptions, type OutputMetadata } from '../../../src/index.js'
import { outputsOf } from '../processor-checker.js'
import { until } from '../wait.js'
import { lineNow as out } from './sync-out.js'

const [target, optionsJson] = process.argv.slice(2) as [string, string | undefined]
const openOptions = (optionsJson ? JSON.parse(optionsJson) : {}) as FileOpenOptions

const describe = (e: unknown): string =>
  `${(e as { code?: string }).code ?? 'none'} ${(e as Error).name}: ${String((e as Error).message).replace(/\n/g, ' ')}`

let closing: Promise<void> | undefined
let ready: (() => Promise<void>) | undefined
let handled = 0
process.on('SIGTERM', () => {
  closing ??= (async () => {
    await until(() => ready !== undefined, 60_000, 'the processor to open')
    await ready?.()
    out(`# closed ${handled}`)
    process.exit(0)
  })()
})

const twain = await open(target, openOptions)
const proc = twain.processor<string>('in', {
  group: 'enrich',
  from: 'start',
  sessionTimeoutMs: 1500,
  heartbeatIntervalMs: 250,
  commitIntervalMs: 50,
})
proc.on('assigned', (x) => out(`# assigned ${x.map((t) => t.partition).join(',')}`))
proc.on('revoked', (x) => out(`# revoked ${x.map((t) => t.partition).join(',')}`))
proc.on('error', (e) => out(`# error ${describe(e)}`))
ready = async () => {
  await proc.close()
  await twain.close()
}
out(`# started ${process.pid}`)

const quiet = (): undefined => undefined
/** An output an earlier delivery stored (found by the store, not written again). */
const noteDuplicate = (r: OutputMetadata, value: string): void => {
  if (r.duplicate) out(`# duplicate ${value}`)
}
try {
  for await (const m of proc) {
    const id = Number(m.value)
    const awaited = id % 7 === 0
    try {
      for (const o of outputsOf(id)) {
        const sent = m.send(o.topic, o.key, o.value)
        if (awaited) noteDuplicate(await sent, o.value)
        else sent.then((r) => noteDuplicate(r, o.value), quiet)
      }
    } catch (e) {
      out(`# error send ${describe(e)}`)
    }
    m.ack()
    if (handled++ === 0) out('# working')
  }
} catch (e) {
  out(`# error loop ${describe(e)}`)
}
