// Window-chaos child: node --import tsx window-child.ts <target> [open options as JSON]
// A member of group 'win' (a processor of topic 'clicks' with the state store 'w', from the start)
// that counts each user's clicks in 10-second tumbling windows of event time (the message's
// timestamp), with 1 s of lateness; results go to 'counts', late clicks to 'late'. Prints
// (blocking writes) `# started <pid>`, `# working` after its first click counted, `# error …` for
// failures; SIGTERM: close, `# closed`, exit 0.
import { tumbling, windowed } from '../../../src/index.js'
import { lineNow as out } from './sync-out.js'
import { describeError as describe, statefulProcessor } from './stateful-processor.js'

const { proc } = await statefulProcessor('clicks', 'win', 'w')

let added = 0
try {
  for await (const _ of windowed(proc, {
    window: tumbling(10_000),
    latenessMs: 1000,
    to: 'counts',
    lateTo: 'late',
    initial: () => 0,
    add: (n) => {
      if (added++ === 0) out('# working')
      return n + 1
    },
  })) {
    // The results are in 'counts': the test reads them there.
  }
} catch (e) {
  out(`# error loop ${describe(e)}`)
}
