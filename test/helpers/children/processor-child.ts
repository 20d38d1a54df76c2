// Processor-chaos child: node --import tsx processor-child.ts <target> [open options as JSON] [each|rx]
// A member of group 'enrich' (a processor of topic 'in', from the start) that maps input `<id>` to
// the outputs of processor-checker.ts's `outputsOf(id)`: none when id % 3 == 0, one to 'out-a' when
// id % 3 == 1, three when id % 3 == 2 (two to 'out-a', one to 'out-b'), each with key `o<id>-<j>`
// and value `<id>.<j>`. One input in 7 awaits its sends; the others' are not awaited (their
// failures are left to `ack()`, which then delivers the message again), and one in 7 leaves its
// sends' promises alone altogether (no handler: a failure must not end the process). Every message is acked:
// `each` (the default) in a `for await` loop, one at a time; `rx` through RxJS,
// `from(proc).pipe(batchRx(…), concatMap(…))`, each batch acked whole (`b.ack()`) once its
// messages' outputs are sent.
// Prints (blocking writes: sync-out.ts) `# started <pid>`, `# assigned|revoked <partitions>`,
// `# working` after its first message, `# duplicate <value>` for an output found stored (an
// earlier delivery's), `# error …` for failures; SIGTERM: close, `# closed <n>`, exit 0.
import { concatMap, from } from 'rxjs'
import { open, type FileOpenOptions, type OutputMetadata, type ProcessorMessage } from '../../../src/index.js'
import { batchRx } from '../../../src/operators/rx/index.js'
import { outputsOf } from '../processor-checker.js'
import { until } from '../wait.js'
import { lineNow as out } from './sync-out.js'

const [target, optionsJson, idiom = 'each'] = process.argv.slice(2) as [string, string | undefined, string?]
if (idiom !== 'each' && idiom !== 'rx') throw new Error(`idiom must be each or rx, got ${idiom}`)
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
/**
 * Send input `m`'s outputs (one input in 7 awaits them, one in 7 leaves their promises alone, as
 * `m.send(…); m.ack()` does); a failure is left to `ack()`.
 */
async function sendOutputs(m: ProcessorMessage<string>): Promise<void> {
  const id = Number(m.value)
  const awaited = id % 7 === 0
  const alone = id % 7 === 3
  try {
    for (const o of outputsOf(id)) {
      const sent = m.send(o.topic, o.key, o.value)
      if (awaited) noteDuplicate(await sent, o.value)
      else if (!alone) sent.then((r) => noteDuplicate(r, o.value), quiet)
    }
  } catch (e) {
    out(`# error send ${describe(e)}`)
  }
}

/** `k` more messages acked (`# working` after the first). */
const acked = (k: number): void => {
  if (handled === 0 && k > 0) out('# working')
  handled += k
}

if (idiom === 'each') {
  try {
    for await (const m of proc) {
      await sendOutputs(m)
      m.ack()
      acked(1)
    }
  } catch (e) {
    out(`# error loop ${describe(e)}`)
  }
} else {
  from(proc)
    .pipe(
      batchRx<ProcessorMessage<string>>({ size: 50, maxWaitMs: 20 }),
      concatMap(async (b) => {
        for (const m of b) await sendOutputs(m)
        b.ack()
        acked(b.length)
      }),
    )
    .subscribe({ error: (e: unknown) => out(`# error loop ${describe(e)}`) })
}
