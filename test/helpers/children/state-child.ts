// State-chaos child: node --import tsx state-child.ts <target> [open options as JSON]
// A member of group 'count' (a processor of topic 'in' with the state store 'counts', from the
// start): per input, the key's count in the store goes up by one, and the output `<id>:<count>`
// goes to topic 'out' under the input's key; every message is acked. Prints (blocking writes)
// `# started <pid>`, `# working` after its first message, `# error …` for failures; SIGTERM:
// close, `# closed`, exit 0.
import { open, type FileOpenOptions } from '../../../src/index.js'
import { until } from '../wait.js'
import { lineNow as out } from './sync-out.js'

const [target, optionsJson] = process.argv.slice(2) as [string, string | undefined]
const openOptions = (optionsJson ? JSON.parse(optionsJson) : {}) as FileOpenOptions

const describe = (e: unknown): string =>
  `${(e as { code?: string }).code ?? 'none'} ${(e as Error).name}: ${String((e as Error).message).replace(/\n/g, ' ')}`

let ready: (() => Promise<void>) | undefined
let closing: Promise<void> | undefined
process.on('SIGTERM', () => {
  closing ??= (async () => {
    await until(() => ready !== undefined, 60_000, 'the processor to open')
    await ready?.()
    out('# closed')
    process.exit(0)
  })()
})

const twain = await open(target, openOptions)
const proc = twain.processor<string, string>('in', {
  group: 'count',
  state: 'counts',
  from: 'start',
  sessionTimeoutMs: 1500,
  heartbeatIntervalMs: 250,
  commitIntervalMs: 50,
})
proc.on('error', (e) => out(`# error ${describe(e)}`))
ready = async () => {
  await proc.close()
  await twain.close()
}
out(`# started ${process.pid}`)

let handled = 0
try {
  for await (const m of proc) {
    const count = (m.state.get<number>(m.key) ?? 0) + 1
    m.state.set(m.key, count)
    m.send('out', m.key, `${m.value}:${count}`).catch(() => undefined) // a failure is ack()'s business
    m.ack()
    if (handled++ === 0) out('# working')
  }
} catch (e) {
  out(`# error loop ${describe(e)}`)
}
