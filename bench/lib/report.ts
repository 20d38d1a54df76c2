import { spawnSync } from 'node:child_process'
import { availableParallelism, cpus, loadavg, release, totalmem } from 'node:os'
import { repoRoot } from './child.js'
import { MiB, fmtInt } from './stats.js'
import { renderTable } from './table.js'

/** Print one line of a suite's report. */
export function log(line = ''): void {
  process.stdout.write(line + '\n')
}

/** A `size`-byte ASCII value (so bytes = characters), not one repeated character; the python3 script uses the same. */
export function makeValue(size: number): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'
  let s = ''
  for (let i = 0; i < size; i++) s += alphabet[(i * 7) % alphabet.length]
  return s
}

/** The source revision a run measured (and whether src/ had uncommitted changes). */
export function revision(): string {
  const git = (args: string[]) => {
    const r = spawnSync('git', args, { cwd: repoRoot, encoding: 'utf8' })
    return r.status === 0 ? r.stdout.trim() : undefined
  }
  const head = git(['rev-parse', '--short', 'HEAD'])
  if (head === undefined) return 'unknown (not a git checkout)'
  const dirty = (git(['status', '--porcelain', '--', 'src']) ?? '').split('\n').filter(Boolean).length
  return dirty ? `${head} + ${dirty} uncommitted file(s) under src/` : `${head} (src/ clean)`
}

/** Node version, CPUs, memory and OS of this machine. */
export function machine(): string {
  const cpu = cpus()[0]?.model ?? 'unknown cpu'
  return `node ${process.version}, ${availableParallelism()} cpus (${cpu}), ${fmtInt(totalmem() / MiB)} MiB RAM, ${process.platform} ${release()}`
}

/** The opening lines of a suite's report: its title, the command, date, machine with its load, and source. */
export function logRunHeader(suite: string, command: string): void {
  log(`twainmq bench: ${suite}`)
  log(`command: ${command}`)
  log(`date:    ${new Date().toISOString()}`)
  log(
    `machine: ${machine()}, load average ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
  )
  log(`source:  ${revision()}`)
}

/** A suite's goals as a table: each goal, PASS or FAIL, and what was measured. */
export function logGoals(goals: ReadonlyArray<readonly [string, boolean, string]>): void {
  log('goals:')
  log(
    renderTable(
      [['goal', 'result', 'measured'], ...goals.map(([g, ok, m]) => [g, ok ? 'PASS' : 'FAIL', m])],
      [false, false, false],
    ),
  )
}
