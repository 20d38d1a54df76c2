/*
 * `npm run bench -- groups`: consumer-group overhead on the file backend, in one run.
 *
 *   a. history: one process reads the whole log with `for await (twain.history(topic))` (the baseline)
 *   b. group:   three member processes of one group consume and ack the same log (6 partitions)
 *   c. failover: with messages flowing, one member is SIGKILLed; time until its partitions are
 *      owned by the survivors, and until a message sent to one of them after the kill is consumed
 *   d. join:    a member joining an idle group: time until it owns partitions
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { open, type Twain } from '../../src/index.js'
import { log } from '../lib/report.js'
import { benchDir, repoRoot } from '../lib/child.js'
import { fmtInt, fmtNum, sleep } from '../lib/stats.js'
import type { Suite, SuiteOptions } from '../lib/suite.js'
import { renderTable } from '../lib/table.js'
import { makeTempDir, removeTempDir } from '../lib/tmp.js'

const PARTITIONS = 6
const MEMBERS = 3
const SESSION_TIMEOUT_MS = 10_000

type MemberMsg = { type: 'ready' } | { type: 'assigned'; partitions: number[] } | { type: 'progress'; acked: number }

interface Member {
  proc: ChildProcess
  acked: number
  assigned: number[]
  ready: Promise<void>
  exited: Promise<unknown>
}

function startMember(root: string, group: string, name: string): Member {
  const proc = spawn(
    process.execPath,
    ['--import', 'tsx', join(benchDir, 'children', 'group-member.ts'), root, 'jobs', group, name],
    {
      cwd: repoRoot,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    },
  )
  const m: Member = {
    proc,
    acked: 0,
    assigned: [],
    ready: Promise.resolve(),
    exited: new Promise((r) => proc.once('exit', r)),
  }
  m.ready = new Promise((resolve) => {
    proc.on('message', (msg: MemberMsg) => {
      if (msg.type === 'ready') resolve()
      else if (msg.type === 'assigned') m.assigned.push(...msg.partitions)
      else if (msg.type === 'progress') m.acked = msg.acked
    })
  })
  return m
}

async function until(check: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<number> {
  const t0 = performance.now()
  while (!(await check())) {
    if (performance.now() - t0 > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await sleep(5)
  }
  return performance.now() - t0
}

async function produce(twain: Twain, n: number, value: string): Promise<void> {
  const p = twain.producer<string>('jobs')
  for (let i = 0; i < n; i += 1000) {
    await p.sendBatch(
      Array.from({ length: Math.min(1000, n - i) }, (_, j) => ({ key: i + j, value, partition: (i + j) % PARTITIONS })),
    )
  }
}

async function readHistory(twain: Twain, n: number): Promise<number> {
  const t0 = performance.now()
  let seen = 0
  for await (const m of twain.history<string>('jobs')) if (m.value.length >= 0) seen++
  if (seen !== n) throw new Error(`history read ${seen} of ${n}`)
  return (performance.now() - t0) / 1000
}

async function consumeWithGroup(root: string, twain: Twain, group: string, n: number): Promise<number> {
  const members = Array.from({ length: MEMBERS }, (_, i) => startMember(root, group, `m${i}`))
  try {
    await Promise.all(members.map((m) => m.ready))
    // Let the group settle: every partition owned, counts balanced.
    await until(
      async () => {
        const g = await twain.describeGroup(group).catch(() => undefined)
        return (
          !!g && g.members.length === MEMBERS && g.members.every((x) => x.assignments.length === PARTITIONS / MEMBERS)
        )
      },
      20_000,
      'a balanced group',
    )
    const t0 = performance.now()
    for (const m of members) m.proc.send('go')
    await until(() => members.reduce((s, m) => s + m.acked, 0) >= n, 600_000, 'all messages acked')
    return (performance.now() - t0) / 1000
  } finally {
    for (const m of members) m.proc.kill('SIGTERM')
    await Promise.all(members.map((m) => m.exited))
  }
}

async function failover(root: string, twain: Twain): Promise<{ reassignMs: number; consumeMs: number }> {
  const group = 'failover'
  const members = Array.from({ length: MEMBERS }, (_, i) => startMember(root, group, `f${i}`))
  try {
    await Promise.all(members.map((m) => m.ready))
    for (const m of members) m.proc.send('go')
    await until(
      async () => {
        const g = await twain.describeGroup(group).catch(() => undefined)
        return (
          !!g && g.members.length === MEMBERS && g.members.every((x) => x.assignments.length === PARTITIONS / MEMBERS)
        )
      },
      20_000,
      'a balanced group',
    )
    const g = await twain.describeGroup(group)
    const victim = members[0] as Member
    const victimParts = (g.members.find((x) => x.name === 'f0')?.assignments ?? []).map((a) => a.partition)
    const before = members.slice(1).reduce((s, m) => s + m.acked, 0)
    victim.proc.kill('SIGKILL')
    const killedAt = performance.now()
    // One message to each of the victim's partitions, sent right after the kill.
    const p = twain.producer<string>('jobs')
    await Promise.all(victimParts.map((partition) => p.send(partition, 'after-kill', { partition })))
    const reassignMs = await until(
      async () => {
        const d = await twain.describeGroup(group)
        return (
          d.members.length === MEMBERS - 1 &&
          victimParts.every((vp) => d.members.some((x) => x.assignments.some((a) => a.partition === vp)))
        )
      },
      SESSION_TIMEOUT_MS + 30_000,
      'reassignment',
    )
    await until(
      () => members.slice(1).reduce((s, m) => s + m.acked, 0) >= before + victimParts.length,
      SESSION_TIMEOUT_MS + 30_000,
      'post-kill messages consumed',
    )
    return { reassignMs, consumeMs: performance.now() - killedAt }
  } finally {
    for (const m of members) m.proc.kill('SIGTERM')
    await Promise.all(members.map((m) => m.exited))
  }
}

async function joinIdle(twain: Twain): Promise<number> {
  const t0 = performance.now()
  const c = twain.consumer('jobs', { group: `idle-${Date.now()}`, from: 'end' })
  await until(() => c.assignments().length === PARTITIONS, 10_000, 'assignment of a joining member')
  const ms = performance.now() - t0
  await c.close()
  return ms
}

async function run(opts: SuiteOptions): Promise<void> {
  const n = Math.min(opts.messages, 600_000)
  const value = 'v'.repeat(opts.size)
  log('twainmq bench: groups')
  log(`command: ${opts.command}`)
  log(
    `date:    ${new Date().toISOString()}, load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  )
  log(
    `setup:   ${fmtInt(n)} messages of ${opts.size} B on ${PARTITIONS} partitions; group of ${MEMBERS} member processes (commit every 200 ms, maxInFlight 1000); ${opts.repeat} round(s), median reported`,
  )
  const root = makeTempDir('groups')
  const twain = await open(root)
  try {
    await twain.createTopic('jobs', { partitions: PARTITIONS, keyType: 'u32' })
    await produce(twain, n, value)
    const hist: number[] = []
    const grp: number[] = []
    for (let r = 1; r <= opts.repeat; r++) {
      hist.push(await readHistory(twain, n))
      grp.push(await consumeWithGroup(root, twain, `bench-${r}`, n))
      log(
        `  round ${r}: history ${fmtInt(n / (hist[r - 1] as number))} msgs/s, group ${fmtInt(n / (grp[r - 1] as number))} msgs/s`,
      )
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[(xs.length - 1) >> 1] as number
    const h = n / median(hist)
    const g = n / median(grp)
    const fo = await failover(root, twain)
    const join = await joinIdle(twain)
    log('')
    log(
      renderTable(
        [
          ['phase', 'msgs/s', 'ours / history'],
          ['a. history (1 process)', fmtInt(h), '(baseline)'],
          [`b. group consume+ack (${MEMBERS} processes)`, fmtInt(g), `${fmtNum(g / h)}×`],
        ],
        [false, true, true],
      ),
    )
    log('')
    log(
      renderTable(
        [
          ['event', 'ms'],
          ['c. SIGKILL → partitions reassigned', fmtNum(fo.reassignMs, 0)],
          ['c. SIGKILL → message sent after the kill consumed', fmtNum(fo.consumeMs, 0)],
          ['d. join of an idle group → partitions owned', fmtNum(join, 0)],
        ],
        [false, true],
      ),
    )
    log('')
    const goals: Array<[string, boolean, string]> = [
      ['group consume+ack ≥ 0.5× history', g >= 0.5 * h, `${fmtNum(g / h)}×`],
      [
        `failover within sessionTimeoutMs + 1 s (${SESSION_TIMEOUT_MS + 1000} ms)`,
        fo.consumeMs <= SESSION_TIMEOUT_MS + 1000,
        `${fmtNum(fo.consumeMs, 0)} ms`,
      ],
      ['join of an idle group < 1 s', join < 1000, `${fmtNum(join, 0)} ms`],
    ]
    log('goals:')
    log(renderTable([['goal', 'result', 'measured'], ...goals.map(([x, ok, m]) => [x, ok ? 'PASS' : 'MISS', m])]))
  } finally {
    await twain.close()
    removeTempDir(root)
  }
}

const suite: Suite = {
  name: 'groups',
  description: 'consumer groups: 3-member consume+ack vs history read, failover after SIGKILL, join time',
  run,
}
export default suite
