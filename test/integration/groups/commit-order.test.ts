// Commits of one member are written in the order they were made (file backend, where waiting for
// the group's lock is not first come, first served): commits made while another holder keeps the
// group's lock all wait for it; once it is free, the committed offset only moves forward and ends
// at the last one. A commit of an older offset written after a newer one moved the group's
// position back: a member killed right after it left its successor redelivering messages past its
// last reported commit (test/integration/groups/groups-crash.test.ts, on a loaded machine).
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { PartitionLock } from '../../../src/backends/file/partition-lock.js'
import { open, type Twain } from '../../../src/index.js'
import { tempDir } from '../../helpers/tmp.js'
import { until } from '../../helpers/wait.js'

let tmp: ReturnType<typeof tempDir> | undefined
let twain: Twain | undefined

afterEach(async () => {
  await twain?.close()
  tmp?.remove()
  twain = tmp = undefined
})

describe('commit order', () => {
  it('commits made while the group lock is held are written in order: the offset only moves forward and ends at the last', async () => {
    tmp = tempDir('twainmq-commit-order-')
    twain = await open(tmp.dir)
    await twain.createTopic('t', { partitions: 1 })
    await twain.producer<string>('t').sendBatch(Array.from({ length: 40 }, (_, i) => ({ key: 1, value: `m${i}` })))
    const consumer = twain.consumer<string>('t', { group: 'g', from: 'start', commitIntervalMs: 600_000 })
    const reported: number[] = []
    consumer.on('commit', (cs) => reported.push(...cs.map((c) => c.offset)))
    const it = consumer[Symbol.asyncIterator]()
    const first = await it.next()
    expect(first.done).toBe(false)

    const lock = new PartitionLock(`${join(tmp.dir, '__groups', 'g')}.lock`)
    await lock.acquire()
    const commits: Array<Promise<void>> = []
    try {
      first.value?.ack()
      commits.push(consumer.commit())
      for (let i = 1; i < 30; i++) {
        const r = await it.next()
        r.value?.ack()
        commits.push(consumer.commit()) // each waits for the lock with the offset acked so far
      }
    } finally {
      lock.release()
      lock.dispose()
    }
    await Promise.all(commits)
    await until(async () => (await twain!.describeGroup('g')).topics[0]?.committed === 30, 10_000, 'commit of 30')
    for (let i = 1; i < reported.length; i++)
      expect(reported[i], `commits reported ${reported.join(', ')}`).toBeGreaterThanOrEqual(reported[i - 1] as number)
    expect(reported.at(-1)).toBe(30)
    await consumer.close()
  })

  it('a commit made as the lock is freed does not overtake an older one that was waiting for it', async () => {
    tmp = tempDir('twainmq-commit-order-')
    twain = await open(tmp.dir)
    await twain.createTopic('t', { partitions: 1 })
    await twain.producer<string>('t').sendBatch(Array.from({ length: 4 }, (_, i) => ({ key: 1, value: `m${i}` })))
    const consumer = twain.consumer<string>('t', { group: 'g', from: 'start', commitIntervalMs: 600_000 })
    const reported: number[] = []
    consumer.on('commit', (cs) => reported.push(...cs.map((c) => c.offset)))
    const it = consumer[Symbol.asyncIterator]()
    const [m0, m1] = [(await it.next()).value, (await it.next()).value]
    const path = `${join(tmp.dir, '__groups', 'g')}.lock`
    const lock = new PartitionLock(path)
    await lock.acquire()
    m0?.ack()
    const older = consumer.commit() // offset 1, waits for the lock
    await until(() => existsSync(`${path}.want`), 10_000, 'the older commit to wait for the lock')
    m1?.ack()
    lock.release()
    lock.dispose()
    const newer = consumer.commit() // offset 2, the lock free at this moment
    await Promise.all([older, newer])
    expect(reported, `commits reported ${reported.join(', ')}`).toEqual([...reported].sort((a, b) => a - b))
    expect((await twain.describeGroup('g')).topics[0]?.committed).toBe(2)
    await consumer.close()
  })
})
