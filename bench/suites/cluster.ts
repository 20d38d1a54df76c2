/*
 * `npm run bench -- cluster`: the Redis backend on a Redis Cluster against one redis-server, in the
 * same run, and scale-out over 1, 2 and 3 masters (no replicas, no persistence on any server).
 *
 *   produce  producer.sendBatch of 1000 items at a time over 12 partitions (keys spread them)
 *   read     for await over twain.history(topic)
 *   server   the CPU every server used (INFO cpu: used_cpu_sys + used_cpu_user) during both phases,
 *            per message, and the busiest master's share of the standalone server's CPU
 *
 * One 2-core machine cannot show wall-clock scale-out (client and servers share the cores), so the
 * server work is the measure of spreading: total server CPU per message (how much a cluster costs)
 * and the busiest master's CPU (how much of the load one machine would carry).
 */
import { randomBytes } from 'node:crypto'
import { loadavg } from 'node:os'
import { Redis } from 'ioredis'
import { open } from '../../src/index.js'
import { RedisCluster } from '../../test/helpers/redis-cluster.js'
import { RedisServer } from '../../test/helpers/redis-server.js'
import { progress } from '../lib/progress.js'
import { log, machine, makeValue, revision } from '../lib/report.js'
import { fmtInt, fmtNum } from '../lib/stats.js'
import type { Suite, SuiteOptions } from '../lib/suite.js'
import { renderTable } from '../lib/table.js'

const PARTITIONS = 12
const CHUNK = 1000

interface Round {
  produce: number
  read: number
  /** Server CPU seconds per million messages (produce + read), all servers. */
  cpuPerM: number
  /** Busiest server's CPU seconds in the round. */
  busiest: number
  /** All servers' CPU seconds in the round. */
  total: number
}

interface Target {
  name: string
  url: string
  /** Ports of the servers doing the work (masters). */
  ports: number[]
  stop(): Promise<void>
}

async function cpuSeconds(ports: number[]): Promise<number[]> {
  return Promise.all(
    ports.map(async (port) => {
      const c = new Redis({ port, host: '127.0.0.1', protocol: 2 })
      try {
        const info = String(await c.info('cpu'))
        const num = (k: string) => Number(new RegExp(`${k}:([\\d.]+)`).exec(info)?.[1] ?? 0)
        return num('used_cpu_sys') + num('used_cpu_user')
      } finally {
        c.disconnect()
      }
    }),
  )
}

async function round(target: Target, n: number, value: string): Promise<Round> {
  const prefix = `b${randomBytes(4).toString('hex')}:`
  const twain = await open(target.url, { prefix })
  try {
    await twain.createTopic('bench', { partitions: PARTITIONS, keyType: 'u32' })
    const before = await cpuSeconds(target.ports)
    const p = twain.producer<string>('bench')
    const bar = progress(`${target.name} produce`, n)
    let t0 = performance.now()
    for (let i = 0; i < n; i += CHUNK) {
      const items = Array.from({ length: Math.min(CHUNK, n - i) }, (_, j) => ({ key: i + j, value }))
      await p.sendBatch(items)
      bar.update(i)
    }
    bar.stop()
    const produce = n / ((performance.now() - t0) / 1000)
    t0 = performance.now()
    let count = 0
    for await (const _ of twain.history('bench')) count++
    const read = count / ((performance.now() - t0) / 1000)
    if (count !== n) throw new Error(`${target.name}: history read ${count}, expected ${n}`)
    const after = await cpuSeconds(target.ports)
    const used = after.map((a, i) => a - (before[i] as number))
    const total = used.reduce((x, y) => x + y, 0)
    await twain.deleteTopic('bench')
    return { produce, read, total, busiest: Math.max(...used), cpuPerM: (total / n) * 1e6 }
  } finally {
    await twain.close()
  }
}

async function standalone(): Promise<Target> {
  const s = await RedisServer.start()
  return { name: 'one redis-server', url: s.url, ports: [s.port], stop: () => s.destroy() }
}

async function cluster(masters: number): Promise<Target> {
  const c = await RedisCluster.start({ masters, replicas: 0, aof: false })
  return {
    name: `cluster, ${masters} master${masters > 1 ? 's' : ''}`,
    url: c.url,
    ports: c.nodes.map((x) => x.port),
    stop: () => c.destroy(),
  }
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[(xs.length - 1) >> 1] as number

const suite: Suite = {
  name: 'cluster',
  description: 'Redis Cluster: produce/read and server CPU per message vs one redis-server, scale-out over 1-3 masters',
  async run(o: SuiteOptions): Promise<void> {
    log('twainmq bench: cluster')
    log(`command: ${o.command}`)
    log(`source:  ${revision()}`)
    log(
      `machine: ${machine()}, load average ${loadavg()
        .map((x) => x.toFixed(2))
        .join(' ')}`,
    )
    log(
      `setup:   ${fmtInt(o.messages)} messages of ${o.size} B on ${PARTITIONS} partitions, sendBatch of ${CHUNK}; ${o.repeat} round(s) per target, median reported; servers without persistence or replicas`,
    )
    const value = makeValue(o.size)
    const targets = [await standalone(), await cluster(1), await cluster(2), await cluster(3)]
    const results = new Map<Target, Round[]>(targets.map((t) => [t, []]))
    try {
      // Rounds alternate between the targets, so a change in machine load spreads over all of them.
      for (let r = 0; r < o.repeat; r++)
        for (const t of targets) (results.get(t) as Round[]).push(await round(t, o.messages, value))
    } finally {
      await Promise.all(targets.map((t) => t.stop()))
    }
    const base = results.get(targets[0] as Target) as Round[]
    const b = {
      produce: median(base.map((x) => x.produce)),
      read: median(base.map((x) => x.read)),
      cpu: median(base.map((x) => x.cpuPerM)),
      total: median(base.map((x) => x.total)),
    }
    const rows = targets.map((t) => {
      const rs = results.get(t) as Round[]
      const m = {
        produce: median(rs.map((x) => x.produce)),
        read: median(rs.map((x) => x.read)),
        cpu: median(rs.map((x) => x.cpuPerM)),
        busiest: median(rs.map((x) => x.busiest)),
      }
      return [
        t.name,
        fmtInt(m.produce),
        `${fmtNum(m.produce / b.produce, 2)}×`,
        fmtInt(m.read),
        `${fmtNum(m.read / b.read, 2)}×`,
        fmtNum(m.cpu, 2),
        `${fmtNum(m.cpu / b.cpu, 2)}×`,
        `${fmtNum((100 * m.busiest) / b.total, 0)} %`,
      ]
    })
    log()
    const header = [
      'target',
      'produce msgs/s',
      'vs one',
      'read msgs/s',
      'vs one',
      'server CPU s / M msgs',
      'vs one',
      'busiest server vs one',
    ]
    log(renderTable([header, ...rows], [false, true, true, true, true, true, true, true]))
  },
}

export default suite
