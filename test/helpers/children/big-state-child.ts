// Big-state child: node --import tsx big-state-child.ts <target> [open options as JSON]
// A member of group 'big' (a processor of topic 'fill' with the state store 'big', from the start).
// Message i (its value) sets keys i*1000 .. i*1000+999 to 0 .. 999, the most keys a message may
// write; a message of value -1 checks the state instead and prints `# state <size> <sum of values>`.
// Prints (blocking writes) `# started <pid>`; `# restored <ms> <size> <offset>` at its first
// message: the time from creating the processor to that message (the state's restore), the state's
// size then and the message's offset; `# working` after its first message; `# error …`.
// SIGTERM: close, `# closed`, exit 0.
import { lineNow as out } from './sync-out.js'
import { describeError as describe, statefulProcessor } from './stateful-processor.js'

const t0 = performance.now()
// The product's default session: a restore of 1,000,000 keys and 1,000 writes per message keep a
// loaded machine's process busy for seconds, past a storm's 1.5 s session (it was fenced again and
// again, restoring each time).
const { proc } = await statefulProcessor('fill', 'big', 'big', { sessionTimeoutMs: 10_000, heartbeatIntervalMs: 1000 })

let first = true
try {
  for await (const m of proc) {
    const i = Number(m.value)
    if (first) {
      out(`# restored ${Math.round(performance.now() - t0)} ${m.state.size} ${m.offset}`)
      out('# working')
      first = false
    }
    if (i < 0) {
      let size = 0
      let sum = 0
      for (const [, v] of m.state.entries<number>()) {
        size++
        sum += v
      }
      out(`# state ${size} ${sum}`)
    } else for (let k = 0; k < 1000; k++) m.state.set(i * 1000 + k, k)
    m.ack()
    // A loop this busy lets timers run (heartbeats, commits): buffered messages come on microtasks.
    await new Promise((r) => setImmediate(r))
  }
} catch (e) {
  out(`# error loop ${describe(e)}`)
}
