// State-chaos child: node --import tsx state-child.ts <target> [open options as JSON]
// A member of group 'count' (a processor of topic 'in' with the state store 'counts', from the
// start): per input, the key's count in the store goes up by one, and the output `<id>:<count>`
// goes to topic 'out' under the input's key; every message is acked. Prints (blocking writes)
// `# started <pid>`, `# working` after its first message, `# error …` for failures; SIGTERM:
// close, `# closed`, exit 0.
import { lineNow as out } from './sync-out.js'
import { describeError as describe, statefulProcessor } from './stateful-processor.js'

const { proc } = await statefulProcessor('in', 'count', 'counts')

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
