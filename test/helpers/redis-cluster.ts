/**
 * A private Redis Cluster for tests and benchmarks: `masters` × (1 + `replicas`) `redis-server`
 * processes on free loopback ports (never 6379), each with its own directory and AOF, formed with
 * `redis-cli --cluster create`. Faults: kill -9, freeze (SIGSTOP/SIGCONT), restart, manual
 * failover, slot migration (at once or key by key). Every process is stopped by its PID.
 */
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { Redis } from 'ioredis'
import { RedisServer } from './redis-server.js'
import { sleep, until } from './wait.js'

const run = promisify(execFile)

export interface RedisClusterOptions {
  /** @default 3 */
  masters?: number
  /** Replicas per master. @default 1 */
  replicas?: number
  /** `cluster-node-timeout`: how long a silent master stays master. @default 2000 */
  nodeTimeoutMs?: number
  /** AOF with `appendfsync always` on every node (false: no persistence, e.g. for benchmarks). @default true */
  aof?: boolean
  /** A password every node requires (`requirepass`, `masterauth`). */
  password?: string
  /** More `redis-server` arguments for every node. */
  args?: string[]
}

/** One line of `CLUSTER NODES`. */
export interface ClusterNodeInfo {
  id: string
  port: number
  role: 'master' | 'replica'
  /** The master's id (replicas). */
  masterId: string | undefined
  /** Flags such as `fail`, `fail?`, `myself`. */
  flags: string[]
  /** Slot ranges `[from, to]` (masters). */
  slots: Array<[number, number]>
}

function parseNodes(text: string): ClusterNodeInfo[] {
  return text
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [id, addr, flagText, master, , , , , ...slots] = line.trim().split(' ')
      const flags = (flagText ?? '').split(',')
      return {
        id: id as string,
        port: Number(/:(\d+)@/.exec(addr ?? '')?.[1] ?? 0),
        role: flags.includes('master') ? 'master' : 'replica',
        masterId: master === '-' ? undefined : master,
        flags,
        slots: slots
          .filter((s) => !s.startsWith('['))
          .map((s) => {
            const [a, b] = s.split('-').map(Number)
            return [a as number, (b ?? a) as number]
          }),
      }
    })
}

export class RedisCluster {
  private readonly admins = new Map<number, Redis>()

  private constructor(
    readonly nodes: RedisServer[],
    readonly nodeTimeoutMs: number,
    private readonly password: string | undefined,
  ) {}

  static async start(options: RedisClusterOptions = {}): Promise<RedisCluster> {
    const masters = options.masters ?? 3
    const replicas = options.replicas ?? 1
    const nodeTimeoutMs = options.nodeTimeoutMs ?? 2000
    const pw = options.password
    const auth = pw === undefined ? [] : ['--requirepass', pw, '--masterauth', pw]
    const args = [
      '--cluster-enabled',
      'yes',
      '--cluster-config-file',
      'nodes.conf',
      '--cluster-node-timeout',
      String(nodeTimeoutMs),
      '--cluster-announce-ip',
      '127.0.0.1',
      ...auth,
      ...(options.args ?? []),
    ]
    const nodes: RedisServer[] = []
    const cluster = new RedisCluster(nodes, nodeTimeoutMs, pw)
    try {
      for (let i = 0; i < masters * (1 + replicas); i++)
        nodes.push(await RedisServer.start({ aof: options.aof ?? true, args }))
      if (replicas === 0 && masters < 3) {
        // redis-cli needs 3 masters: share the slots out by hand and introduce the nodes.
        for (let i = 0; i < masters; i++) {
          const from = Math.floor((16384 * i) / masters)
          const to = Math.floor((16384 * (i + 1)) / masters) - 1
          await cluster.admin(nodes[i] as RedisServer).call('CLUSTER', 'ADDSLOTSRANGE', String(from), String(to))
        }
        for (const n of nodes.slice(1))
          await cluster.admin(nodes[0] as RedisServer).call('CLUSTER', 'MEET', '127.0.0.1', String(n.port))
      } else {
        const hosts = nodes.map((n) => `127.0.0.1:${n.port}`)
        const cliAuth = pw === undefined ? [] : ['-a', pw, '--no-auth-warning']
        await run(
          'redis-cli',
          [...cliAuth, '--cluster', 'create', ...hosts, '--cluster-replicas', String(replicas), '--cluster-yes'],
          { timeout: 30_000 },
        )
      }
      await cluster.waitHealthy()
      return cluster
    } catch (e) {
      await cluster.destroy()
      throw e
    }
  }

  /** `redis+cluster://` URL naming every node. */
  get url(): string {
    return `redis+cluster://${this.nodes.map((n) => `127.0.0.1:${n.port}`).join(',')}`
  }

  /** An admin connection to one node (commands time out instead of hanging on a frozen node). */
  admin(node: RedisServer): Redis {
    let c = this.admins.get(node.port)
    if (!c) {
      c = new Redis({
        host: '127.0.0.1',
        port: node.port,
        protocol: 2,
        ...(this.password === undefined ? {} : { password: this.password }),
        commandTimeout: 3000,
        maxRetriesPerRequest: 1,
        retryStrategy: () => 100,
        lazyConnect: false,
      })
      c.on('error', () => undefined) // a killed node: commands fail, the test decides
      this.admins.set(node.port, c)
    }
    return c
  }

  node(port: number): RedisServer {
    const n = this.nodes.find((x) => x.port === port)
    if (!n) throw new Error(`no cluster node on port ${port}`)
    return n
  }

  /** The cluster as a running node other than `exclude` sees it. */
  async topology(exclude: readonly RedisServer[] = []): Promise<ClusterNodeInfo[]> {
    for (const n of this.nodes) {
      if (!n.running || exclude.includes(n)) continue
      try {
        return parseNodes(String(await this.admin(n).call('CLUSTER', 'NODES')))
      } catch {
        /* try the next */
      }
    }
    throw new Error('no cluster node answers CLUSTER NODES')
  }

  /** Every key under `prefix` on the given masters (SCAN on each), with the master it is on. */
  async keysOn(masters: readonly RedisServer[], prefix: string): Promise<Array<{ key: string; node: RedisServer }>> {
    const out: Array<{ key: string; node: RedisServer }> = []
    for (const node of masters) {
      const admin = this.admin(node)
      let cursor = '0'
      do {
        const [next, keys] = await admin.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000)
        cursor = next
        for (const key of keys) out.push({ key, node })
      } while (cursor !== '0')
    }
    return out
  }

  /** The running masters (by the topology a live node reports). */
  async masters(exclude: readonly RedisServer[] = []): Promise<RedisServer[]> {
    return (await this.topology(exclude))
      .filter((n) => n.role === 'master' && !n.flags.some((f) => f.startsWith('fail')))
      .map((n) => this.node(n.port))
  }

  /** Whether a node answers `ROLE` as a master (a promoted replica does once it took over); false when it does not answer. */
  async saysMaster(node: RedisServer): Promise<boolean> {
    try {
      return ((await this.admin(node).call('ROLE')) as unknown[])[0] === 'master'
    } catch {
      return false
    }
  }

  /** The slot of a key. */
  async slotOf(key: string): Promise<number> {
    for (const n of this.nodes) if (n.running) return Number(await this.admin(n).call('CLUSTER', 'KEYSLOT', key))
    throw new Error('no node running')
  }

  /** The master serving `slot` now, as a node other than `exclude` sees it (undefined: none, e.g. mid-failover). */
  async servingMaster(slot: number, exclude: readonly RedisServer[] = []): Promise<RedisServer | undefined> {
    const m = (await this.topology(exclude)).find(
      (n) => n.role === 'master' && !n.flags.includes('fail') && n.slots.some(([a, b]) => slot >= a && slot <= b),
    )
    return m && this.node(m.port)
  }

  /** The master serving `slot` now. */
  async masterOf(slot: number, exclude: readonly RedisServer[] = []): Promise<RedisServer> {
    const m = await this.servingMaster(slot, exclude)
    if (!m) throw new Error(`no master serves slot ${slot}`)
    return m
  }

  /**
   * The replicas of a master, once the other nodes report at least one: right after a failover a
   * node's view may still show the promoted node as a replica (with none of its own), so an empty
   * answer is waited out (`ms`) rather than returned.
   */
  async replicasOf(master: RedisServer, ms = 20_000): Promise<RedisServer[]> {
    let found: RedisServer[] = []
    await until(
      async () => {
        const topo = await this.topology([master])
        const id = topo.find((n) => n.port === master.port)?.id
        found = topo.filter((n) => n.role === 'replica' && n.masterId === id).map((n) => this.node(n.port))
        return found.length > 0
      },
      ms,
      `a replica of node ${master.port}`,
    )
    return found
  }

  /**
   * Wait until every running node reports `cluster_state:ok` with all 16384 slots served, agrees
   * on the masters, every replica's link to its master is up and every master streams to its
   * running replicas (`state=online`).
   */
  async waitHealthy(ms = 30_000): Promise<void> {
    await until(
      async () => {
        try {
          const views = new Set<string>()
          for (const n of this.nodes) {
            if (!n.running) continue
            const info = String(await this.admin(n).call('CLUSTER', 'INFO'))
            if (!info.includes('cluster_state:ok') || !info.includes('cluster_slots_ok:16384')) return false
            const repl = String(await this.admin(n).call('INFO', 'replication'))
            if (repl.includes('role:slave') && !repl.includes('master_link_status:up')) return false
            const topo = parseNodes(String(await this.admin(n).call('CLUSTER', 'NODES')))
            if (topo.some((t) => t.flags.some((f) => f.startsWith('fail')) && this.node(t.port).running)) return false
            // A master streams to each running replica it has (not still sending it a full sync).
            const me = topo.find((t) => t.flags.includes('myself'))
            const mine = topo.filter((t) => t.role === 'replica' && t.masterId === me?.id && this.node(t.port).running)
            if (me?.role === 'master' && (repl.match(/state=online/g)?.length ?? 0) < mine.length) return false
            views.add(JSON.stringify(topo.map((t) => [t.port, t.role, t.masterId, t.slots]).sort()))
          }
          return views.size === 1 // every node sees the same roles and slots
        } catch {
          return false
        }
      },
      ms,
      'a healthy cluster',
    )
  }

  /** Manual failover: `replica` becomes its master's master (`FORCE` when the master is down). */
  async failover(replica: RedisServer, mode: 'default' | 'FORCE' | 'TAKEOVER' = 'default'): Promise<void> {
    await this.admin(replica).call('CLUSTER', 'FAILOVER', ...(mode === 'default' ? [] : [mode]))
    await until(
      async () => String(await this.admin(replica).call('ROLE')).startsWith('master'),
      20_000,
      `node ${replica.port} to become master`,
    )
    // Every node agrees on the new roles (and the old master syncs as a replica) before the next step.
    await this.waitHealthy()
  }

  /**
   * Move `slot` to `target` (a master): keys are migrated `batch` at a time with `pauseMs` between
   * batches (a slow migration leaves the slot half moved for a while), then every master is told.
   * `hold` is awaited once the migration is open and once every key moved, before the slot is handed over.
   */
  async migrateSlot(
    slot: number,
    target: RedisServer,
    options: { batch?: number; pauseMs?: number; hold?: (stage: 'opened' | 'moved') => Promise<void> } = {},
  ): Promise<void> {
    const source = await this.masterOf(slot)
    if (source === target) return
    const topo = await this.topology()
    const id = (n: RedisServer): string => topo.find((t) => t.port === n.port)?.id as string
    await this.admin(target).call('CLUSTER', 'SETSLOT', String(slot), 'IMPORTING', id(source))
    await this.admin(source).call('CLUSTER', 'SETSLOT', String(slot), 'MIGRATING', id(target))
    await options.hold?.('opened') // the migration is open, no key moved yet
    for (;;) {
      const keys = (await this.admin(source).call(
        'CLUSTER',
        'GETKEYSINSLOT',
        String(slot),
        String(options.batch ?? 100),
      )) as string[]
      if (keys.length === 0) break
      await this.admin(source).call('MIGRATE', '127.0.0.1', String(target.port), '', '0', '10000', 'KEYS', ...keys)
      if (options.pauseMs) await sleep(options.pauseMs)
    }
    await options.hold?.('moved') // every key moved, the slot still the source's
    for (const m of [target, source, ...(await this.masters()).filter((n) => n !== target && n !== source)]) {
      await this.admin(m).call('CLUSTER', 'SETSLOT', String(slot), 'NODE', id(target))
    }
  }

  /** Stop every node (thawing frozen ones) and remove their directories. */
  async destroy(): Promise<void> {
    for (const c of this.admins.values()) c.disconnect()
    this.admins.clear()
    await Promise.all(this.nodes.map((n) => n.destroy()))
  }
}
