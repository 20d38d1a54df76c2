// Exactly-once outputs of a processor under kill -9 (twain.processor(), README "Exactly-once
// processing"), on the file backend, Redis and a Redis Cluster. The test process writes N inputs
// (ids 0..N-1) to topic 'in' (4 partitions) at a steady pace; processor children of group 'enrich'
// (processor-child.ts) map input id to 0, 1 or 3 outputs on 'out-a' (3 partitions) and 'out-b'
// (5 partitions). Every 1–3 s a processor is killed with SIGKILL and replaced; part of the time two
// run at once (rebalances). On the Cluster, the master serving an output partition is killed
// (kill -9) halfway through, and restarted once its replica is promoted. Once every input is written
// the storm stops, one processor runs until the group's lag is 0 and closes. The file and Redis
// cases run a second time with processors written with RxJS (`from(proc).pipe(batchRx(…),
// concatMap(…))`, each batch acked whole). Specified: every expected output is stored exactly once
// (no duplicate, no gap), nothing for a filtered input, outputs in input order per (input
// partition, output partition), each with the source header of its input, and the group committed
// at the end of every input partition.
//
// Sizes: 20,000 inputs on file, 10,000 on Redis, 5,000 on the Cluster, times
// TWAINMQ_CHAOS_INPUTS_SCALE (10: the issue's full 200,000 / 100,000 / 50,000; timeouts scale too).
// TWAINMQ_CHAOS_FAILOVER_OF=<topic>/<partition> makes the Cluster case kill another partition's
// master (e.g. `in/0`: the master of an input partition and of the group's lease on it).
import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { keySlot } from '../../src/backends/redis/key-slot.js'
import { open, type Twain } from '../../src/index.js'
import { describeErr } from '../helpers/faults.js'
import { checkOutputs, EXACTLY_ONCE, OUTPUT_TOPICS, readOutputs, type InputAt } from '../helpers/processor-checker.js'
import { RedisCluster } from '../helpers/redis-cluster.js'
import { streamKeyOf } from '../helpers/redis-keys.js'
import { chaosFixture, ChildPool, MIN_WORKING_KILLS, pace } from '../helpers/child-pool.js'
import { exited } from '../helpers/spawn.js'
import { fileTarget, redisTarget } from '../helpers/chaos-targets.js'
import { sleep, until } from '../helpers/wait.js'

const SCALE = Number(process.env.TWAINMQ_CHAOS_INPUTS_SCALE ?? 1)
if (!(SCALE > 0)) throw new Error(`TWAINMQ_CHAOS_INPUTS_SCALE must be a positive number, got ${SCALE}`)
const INPUT_PARTITIONS = 4
const BATCH = 100
/** The partition whose master the Cluster case kills: an output partition (TWAINMQ_CHAOS_FAILOVER_OF, e.g. `in/0`, for another). */
const FAILOVER_OF = process.env.TWAINMQ_CHAOS_FAILOVER_OF ?? 'out-a/0'
/** More storm rounds at most, once the rest is done, for a kill that makes a processor find outputs stored. */
const EXTRA_ROUNDS = 10

const { children, cleanups } = chaosFixture()

interface Case {
  name: string
  inputs: number
  /** Inputs written per second during the storm. */
  rate: number
  /** How the processors are written (processor-child.ts): a `for await` loop, or RxJS with `batchRx`. @default 'each' */
  idiom?: 'each' | 'rx'

  /** The target, the child's open() options, and a twain on it for the test. */
  setup: () => Promise<{ target: string; options: Record<string, unknown>; twain: Twain; cluster?: RedisCluster }>
}

const cases: Case[] = [
  {
    name: 'file',
    inputs: 20_000,
    rate: 1000,
    setup: () => fileTarget(cleanups, 'twainmq-chaos-'),
  },
  {
    name: 'file, processors written with RxJS',
    inputs: 20_000,
    rate: 1000,
    idiom: 'rx',
    setup: () => fileTarget(cleanups, 'twainmq-chaos-'),
  },
  {
    name: 'Redis',
    inputs: 10_000,
    rate: 500,
    setup: () => redisTarget(cleanups),
  },
  {
    name: 'Redis, processors written with RxJS',
    inputs: 10_000,
    rate: 500,
    idiom: 'rx',
    setup: () => redisTarget(cleanups),
  },
  {
    name: 'Redis Cluster',
    inputs: 5000,
    rate: 250,
    setup: async () => {
      const cluster = await RedisCluster.start({ nodeTimeoutMs: 1000 })
      cleanups.push(() => cluster.destroy())
      // Acknowledged appends (inputs and outputs) survive a master's kill -9 (group commits and leases do not wait for replicas).
      const options = { prefix: `c${randomBytes(4).toString('hex')}:`, replicaAcks: 1, replicaAckTimeoutMs: 3000 }
      const twain = await open(cluster.url, options)
      cleanups.push(() => twain.close())
      return { target: cluster.url, options, twain, cluster }
    },
  },
]

describe.each(cases.map((c) => [c.name, c] as const))('%s: processor outputs under a SIGKILL storm', (_name, c) => {
  const n = Math.round(c.inputs * SCALE)
  it(
    `stores each of the outputs of ${n} inputs exactly once, in order, and commits every input`,
    async () => {
      const began = performance.now()
      const { target, options, twain, cluster } = await c.setup()
      await twain.createTopic('in', { partitions: INPUT_PARTITIONS, keyType: 'string' })
      for (const [topic, partitions] of Object.entries(OUTPUT_TOPICS))
        await twain.createTopic(topic, { partitions, keyType: 'string' })

      const pool = new ChildPool('processor-child.ts', [target, JSON.stringify(options), c.idiom ?? 'each'], children)

      // The inputs, at a steady pace (each batch with ids: a batch whose write failed is sent again, and stored once).
      const inputs = new Map<number, InputAt>()
      const producerErrors: string[] = []
      const producer = twain.producer<string, string>('in', { dedupWindowMs: 600_000 })
      const produced = (async () => {
        const t0 = performance.now()
        for (let from = 0; from < n; from += BATCH) {
          const ids = Array.from({ length: Math.min(BATCH, n - from) }, (_, i) => from + i)
          const items = ids.map((id) => ({ key: `k${id % 1000}`, value: String(id), id: `in-${id}` }))
          for (let attempt = 0; ; attempt++) {
            try {
              const r = await producer.sendBatch(items)
              r.forEach((m, i) => inputs.set(ids[i] as number, { partition: m.partition, offset: m.offset }))
              break
            } catch (e) {
              producerErrors.push(describeErr(e))
              if (attempt >= 100) throw e
              await sleep(100) // a failover's while: the batch goes again
            }
          }
          await pace(t0, from + BATCH, c.rate)
        }
      })()
      let producing = true
      void produced.then(
        () => (producing = false),
        () => (producing = false),
      )

      // On the Cluster: kill -9 the master serving out-a/0 (FAILOVER_OF) halfway through, wait for its replica's promotion, restart it.
      let failover: Promise<string> | undefined
      const startFailover = async (cl: RedisCluster): Promise<string> => {
        const [topic, partition] = FAILOVER_OF.split('/') as [string, string]
        const slot = keySlot(await streamKeyOf(twain, topic, Number(partition)))
        const master = await cl.masterOf(slot)
        await master.kill()
        const killedAt = inputs.size
        await until(
          async () => {
            const m = await cl.servingMaster(slot, [master])
            return m !== undefined && m !== master
          },
          60_000,
          'the promotion of a replica of the killed master',
        )
        await master.restart()
        await cl.waitHealthy(60_000)
        return `master ${master.port} of ${FAILOVER_OF} killed at ${killedAt} inputs written, replica promoted, restarted (${inputs.size} inputs written by then)`
      }

      // The storm: every 1–3 s one processor is killed (SIGKILL) and the group topped up to 1 or 2 members.
      pool.start()
      // Outputs that a delivery found stored by an earlier one (the processors' `duplicate: true` results).
      const recognised = () => pool.linesStarting('# duplicate').length
      // Until every input is written, and kills have made processors deliver inputs again (at most EXTRA_ROUNDS more).
      let extra = 0
      const more = (): boolean => {
        if (producing || pool.workingKills < MIN_WORKING_KILLS) return true
        return recognised() === 0 && extra++ < EXTRA_ROUNDS
      }
      for (let round = 0; more(); round++) {
        await sleep(1000 + Math.random() * 2000)
        if (cluster && !failover && inputs.size >= n / 2) {
          failover = startFailover(cluster)
          failover.catch(() => undefined)
        }
        await pool.killOne()
        pool.topUp(round % 4 >= 2 ? 2 : 1)
      }
      await produced
      const failoverReport = failover ? await failover : 'none'
      const stormEnded = performance.now()

      // The rest: one processor runs until the group has committed every input, then closes.
      await pool.killAll()
      const last = pool.start()
      const ends = new Map<number, number>()
      for (const at of inputs.values()) ends.set(at.partition, Math.max(ends.get(at.partition) ?? 0, at.offset + 1))
      let group = ''
      const caughtUp = async (): Promise<boolean> => {
        const d = await twain.describeGroup('enrich')
        group = d.topics.map((t) => `${t.topic}/${t.partition} committed ${t.committed} end ${t.end}`).join(', ')
        return (
          d.topics.length === INPUT_PARTITIONS &&
          d.topics.every((t) => t.topic === 'in' && t.committed === t.end && t.end === (ends.get(t.partition) ?? 0))
        )
      }
      await until(caughtUp, 100_000 * SCALE, 'the group to commit every input').catch((e: Error) => {
        throw new Error(
          `${e.message}; group: ${group}; last processor: ${last.out.lines.slice(-5).join(' | ')} ${last.out.stderr()}`,
        )
      })
      await until(() => last.out.lines.some((l) => l.startsWith('# started')), 60_000, 'the last processor to start')
      last.child.kill('SIGTERM')
      const code = await exited(last.child)
      const drained = performance.now()

      const report = checkOutputs(inputs, await readOutputs(twain))
      // Every processor but the last was killed: one that ended by itself crashed (e.g. on an unhandled rejection).
      const crashed = pool.all.filter((p) => p !== last && !p.killed)
      const errorLines = pool.linesStarting('# error')
      const info =
        `${c.name}: ${n} inputs; ${pool.kills} SIGKILLs (${pool.workingKills} of working processors), ${pool.all.length} processors started; ` +
        `failover: ${failoverReport}; ${producerErrors.length} producer retries${producerErrors[0] ? ` (${producerErrors[0]})` : ''}; ` +
        `${errorLines.length} error lines of processors${errorLines.length ? ` (e.g. ${errorLines.slice(0, 2).join(' | ')})` : ''}; ` +
        `${crashed.length} processors ended by themselves${crashed[0] ? ` (${crashed[0].name}: exit ${crashed[0].child.exitCode ?? crashed[0].child.signalCode}, last lines ${crashed[0].out.lines.slice(-4).join(' | ')}, stderr ${crashed[0].out.stderr().slice(-300)})` : ''}; ` +
        `${recognised()} outputs recognised as stored by a later delivery; group: ${group}; ` +
        `storm ${Math.round((stormEnded - began) / 1000)} s, drained at ${Math.round((drained - began) / 1000)} s\n${report.text}`
      if (process.env.TWAINMQ_REPORT) console.log(info)

      expect(inputs.size, info).toBe(n)
      expect(pool.workingKills, info).toBeGreaterThanOrEqual(MIN_WORKING_KILLS)
      // On the Cluster a processor started right after the master's kill -9 once exited with code
      // 13, its open() waiting on a promise ioredis dropped (decision 242).
      expect(crashed.length, info).toBe(0)
      expect(report.counts, info).toEqual(EXACTLY_ONCE)
      expect(report.stored, info).toBe(report.expected)
      // Inputs were delivered again after kills, and their stored outputs recognised.
      expect(recognised(), info).toBeGreaterThan(0)
      expect(await caughtUp(), info).toBe(true)
      expect(code, `${info}\nlast processor: ${last.out.stderr()}`).toBe(0)
      expect(
        last.out.lines.some((l) => l.startsWith('# closed')),
        info,
      ).toBe(true)
    },
    (c.name === 'Redis Cluster' ? 150_000 : 120_000) * Math.max(1, SCALE),
  )
})
