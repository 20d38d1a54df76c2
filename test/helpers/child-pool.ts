// The children of a kill -9 storm (the storms of test/chaos and test/faults): started from one script, one of
// them killed with SIGKILL at a time (one that has worked, if any), the pool topped up to a size;
// the storm itself, the pace of the inputs written meanwhile, and the end of a storm.
import type { ChildProcess } from 'node:child_process'
import { afterEach } from 'vitest'
import type { Twain } from '../../src/index.js'
import { exited, killChildren, lines, spawnChild } from './spawn.js'
import { sleep, until } from './wait.js'

/** Kills of children that had worked: a storm's inputs go on until there were this many. */
export const MIN_WORKING_KILLS = 4
/** Most storm rounds (1–3 s each). */
export const MAX_ROUNDS = 60

/**
 * A chaos test file's children and cleanups: after each test, every child still running is
 * killed, then the cleanups run, last first (call once, at the top of the file).
 */
export function chaosFixture(): { children: ChildProcess[]; cleanups: Array<() => Promise<void> | void> } {
  const children: ChildProcess[] = []
  const cleanups: Array<() => Promise<void> | void> = []
  afterEach(async () => {
    await killChildren(children)
    for (const c of cleanups.splice(0).reverse()) await c()
  })
  return { children, cleanups }
}

/** Wait until `sent` inputs are due at `rate` per second since `t0` (`performance.now()`): the pace of a storm's inputs, not a synchronisation. */
export async function pace(t0: number, sent: number, rate: number): Promise<void> {
  const ahead = t0 + (sent * 1000) / rate - performance.now()
  if (ahead > 0) await sleep(ahead)
}

/** A `storm` for as long as `work` (the inputs being written) runs, then `work` awaited: a failed write fails the test there. */
export async function stormWhile(pool: ChildPool, work: Promise<unknown>, maxRounds = MAX_ROUNDS): Promise<void> {
  let going = true
  void work.then(
    () => (going = false),
    () => (going = false),
  )
  await storm(pool, () => going, maxRounds)
  await work
}

/** A child of the pool. */
export interface PoolChild {
  name: string
  child: ChildProcess
  out: { lines: string[]; stderr: () => string }
  killed: boolean
}

/** It printed `# working` (it handled a message). */
export const working = (p: PoolChild): boolean => p.out.lines.includes('# working')
/** Not killed, not exited. */
export const running = (p: PoolChild): boolean => !p.killed && p.child.exitCode === null && p.child.signalCode === null

export class ChildPool {
  readonly all: PoolChild[] = []
  /** Kills so far, and how many of them were of working children. */
  kills = 0
  workingKills = 0

  constructor(
    private readonly script: string,
    private readonly args: string[],
    /** Every child started is added here (the test's afterEach kills what is left). */
    private readonly children: ChildProcess[],
  ) {}

  start(): PoolChild {
    const child = spawnChild(this.script, this.args)
    this.children.push(child)
    const p: PoolChild = { name: `P${this.all.length}`, child, out: lines(child), killed: false }
    this.all.push(p)
    return p
  }

  /**
   * SIGKILL one running child (a working one if any works; with `onlyWorking`, none if none works),
   * and wait for its exit.
   */
  async killOne(onlyWorking = false): Promise<void> {
    const live = this.all.filter(running)
    const pool = live.filter(working).length > 0 || onlyWorking ? live.filter(working) : live
    const victim = pool[Math.floor(Math.random() * pool.length)]
    if (!victim) return
    if (working(victim)) this.workingKills++
    this.kills++
    await this.kill(victim)
  }

  /** Start children until `size` run. */
  topUp(size: number): void {
    while (this.all.filter(running).length < size) this.start()
  }

  /** SIGKILL every running child. */
  async killAll(): Promise<void> {
    for (const p of this.all.filter(running)) await this.kill(p)
  }

  /** The lines of every child that start with `prefix`. */
  linesStarting(prefix: string): string[] {
    return this.all.flatMap((p) => p.out.lines.filter((l) => l.startsWith(prefix)))
  }

  private async kill(p: PoolChild): Promise<void> {
    p.killed = true
    p.child.kill('SIGKILL')
    await exited(p.child)
  }
}

/**
 * A storm over `pool`: every 1–3 s one child that has worked is killed (SIGKILL; every fourth
 * round any child, one still starting or restoring included) and the pool topped up to 1 or 2
 * (two in turn, so rebalances happen), while `more()`, at most `maxRounds` rounds. Each round
 * first waits for a child that works: children slow to start on a loaded machine are killed once
 * they work, rather than again and again before.
 */
export async function storm(pool: ChildPool, more: () => boolean, maxRounds: number): Promise<void> {
  if (pool.all.filter(running).length === 0) pool.start()
  for (let round = 0; more() && round < maxRounds; round++) {
    // A child works before each round's wait: on a loaded machine a start (and a restore) takes
    // longer than a round, and kills of children that never got to work test nothing.
    await until(() => !more() || pool.all.some((p) => running(p) && working(p)), 120_000, 'a child to work').catch(
      (e: Error) => {
        const live = pool.all.filter(running)
        throw new Error(
          `${e.message} (round ${round}; running: ${live.map((p) => `${p.name} [${p.out.lines.slice(-4).join(' | ')}] ${p.out.stderr().slice(-400)}`).join('; ')})`,
        )
      },
    )
    if (!more()) break
    await sleep(1000 + Math.random() * 2000)
    await pool.killOne(round % 4 !== 3)
    pool.topUp(round % 4 >= 2 ? 2 : 1)
  }
}

/**
 * The end of a storm: every child killed, then one started that runs until the group `group`
 * committed `ends` (end offset per partition of its topic); then SIGTERM. Resolves with its exit code.
 */
export async function drainWithOne(
  pool: ChildPool,
  twain: Twain,
  group: string,
  ends: Map<number, number>,
  partitions: number,
): Promise<number | string> {
  let seen = ''
  return drainUntil(
    pool,
    async () => {
      const d = await twain.describeGroup(group)
      seen = d.topics.map((t) => `${t.partition}: ${t.committed}/${t.end}`).join(', ')
      return d.topics.length === partitions && d.topics.every((t) => t.committed === (ends.get(t.partition) ?? 0))
    },
    `group ${group} to commit every input`,
    () => `group ${seen}`,
  )
}

/**
 * The end of a storm: every child killed, then one started that runs until `done()` holds (polled;
 * `shown()` says what it saw when it times out); then SIGTERM. Resolves with its exit code.
 */
export async function drainUntil(
  pool: ChildPool,
  done: () => Promise<boolean>,
  what: string,
  shown: () => string,
): Promise<number | string> {
  await pool.killAll()
  const last = pool.start()
  await until(done, 120_000, what).catch((e: Error) => {
    throw new Error(`${e.message}; ${shown()}; last: ${last.out.lines.slice(-5).join(' | ')} ${last.out.stderr()}`)
  })
  await until(() => last.out.lines.some((l) => l.startsWith('# started')), 60_000, 'the last child to start')
  last.child.kill('SIGTERM')
  return exited(last.child)
}
