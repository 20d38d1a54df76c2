// Idempotent sends across a crash (send(…, { id })): a producer process is killed with SIGKILL at a
// random point, a new process sends everything again with the same ids, and every id is stored
// exactly once, at the offset both processes were told. Without ids (or before sends had them) the
// second process stored every message again: this test failed with 2,000 + the first process's
// messages in the topic.
import type { ChildProcess } from 'node:child_process'
import { afterEach, describe, expect, it } from 'vitest'
import { ID_HEADER } from '../../src/backends/record.js'
import { open, type Twain } from '../../src/index.js'
import { RedisServer } from '../helpers/redis-server.js'
import { exited, killChildren, lines, spawnChild, until } from '../helpers/spawn.js'
import { tempDir } from '../helpers/tmp.js'

const COUNT = 2000

interface Told {
  partition: number
  offset: number
  dup: boolean
}

/** `<seq> <partition> <offset> <new|dup>` lines of an id-producer child. */
function told(out: string[]): Map<number, Told> {
  const m = new Map<number, Told>()
  for (const l of out) {
    if (l.startsWith('#')) continue
    const [seq, partition, offset, what] = l.split(' ')
    m.set(Number(seq), { partition: Number(partition), offset: Number(offset), dup: what === 'dup' })
  }
  return m
}

const children: ChildProcess[] = []
let twain: Twain | undefined
const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  await killChildren(children)
  await twain?.close()
  twain = undefined
  for (const c of cleanups.splice(0)) await c()
})

const targets: Array<[string, () => Promise<string>]> = [
  [
    'file',
    async () => {
      const t = tempDir('twainmq-idem-')
      cleanups.push(t.remove)
      return t.dir
    },
  ],
  [
    'redis',
    async () => {
      const server = await RedisServer.start()
      cleanups.push(() => server.destroy())
      return `redis://127.0.0.1:${server.port}`
    },
  ],
]

describe.each(targets)('%s: idempotent sends after a SIGKILL', (_name, target) => {
  it('a new process sending everything again stores each id once, at the offset the first was told', async () => {
    const url = await target()
    twain = await open(url)
    await twain.createTopic('ids', { partitions: 3, keyType: 'u32' })
    // The first process: killed once it has been told of a random number of its sends.
    const first = spawnChild('id-producer.ts', [url, 'ids', String(COUNT), '50'])
    children.push(first)
    const a = lines(first)
    const killAt = 200 + Math.floor(Math.random() * 1200)
    await until(
      () => a.lines.length > killAt || first.exitCode !== null,
      60_000,
      `the first producer to be told of ${killAt} sends (${a.stderr()})`,
    )
    first.kill('SIGKILL')
    await exited(first)
    const before = told(a.lines)
    expect(before.size).toBeGreaterThan(killAt - 50)
    // The second process sends all of them again.
    const second = spawnChild('id-producer.ts', [url, 'ids', String(COUNT), '50'])
    children.push(second)
    const b = lines(second)
    expect(await exited(second), b.stderr()).toBe(0)
    const after = told(b.lines)
    expect(after.size).toBe(COUNT)

    const stored: Array<{ id: string; partition: number; offset: number; value: unknown }> = []
    for await (const m of twain.history<string>('ids'))
      stored.push({ id: m.headers[ID_HEADER] as string, partition: m.partition, offset: m.offset, value: m.value })
    // Every id once: none lost, none stored twice.
    expect(stored).toHaveLength(COUNT)
    expect(new Set(stored.map((s) => s.id)).size).toBe(COUNT)
    for (const s of stored) expect(s.value).toBe(s.id)
    const at = new Map(stored.map((s) => [s.id, `${s.partition}/${s.offset}`]))
    // Both processes were told where each id is; what the first stored, the second found stored.
    for (const [seq, t] of after) expect(`${t.partition}/${t.offset}`, `m-${seq}`).toBe(at.get(`m-${seq}`))
    for (const [seq, t] of before) {
      expect(`${t.partition}/${t.offset}`, `m-${seq}`).toBe(at.get(`m-${seq}`))
      expect(after.get(seq)?.dup, `m-${seq} sent again`).toBe(true)
    }
    expect([...after.values()].filter((t) => !t.dup).length).toBeLessThanOrEqual(COUNT - before.size)
  }, 120_000)
})
