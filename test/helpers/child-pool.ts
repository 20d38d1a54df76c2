// The children of a kill -9 storm (processor-chaos, state-chaos): started from one script, one of
// them killed with SIGKILL at a time (one that has worked, if any), the pool topped up to a size.
import type { ChildProcess } from 'node:child_process'
import { exited, lines, spawnChild } from './spawn.js'

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

  /** SIGKILL one running child (a working one if any works), and wait for its exit. */
  async killOne(): Promise<void> {
    const live = this.all.filter(running)
    const pool = live.filter(working).length > 0 ? live.filter(working) : live
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
