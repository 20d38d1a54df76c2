// A tail on a file-backend topic that another process deletes and creates again follows the new
// topic from its first record (offsets start again at 0), with the new topic's key type. It used to
// wait at the old offsets forever, its watch dead with the old directory.
import { afterEach, describe, expect, it } from 'vitest'
import { open, type Message } from '../../../src/index.js'
import { exited, killChildren, lines, spawnChild, until } from '../../helpers/spawn.js'
import { tempDir } from '../../helpers/tmp.js'
import type { ChildProcess } from 'node:child_process'

const children: ChildProcess[] = []
afterEach(() => killChildren(children))

async function recreate(dir: string, keyType: string, partitions: number, values: string[]): Promise<void> {
  const child = spawnChild('recreate-topic.ts', [dir, 't', keyType, String(partitions), ...values])
  children.push(child)
  const out = lines(child)
  expect(await exited(child), out.stderr()).toBe(0)
  expect(out.lines).toEqual(['done'])
}

describe('a tail across delete and re-create of its topic (file backend)', () => {
  /** Where `recreate` puts value i, and its key: [partition, offset, key, value]. */
  const placed = (values: string[], partitions: number, key: (i: number) => string | number) =>
    values.map((v, i) => [i % partitions, Math.floor(i / partitions), key(i), v]).sort()
  for (const [label, maxOpenFiles, partitions] of [
    ['open segment fds', 512, 2],
    ['fds evicted by the pool', 8, 12],
  ] as const) {
    it(`follows the new topic from offset 0, twice, with its key type (${label})`, async () => {
      const tmp = tempDir()
      const twain = await open(tmp.dir, { clientId: 'tailer', maxOpenFiles })
      try {
        await twain.createTopic('t', { partitions, keyType: 'u16' })
        await twain
          .producer<string>('t')
          .sendBatch([0, 1, 2, 3].map((i) => ({ key: i, value: `old-${i}`, partition: i % partitions })))
        const got: Array<Message<string>> = []
        const tail = twain.tail<string>('t', { from: 'start' })
        const reading = (async () => {
          for await (const m of tail) got.push(m)
        })()
        await until(() => got.length === 4, 10_000, 'the first topic')
        await recreate(tmp.dir, 'string', partitions, ['new-0', 'new-1'])
        await until(() => got.length === 6, 10_000, 'the re-created topic')
        await recreate(tmp.dir, 'u32', partitions, ['third-0', 'third-1', 'third-2'])
        await until(() => got.length === 9, 10_000, 'the topic created a third time')
        await tail.close()
        await reading
        const seen = got.slice(4).map((m) => [m.partition, m.offset, m.key, m.value])
        expect(seen.slice(0, 2).sort()).toEqual(placed(['new-0', 'new-1'], partitions, (i) => `k${i}`))
        expect(seen.slice(2).sort()).toEqual(placed(['third-0', 'third-1', 'third-2'], partitions, (i) => i))
      } finally {
        await twain.close()
        tmp.remove()
      }
    }, 40_000)
  }
})
