// Defects of the group members found in issue 11 (item 7), each shown on a real file store.
import { getEventListeners } from 'node:events'
import { afterEach, describe, expect, it } from 'vitest'
import type { Backend } from '../../../src/backends/backend.js'
import { FileBackend } from '../../../src/backends/file/file-backend.js'
import { Consumer } from '../../../src/consumer/partitioned/consumer.js'
import { ledgerOf } from '../../../src/consumer/partitioned/ledger-of.js'
import type { GroupMessage } from '../../../src/consumer/group-message.js'
import { resolveConsumerOptions, type ConsumerOptions } from '../../../src/consumer/options.js'
import { open } from '../../../src/index.js'
import { texts, topicMeta } from '../../contract/fixture.js'
import { RedisServer } from '../../helpers/redis-server.js'
import { until } from '../../helpers/spawn.js'
import { tempDir } from '../../helpers/tmp.js'

const FAST = {
  group: 'g',
  sessionTimeoutMs: 5000,
  heartbeatIntervalMs: 50,
  commitIntervalMs: 100,
} satisfies ConsumerOptions

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

async function store(): Promise<FileBackend> {
  const t = tempDir('twainmq-defects-')
  const b = new FileBackend(t.dir, { pollMs: 50 })
  await b.init()
  cleanups.push(
    () => t.remove(),
    () => b.close(),
  )
  return b
}

function consumer(b: Backend, o: Partial<ConsumerOptions> = {}): Consumer<string> {
  const c = new Consumer<string>(
    { store: b, clientId: 'test', iterations: new Set(), decode: undefined },
    ['t'],
    resolveConsumerOptions({ ...FAST, ...o }),
    () => undefined,
  )
  cleanups.push(() => c.close())
  return c
}

/** A gate: `wait()` resolves once `open()` was called. */
function gate(): { wait: () => Promise<void>; open: () => void } {
  let open!: () => void
  const p = new Promise<void>((r) => (open = r))
  return { wait: () => p, open }
}

describe('a dead-letter write that completes after its partition was dropped', () => {
  it('does not count the message out of the member a second time', async () => {
    const real = await store()
    await real.createTopic(topicMeta('t', { partitions: 2 }))
    const meta = await real.getTopic('t')
    for (const p of [0, 1]) await real.append('t', p, texts(meta, `p${p}-`, 1), 'test')
    // Dead-letter appends wait on the gate; everything else goes straight to the store.
    const dlqGate = gate()
    const written: number[] = []
    const backend = new Proxy(real, {
      get(target, prop, recv) {
        if (prop === 'append') {
          return async (topic: string, ...rest: unknown[]) => {
            if (topic === 'dlq') await dlqGate.wait()
            const r = await (target.append as (...a: unknown[]) => Promise<unknown>).call(target, topic, ...rest)
            if (topic === 'dlq') written.push(...(rest[1] as unknown[]).map(() => 1)) // one per record: a write may carry both
            return r
          }
        }
        const v = Reflect.get(target, prop, recv) as unknown
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v
      },
    }) as Backend
    const a = consumer(backend, { deadLetter: 'dlq', maxInFlight: 4, drainTimeoutMs: 100 })
    const held: GroupMessage<string>[] = []
    await until(() => (held.push(...a.pollMany(2)), held.length === 2), 10_000, 'both messages polled')
    for (const m of held) m.term('bad') // both dead-letter writes wait on the gate
    const revoked = new Promise<void>((resolve) => a.on('revoked', () => resolve()))
    const b = consumer(real) // the second member: a's revocation times out on the pending write
    await revoked
    await until(() => a.assignments().length === 1 && b.assignments().length === 1, 10_000, 'one partition each')
    dlqGate.open()
    await until(() => written.length === 2, 10_000, 'both dead letters written')
    // Nothing is fetched and unsettled now: the member's count of such messages must say so (it
    // said -1, so the member could hold maxInFlight + 1).
    expect(ledgerOf(a).outstanding).toBe(0)
  })
})

describe("the user's signal", () => {
  it('keeps no listener of a closed partitioned consumer', async () => {
    const t = tempDir('twainmq-defects-')
    const twain = await open(t.dir, { pollMs: 50 })
    cleanups.push(
      () => t.remove(),
      () => twain.close(),
    )
    await twain.createTopic('t', { partitions: 1 })
    const ctl = new AbortController() // long-lived: the application's own
    const before = getEventListeners(ctl.signal, 'abort').length
    for (let i = 0; i < 20; i++) await twain.consumer('t', { ...FAST, signal: ctl.signal }).close()
    expect(getEventListeners(ctl.signal, 'abort').length).toBe(before)
  })

  it('keeps no listener of a closed shared consumer', async () => {
    const server = await RedisServer.start()
    cleanups.push(() => server.destroy())
    const twain = await open(server.url, { prefix: 'defects:' })
    cleanups.push(() => twain.close())
    await twain.createTopic('t', { partitions: 1 })
    const ctl = new AbortController()
    const before = getEventListeners(ctl.signal, 'abort').length
    for (let i = 0; i < 5; i++) await twain.consumer('t', { ...FAST, mode: 'shared', signal: ctl.signal }).close()
    expect(getEventListeners(ctl.signal, 'abort').length).toBe(before)
  })
})

describe('release()', () => {
  it('puts messages back in offset order, whatever order they are released in (partitioned)', async () => {
    const b = await store()
    await b.createTopic(topicMeta('t'))
    await b.append('t', 0, texts(await b.getTopic('t'), 'm', 3), 'test')
    const c = consumer(b)
    const held: GroupMessage<string>[] = []
    await until(() => (held.push(...c.pollMany(3 - held.length)), held.length === 3), 10_000, 'three messages polled')
    for (const m of held) m.release() // lowest first: each one released is the partition's last
    const again = c.pollMany(3)
    expect(again.map((m) => m.offset)).toEqual([0, 1, 2])
    for (const m of again) m.ack()
  })
})
