// Slot migration of a Redis Cluster while sends go on (issue 12): the slot of a partition moves to
// another master at once or key by key (a slow migration leaves the slot half moved: some keys on
// each side). No send is rejected, nothing acknowledged is lost, a tail delivers every record once
// and in order without stalling, and a partitioned group keeps consuming, with no error reported.
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { open, type GroupMessage } from '../../src/index.js'
import { keySlot } from '../../src/backends/redis/key-slot.js'
import { check, CLEAN, readBack } from '../helpers/checker.js'
import { collect, deliveredAll, deliveryProblems, sendLoad } from '../helpers/cluster-load.js'
import { RedisCluster } from '../helpers/redis-cluster.js'
import { streamKeyOf } from '../helpers/redis-keys.js'
import { until } from '../helpers/wait.js'

const PARTITIONS = 3

let cluster: RedisCluster
beforeAll(async () => {
  cluster = await RedisCluster.start({ masters: 3, replicas: 0 })
}, 60_000)
afterAll(async () => {
  await cluster?.destroy()
})

describe.each([
  ['at once', { batch: 100 }],
  ['key by key, slowly', { batch: 1, pauseMs: 400 }],
] as const)('the slot of a partition migrates %s during sends', (_, how) => {
  it('no rejected send, no loss, a tail and a group keep delivering', async () => {
    const prefix = `m${randomBytes(4).toString('hex')}:`
    const twain = await open(cluster.url, { prefix })
    const errors: unknown[] = []
    try {
      await twain.createTopic('t', { partitions: PARTITIONS })
      const tail = collect(twain.tail<string>('t', { from: 'start' }))
      const consumer = twain.consumer<string>('t', { group: 'g' })
      consumer.on('error', (e) => errors.push(e))
      const group = collect(consumer, (m) => (m as GroupMessage<string>).ack())
      const load = sendLoad(twain, 't', [0, 0, 0, 0, 1, 2])
      await load.more(1000, '1000 sends before the migration')

      const slot = keySlot(await streamKeyOf(twain, 't', 0))
      const source = await cluster.masterOf(slot)
      const target = (await cluster.masters()).find((m) => m !== source)
      if (!target) throw new Error('no other master')
      const before = tail.byPartition.get(0)?.length ?? 0
      await cluster.migrateSlot(slot, target, how)
      expect(await cluster.masterOf(slot)).toBe(target)
      // The tail kept delivering partition 0 while its slot moved.
      expect(tail.byPartition.get(0)?.length ?? 0).toBeGreaterThan(before)
      const moved = load.acked.filter((a) => a.partition === 0).length
      await until(
        () => load.acked.filter((a) => a.partition === 0).length >= moved + 500,
        30_000,
        '500 sends to partition 0 after the migration',
      )
      await load.stop()

      expect(load.failures.map(String)).toEqual([])
      const report = check(load.acked, await readBack(twain, 't'))
      expect(report.counts, report.text).toEqual(CLEAN)
      await until(() => deliveredAll(tail, load.acked), 20_000, 'the tail to deliver every acknowledged send')
      expect(
        deliveryProblems(
          tail,
          load.acked,
          new Map([
            [0, 0],
            [1, 0],
            [2, 0],
          ]),
        ),
      ).toEqual([])
      await until(() => deliveredAll(group, load.acked), 20_000, 'the group to deliver every acknowledged send')
      expect(tail.error).toBeUndefined()
      expect(group.error).toBeUndefined()
      expect(errors.map(String)).toEqual([])
    } finally {
      await twain.close()
    }
  }, 120_000)
})

it('sends settle promptly while a migration is open, before any key moved and after all did', async () => {
  const prefix = `o${randomBytes(4).toString('hex')}:`
  const twain = await open(cluster.url, { prefix })
  try {
    await twain.createTopic('t', { partitions: 1 })
    const producer = twain.producer<string>('t')
    await producer.send(0, 'first')
    const slot = keySlot(await streamKeyOf(twain, 't', 0))
    const source = await cluster.masterOf(slot)
    const target = (await cluster.masters()).find((m) => m !== source)
    if (!target) throw new Error('no other master')
    const took: Record<string, number> = {}
    await cluster.migrateSlot(slot, target, {
      hold: async (stage) => {
        const t0 = performance.now()
        await producer.send(0, stage)
        took[stage] = performance.now() - t0
      },
    })
    // A script naming an absent key gets TRYAGAIN until the migration ends (it would wait for ever here).
    // 5 s: far below the 30 s a send would retry TRYAGAIN for, and no load reaches it.
    expect(took.opened).toBeLessThan(5000)
    expect(took.moved).toBeLessThan(5000)
    expect((await readBack(twain, 't')).records.map((r) => r.id)).toEqual(['first', 'opened', 'moved'])
  } finally {
    await twain.close()
  }
}, 60_000)
