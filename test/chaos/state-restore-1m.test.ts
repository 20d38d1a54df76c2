// A state store of 1,000,000 keys restored after kill -9 (README "State stores", decision 204), on
// the file backend and on Redis, timed. A processor child (big-state-child.ts) writes 1,000 keys
// per input message, 1,000 messages; it is killed with SIGKILL once the group has committed more
// than half of them, while it writes. A second child restores the state and goes on. Specified:
// at its first message the restored state holds exactly the keys of the messages before it (1,000
// per message: nothing lost, nothing from a message it processes again); at the end it, and the
// changelog once every message is committed, hold the 1,000,000 keys with their values. The time to
// the restorer's first message (the killed writer is known dead at once: same host, pid gone) and
// `history()` of the changelog, read in the same run, are printed (the `processing` bench has the
// goal's ratio).
import type { ChildProcess } from 'node:child_process'
import { afterEach, describe, expect, it } from 'vitest'
import { fileTarget, redisTarget, type ChaosTarget } from '../helpers/chaos-targets.js'
import { exited, killChildren, lines, spawnChild } from '../helpers/spawn.js'
import { until } from '../helpers/wait.js'

const MESSAGES = 1000
const KEYS = MESSAGES * 1000

const children: ChildProcess[] = []
const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  await killChildren(children)
  for (const c of cleanups.splice(0).reverse()) await c()
})

const cases: Array<{ name: string; setup: () => Promise<ChaosTarget> }> = [
  { name: 'file', setup: () => fileTarget(cleanups, 'twainmq-restore-1m-') },
  { name: 'Redis', setup: () => redisTarget(cleanups) },
]

describe.each(cases.map((c) => [c.name, c] as const))('%s: a state store of 1,000,000 keys', (_name, c) => {
  it('is restored whole after kill -9 mid-write, and holds every key once written', async () => {
    const { target, options, twain } = await c.setup()
    await twain.createTopic('fill', { partitions: 1, keyType: 'u32' })
    await twain
      .producer<string, number>('fill')
      .sendBatch(Array.from({ length: MESSAGES }, (_, i) => ({ key: i, value: String(i) })))
    const start = () => {
      const child = spawnChild('big-state-child.ts', [target, JSON.stringify(options)])
      children.push(child)
      return { child, out: lines(child) }
    }
    const committed = async () => (await twain.describeGroup('big')).topics[0]?.committed ?? 0

    const writer = start()
    await until(async () => (await committed()) > MESSAGES / 2, 300_000, 'half of the messages to be committed')
    writer.child.kill('SIGKILL')
    await exited(writer.child)
    const killedAt = await committed()

    const restorer = start()
    await twain.producer<string, number>('fill').send(MESSAGES, '-1')
    await until(() => restorer.out.lines.some((l) => l.startsWith('# state ')), 300_000, 'the state check').catch(
      (e: Error) => {
        throw new Error(
          `${e.message}: ${restorer.out.lines.slice(-5).join(' | ')} ${restorer.out.stderr().slice(-1000)}`,
        )
      },
    )
    const [ms, size, offset] = (restorer.out.lines.find((l) => l.startsWith('# restored ')) as string)
      .split(' ')
      .slice(2)
      .map(Number) as [number, number, number]
    const [finalSize, sum] = (restorer.out.lines.find((l) => l.startsWith('# state ')) as string)
      .split(' ')
      .slice(2)
      .map(Number) as [number, number]
    // Every write stored: the group committed every message (a message is committed after its writes).
    await until(async () => (await committed()) === MESSAGES + 1, 300_000, 'every message to be committed')
    restorer.child.kill('SIGTERM')
    expect(await exited(restorer.child)).toBe(0)

    const t0 = performance.now()
    let records = 0
    const stored = new Map<string, number>()
    for await (const m of twain.history<number, string>('big-big-changelog')) {
      records++
      stored.set(m.key, m.value)
    }
    const historyMs = performance.now() - t0
    let storedSum = 0
    for (const v of stored.values()) storedSum += v
    console.log(
      `${c.name}: killed with ${killedAt} of ${MESSAGES} messages committed; restored ${size} keys in ${ms} ms (first message ${offset}); history() of the changelog's ${records} records ${Math.round(historyMs)} ms`,
    )
    expect(offset).toBeGreaterThanOrEqual(killedAt)
    expect(size).toBe(offset * 1000)
    expect(size).toBeGreaterThan(KEYS / 2)
    expect([finalSize, sum]).toEqual([KEYS, MESSAGES * 499_500])
    expect([stored.size, storedSum]).toEqual([KEYS, MESSAGES * 499_500])
  }, 600_000)
})
