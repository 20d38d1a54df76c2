// What the stateful fault-test children share (state-child.ts, window-child.ts): the store from
// argv (`<target> [open options as JSON]`), a processor of `topic` in `group` with the state store
// `state`, from the start, a short session unless told otherwise; errors printed as `# error …`; `# started <pid>` once
// open; SIGTERM closes it, prints `# closed` and exits 0. Output lines are blocking writes.
import { open, type FileOpenOptions, type Processor, type Twain } from '../../../src/index.js'
import { until } from '../wait.js'
import { lineNow as out } from './sync-out.js'

/** `<code> <name>: <message>` on one line. */
export const describeError = (e: unknown): string =>
  `${(e as { code?: string }).code ?? 'none'} ${(e as Error).name}: ${String((e as Error).message).replace(/\n/g, ' ')}`

export async function statefulProcessor(
  topic: string,
  group: string,
  state: string,
  /** The member's session (default 1500 ms, heartbeats every 250 ms: a storm's quick failovers). */
  session: { sessionTimeoutMs: number; heartbeatIntervalMs: number } = {
    sessionTimeoutMs: 1500,
    heartbeatIntervalMs: 250,
  },
): Promise<{ twain: Twain; proc: Processor<string, string> }> {
  const [target, optionsJson] = process.argv.slice(2) as [string, string | undefined]
  const openOptions = (optionsJson ? JSON.parse(optionsJson) : {}) as FileOpenOptions
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
  const proc = twain.processor<string, string>(topic, {
    group,
    state,
    from: 'start',
    ...session,
    commitIntervalMs: 50,
  })
  proc.on('error', (e) => out(`# error ${describeError(e)}`))
  ready = async () => {
    await proc.close()
    await twain.close()
  }
  out(`# started ${process.pid}`)
  return { twain, proc }
}
