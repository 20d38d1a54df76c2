// Join-chaos child: node --import tsx join-child.ts <target> <open options as JSON>
// The join `joinStreams({ left: 'orders', right: 'payments', group: 'pay', withinMs: 1000,
// latenessMs: 500 })` (README "Stream–stream joins"), from the start, with short sessions: each
// pair `<order id>+<payment id>` goes to 'paid', late records to 'late'. Prints (blocking writes)
// `# started <pid>`, `# working` after its first pair, `# error …` for failures; SIGTERM: close,
// `# closed`, exit 0.
import { joinStreams, open, type FileOpenOptions } from '../../../src/index.js'
import { until } from '../wait.js'
import { describeError as describe } from './stateful-processor.js'
import { lineNow as out } from './sync-out.js'

const [target, optionsJson] = process.argv.slice(2) as [string, string | undefined]
const twain = await open(target, (optionsJson ? JSON.parse(optionsJson) : {}) as FileOpenOptions)
const stop = new AbortController()
let loop: Promise<void> | undefined
process.on('SIGTERM', () => {
  stop.abort()
  void (async () => {
    await until(() => loop !== undefined, 60_000, 'the join to start')
    await loop
    await twain.close()
    out('# closed')
    process.exit(0)
  })()
})
out(`# started ${process.pid}`)

let paired = 0
const pairs = joinStreams<string, string, string, string>(twain, {
  left: 'orders',
  right: 'payments',
  group: 'pay',
  withinMs: 1000,
  latenessMs: 500,
  to: 'paid',
  lateTo: 'late',
  join: (order, payment) => {
    if (paired++ === 0) out('# working')
    return `${order}+${payment}`
  },
  processors: {
    from: 'start',
    sessionTimeoutMs: 1500,
    heartbeatIntervalMs: 250,
    commitIntervalMs: 50,
    signal: stop.signal, // SIGTERM closes both processors: the stream ends
  },
})
loop = (async () => {
  try {
    for await (const _ of pairs) {
      // The pairs are in 'paid': the test reads them there.
    }
  } catch (e) {
    if (!stop.signal.aborted) out(`# error loop ${describe(e)}`)
  }
})()
