// Model-based test of partitioned consumer groups (DESIGN §3.6): random interleavings of produce,
// poll, ack, nack, join, leave, crash-ish close, commit and rebalance over several members (each its
// own Twain instance on one directory). Laws:
//  - a group's committed offset never moves backwards and never passes a message nobody acked;
//  - first deliveries to a member are consecutive (+1) within one ownership of a partition;
//  - once members keep running, every produced message is acked by some member and the group ends
//    with committed = end on every partition.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { FencedError, open, type Consumer, type GroupMessage, type Twain } from '../src/index.js'
import { makeTmp, rmTmp } from '../test/unit/helpers.js'
import { sleep } from '../test/helpers/wait.js'

const PARTITIONS = 2
const SLOTS = 3
const OPTS = { group: 'g', sessionTimeoutMs: 2000, heartbeatIntervalMs: 100, commitIntervalMs: 50, drainTimeoutMs: 100 }

interface Model {
  produced: number[]
  live: boolean[]
}

interface Slot {
  twain: Twain
  consumer: Consumer<string>
  held: GroupMessage<string>[]
  /** partition → next offset expected for a first delivery (undefined right after an assignment). */
  expectNext: Map<number, number | undefined>
}

class Real {
  slots: Array<Slot | undefined> = new Array<Slot | undefined>(SLOTS).fill(undefined)
  producer!: Twain
  /** `${p}@${o}` acked by some member while it owned the partition. */
  acked = new Set<string>()
  committedMax: number[] = new Array<number>(PARTITIONS).fill(0)
  violations: string[] = []
  errors: Error[] = []
  constructor(readonly dir: string) {}

  async join(i: number): Promise<void> {
    const twain = await open(this.dir, { pollMs: 50 })
    const consumer = twain.consumer<string>('t', OPTS)
    const slot: Slot = { twain, consumer, held: [], expectNext: new Map() }
    consumer.on('assigned', (tps) => tps.forEach((tp) => slot.expectNext.set(tp.partition, undefined)))
    consumer.on('revoked', (tps) => tps.forEach((tp) => slot.expectNext.set(tp.partition, undefined)))
    consumer.on('error', (e) => {
      if (!(e instanceof FencedError)) this.errors.push(e)
    })
    this.slots[i] = slot
    await consumer.rebalance() // joined (and owns whatever was free) before the next command
    await sleep(20)
  }

  poll(i: number, n: number): void {
    const s = this.slots[i]
    if (!s) return
    for (const m of s.consumer.pollMany(n)) {
      if (m.deliveryCount === 1) {
        const want = s.expectNext.get(m.partition)
        if (want !== undefined && want !== m.offset)
          this.violations.push(`member ${i}: first delivery of ${m.partition}@${m.offset} after ${want - 1}`)
        s.expectNext.set(m.partition, m.offset + 1)
      }
      s.held.push(m)
    }
  }

  settle(i: number, k: number, how: 'ack' | 'nack'): void {
    const s = this.slots[i]
    if (!s || s.held.length === 0) return
    const [m] = s.held.splice(k % s.held.length, 1) as [GroupMessage<string>]
    if (how === 'nack') return m.nack()
    const owns = s.consumer.assignments().some((a) => a.partition === m.partition)
    m.ack()
    if (owns) this.acked.add(`${m.partition}@${m.offset}`)
  }

  async close(i: number, graceful: boolean): Promise<void> {
    const s = this.slots[i]
    if (!s) return
    this.slots[i] = undefined
    if (graceful) for (const m of s.held.splice(0)) this.settleMessage(s, m)
    await s.twain.close()
  }

  private settleMessage(s: Slot, m: GroupMessage<string>): void {
    const owns = s.consumer.assignments().some((a) => a.partition === m.partition)
    m.ack()
    if (owns) this.acked.add(`${m.partition}@${m.offset}`)
  }

  async checkCommits(): Promise<void> {
    const d = await this.producer.describeGroup('g').catch(() => undefined)
    if (!d) return
    for (const t of d.topics) {
      const p = t.partition
      if (t.committed < (this.committedMax[p] as number))
        this.violations.push(`partition ${p}: committed moved back from ${this.committedMax[p]} to ${t.committed}`)
      for (let o = this.committedMax[p] as number; o < t.committed; o++) {
        if (!this.acked.has(`${p}@${o}`))
          this.violations.push(`partition ${p}: committed ${t.committed} passes un-acked offset ${o}`)
      }
      this.committedMax[p] = Math.max(this.committedMax[p] as number, t.committed)
    }
  }
}

type Cmd = fc.AsyncCommand<Model, Real>

class Produce implements Cmd {
  constructor(
    readonly p: number,
    readonly n: number,
  ) {}
  check = () => true
  async run(m: Model, r: Real) {
    const base = m.produced[this.p] as number
    await r.producer
      .producer<string>('t')
      .sendBatch(
        Array.from({ length: this.n }, (_, i) => ({ key: i, value: `${this.p}:${base + i}`, partition: this.p })),
      )
    m.produced[this.p] = base + this.n
  }
  toString = () => `produce(${this.p}, ${this.n})`
}

class Join implements Cmd {
  constructor(readonly i: number) {}
  check = (m: Readonly<Model>) => !m.live[this.i]
  async run(m: Model, r: Real) {
    await r.join(this.i)
    m.live[this.i] = true
  }
  toString = () => `join(${this.i})`
}

class Leave implements Cmd {
  constructor(
    readonly i: number,
    readonly graceful: boolean,
  ) {}
  check = (m: Readonly<Model>) => !!m.live[this.i]
  async run(m: Model, r: Real) {
    await r.close(this.i, this.graceful)
    m.live[this.i] = false
    await r.checkCommits()
  }
  toString = () => `${this.graceful ? 'leave' : 'crash'}(${this.i})`
}

class Poll implements Cmd {
  constructor(
    readonly i: number,
    readonly n: number,
  ) {}
  check = (m: Readonly<Model>) => !!m.live[this.i]
  async run(_m: Model, r: Real) {
    r.poll(this.i, this.n)
  }
  toString = () => `poll(${this.i}, ${this.n})`
}

class Settle implements Cmd {
  constructor(
    readonly i: number,
    readonly k: number,
    readonly how: 'ack' | 'nack',
  ) {}
  check = (m: Readonly<Model>) => !!m.live[this.i]
  async run(_m: Model, r: Real) {
    r.settle(this.i, this.k, this.how)
  }
  toString = () => `${this.how}(${this.i}, ${this.k})`
}

class Commit implements Cmd {
  constructor(readonly i: number) {}
  check = (m: Readonly<Model>) => !!m.live[this.i]
  async run(_m: Model, r: Real) {
    await r.slots[this.i]?.consumer.commit().catch((e: unknown) => {
      if (!(e instanceof FencedError)) throw e
    })
    await r.checkCommits()
  }
  toString = () => `commit(${this.i})`
}

class Rebalance implements Cmd {
  constructor(readonly i: number) {}
  check = (m: Readonly<Model>) => !!m.live[this.i]
  async run(_m: Model, r: Real) {
    await r.slots[this.i]?.consumer.rebalance()
  }
  toString = () => `rebalance(${this.i})`
}

class Wait implements Cmd {
  constructor(readonly ms: number) {}
  check = () => true
  async run(_m: Model, r: Real) {
    await sleep(this.ms)
    await r.checkCommits()
  }
  toString = () => `wait(${this.ms})`
}

// member slots, slot 0 most often (commands aimed at an empty slot are skipped)
const slot = fc.oneof(fc.constant(0), fc.constant(0), fc.constant(0), fc.integer({ min: 1, max: SLOTS - 1 }))
const w = <T>(weight: number, arbitrary: fc.Arbitrary<T>) => ({ weight, arbitrary })
const commands = [
  fc.oneof(
    w(
      4,
      fc
        .tuple(fc.integer({ min: 0, max: PARTITIONS - 1 }), fc.integer({ min: 1, max: 10 }))
        .map(([p, n]) => new Produce(p, n) as Cmd),
    ),
    w(
      3,
      slot.map((i) => new Join(i) as Cmd),
    ),
    w(
      2,
      fc.tuple(slot, fc.boolean()).map(([i, g]) => new Leave(i, g) as Cmd),
    ),
    w(
      5,
      fc.tuple(slot, fc.integer({ min: 1, max: 5 })).map(([i, n]) => new Poll(i, n) as Cmd),
    ),
    w(
      5,
      fc.tuple(slot, fc.nat(20)).map(([i, k]) => new Settle(i, k, 'ack') as Cmd),
    ),
    w(
      3,
      fc.tuple(slot, fc.nat(20)).map(([i, k]) => new Settle(i, k, 'nack') as Cmd),
    ),
    w(
      1,
      slot.map((i) => new Commit(i) as Cmd),
    ),
    w(
      1,
      slot.map((i) => new Rebalance(i) as Cmd),
    ),
    w(
      2,
      fc.integer({ min: 20, max: 150 }).map((ms) => new Wait(ms) as Cmd),
    ),
  ),
]

async function finish(m: Model, r: Real): Promise<void> {
  // members keep running: make sure one is live, then poll and ack everything until all is committed
  if (!r.slots.some(Boolean)) await r.join(0)
  const deadline = Date.now() + 10_000
  for (;;) {
    for (let i = 0; i < SLOTS; i++) {
      const s = r.slots[i]
      if (!s) continue
      r.poll(i, 1000)
      while (s.held.length) r.settle(i, 0, 'ack')
    }
    await r.checkCommits()
    const d = (await r.producer.describeGroup('g').catch(() => undefined)) ?? { topics: [] }
    if (d.topics.length === PARTITIONS && d.topics.every((t) => t.committed === m.produced[t.partition])) break
    if (Date.now() > deadline) {
      throw new Error(
        `not everything was committed: ${JSON.stringify(d.topics)} produced ${JSON.stringify(m.produced)}`,
      )
    }
    await sleep(20)
  }
  expect(r.violations).toEqual([])
  for (let p = 0; p < PARTITIONS; p++) {
    for (let o = 0; o < (m.produced[p] as number); o++) expect(r.acked.has(`${p}@${o}`), `${p}@${o} acked`).toBe(true)
  }
  // any plain reader of the partitions sees offsets 0, 1, 2, … (each +1)
  for (let p = 0; p < PARTITIONS; p++) {
    const offs: number[] = []
    for await (const msg of r.producer.history<string>('t', { partition: p })) offs.push(msg.offset)
    expect(offs).toEqual(Array.from({ length: m.produced[p] as number }, (_, i) => i))
  }
}

describe('consumer groups: model-based', () => {
  it('never commits backwards or past an un-acked message, and eventually acks everything', async () => {
    await fc.assert(
      fc.asyncProperty(fc.commands(commands, { maxCommands: 40, size: 'large' }), async (cmds) => {
        const dir = makeTmp()
        const r = new Real(dir)
        r.producer = await open(dir, { pollMs: 50 })
        try {
          await r.producer.createTopic('t', { partitions: PARTITIONS })
          const model: Model = {
            produced: new Array<number>(PARTITIONS).fill(0),
            live: new Array<boolean>(SLOTS).fill(false),
          }
          await fc.asyncModelRun(() => ({ model, real: r }), cmds)
          await finish(model, r)
          expect(r.violations).toEqual([])
          expect(r.errors.map((e) => e.message)).toEqual([])
        } finally {
          for (let i = 0; i < SLOTS; i++) await r.close(i, false).catch(() => undefined)
          await r.producer.close().catch(() => undefined)
          rmTmp(dir)
        }
      }),
      { numRuns: 40, interruptAfterTimeLimit: 35_000 },
    )
  }, 90_000)
})
