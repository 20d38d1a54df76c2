// A processor output write that fails for good (an error that is not retriable: e.g. the store
// refusing it after the session's deadline during a Redis failover) must not let a later input's
// output into the output partition before the failed input's: README "Exactly-once processing",
// "Order". The processor runs on a real directory through a store whose `appendSourced` refuses the
// first call that carries an output of input offset 5; each input's output is awaited (a failed
// one is caught), then the message is acked, as a service does. Checked: each output stored once,
// in input order, and the group committed at the end.
import { afterEach, describe, expect, it } from 'vitest'
import type { Backend, SourcePosition } from '../../src/backends/backend.js'
import { FileBackend } from '../../src/backends/file/file-backend.js'
import { resolveConsumerOptions } from '../../src/consumer/options.js'
import { Processor } from '../../src/consumer/partitioned/processor.js'
import { TwainError } from '../../src/core/errors.js'
import { cachedHash64 } from '../../src/core/hash64.js'
import { open, type Twain } from '../../src/index.js'
import { tempDir } from '../helpers/tmp.js'
import { until } from '../helpers/wait.js'

const INPUTS = 40
/** The input whose outputs' first write fails. */
const FAILING = 5

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

/** A directory with topics 'in' (inputs i0…) and 'out', a twain on it, and a store of it for the processor. */
async function setup(): Promise<{ twain: Twain; real: FileBackend }> {
  const t = tempDir('twainmq-output-failure-')
  cleanups.push(() => t.remove())
  const twain = await open(t.dir)
  cleanups.push(() => twain.close())
  await twain.createTopic('in', { partitions: 1, keyType: 'string' })
  await twain.createTopic('out', { partitions: 1, keyType: 'string' })
  const producer = twain.producer<string>('in')
  for (let i = 0; i < INPUTS; i++) void producer.send('k', String(i))
  await producer.flush()
  const real = new FileBackend(t.dir, { pollMs: 50 })
  await real.init()
  cleanups.push(() => real.close())
  return { twain, real }
}

/** `real`, except that the first `appendSourced` call with an output of input offset `failing` fails (not retriable). */
function failingOnce(real: Backend, failing: number): { backend: Backend; failed: () => number } {
  let failures = 0
  const backend = new Proxy(real, {
    get(target, prop, recv) {
      if (prop === 'appendSourced') {
        return async (...args: unknown[]) => {
          const positions = args[5] as SourcePosition[]
          if (failures === 0 && positions.some((p) => p.offset === failing)) {
            failures++
            throw new TwainError(`Injected: the write of input ${failing}'s outputs is refused`, { code: 'ERR_TEST' })
          }
          return (target.appendSourced as (...a: unknown[]) => Promise<unknown>).apply(target, args)
        }
      }
      const v = Reflect.get(target, prop, recv) as unknown
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v
    },
  }) as Backend
  return { backend, failed: () => failures }
}

describe('a processor output write that fails (not retriable)', () => {
  it("stores no later input's output before the failed input's: outputs stay in input order, each once", async () => {
    const { twain, real } = await setup()
    const { backend, failed } = failingOnce(real, FAILING)
    const proc = new Processor<string>(
      { store: backend, clientId: 'test', iterations: new Set(), decode: undefined },
      ['in'],
      resolveConsumerOptions({
        group: 'g',
        from: 'start',
        sessionTimeoutMs: 5000,
        heartbeatIntervalMs: 50,
        commitIntervalMs: 50,
      }),
      { validate: (_t, v) => Promise.resolve(v) },
      cachedHash64(),
      () => undefined,
    )
    cleanups.push(() => proc.close())
    const errors: unknown[] = []
    void (async () => {
      for await (const m of proc) {
        // Awaited, as a service does: the next input is processed once this one's output settled.
        await m.send('out', `o-${m.offset}`, `${m.offset}`).catch((e: unknown) => errors.push(e))
        m.ack()
      }
    })()
    await until(
      async () => (await twain.describeGroup('g')).topics[0]?.committed === INPUTS,
      20_000,
      'the group committed every input',
    )
    expect(failed()).toBe(1)
    expect(errors.length).toBeGreaterThan(0) // the injected failure reached the sends of that write
    const stored: number[] = []
    for await (const m of twain.history<string>('out')) stored.push(Number(m.value))
    expect(stored).toEqual(Array.from({ length: INPUTS }, (_, i) => i))
  })
})
