// Fault tests: a full disk (ENOSPC) on a real tmpfs, by bytes (size=2m) and by inodes (nr_inodes).
//
// Specified behaviour: every send on a full disk either resolves (and is then stored at its offset)
// or rejects with BackendError { code: 'ERR_DISK_FULL', retriable: true, cause.code: 'ENOSPC' };
// nothing hangs, nothing is lost, duplicated or given a reused offset, the log stays readable; once
// space returns the SAME Twain instance sends again, at the next dense offset. createTopic and
// consumer-group commits fail the same way and recover.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { open, type Consumer, type GroupMessage, type Twain } from '../../src/index.js'
import { CLEAN, check, readBack, type Acked } from '../helpers/checker.js'
import { describeErr, notDiskFull, trackUnhandled, within } from '../helpers/faults.js'
import { fillInodesLeaving, fillLeaving, freeBytes, freeInodes, mountTmpfs, type Tmpfs } from '../helpers/tmpfs.js'
import { sleep, until } from '../helpers/wait.js'

const KiB = 1024
const SEGMENT_BYTES = 8192
/** A phase (one round of sends, a read, a close) that takes longer than this is a hang. */
const PHASE_MS = 10_000
/** Rounds of sends at most (bounds a backend that keeps "succeeding" on a full disk). */
const MAX_ROUNDS = 400
/** Rounds still sent after the first rejection (what happens next on a full disk matters too). */
const ROUNDS_AFTER_FULL = 6

type Fsync = 'never' | 'batch'

/** Value `<id> <padding>`, 100..1500 bytes of padding, varying so frames end at many positions. */
const value = (id: string, seq: number) => `${id} ${'x'.repeat(100 + ((seq * 7919) % 1400))}`

interface CaseResult {
  acked: Acked[]
  rejected: number
  problems: string[]
  summary: string[]
}

/**
 * Produce into a fresh root on the mount until the disk is full (made full by `fill`), check what
 * a fresh open() reads back, give the space back (`unfill`) and send again on the same instance.
 */
async function sweepCase(
  mnt: string,
  name: string,
  fsync: Fsync,
  fill: () => string,
  unfill: () => void,
): Promise<CaseResult> {
  const root = join(mnt, name)
  const unhandled = trackUnhandled()
  const problems: string[] = []
  const summary: string[] = []
  const acked: Acked[] = []
  let rejected = 0
  let twain: Twain | undefined
  try {
    twain = await open(root, { segmentBytes: SEGMENT_BYTES, fsync })
    await twain.createTopic('t', { keyType: 'u32' })
    const p = twain.producer<string>('t')
    let seq = 0
    for (; seq < 3; seq++) {
      const id = `${name}-${seq}`
      acked.push({ id, ...(await p.send(seq, value(id, seq))) })
    }
    await sleep(30) // the writer releases its lock 2 ms after the last write: count free space without it
    summary.push(fill())

    // Produce until full (and a few rounds past it).
    let after = 0
    let round = 0
    let firstReject = ''
    let wrongShape = 0
    for (; round < MAX_ROUNDS && after < ROUNDS_AFTER_FULL; round++) {
      const n = [1, 4, 16, 2][round % 4]!
      const ids = Array.from({ length: n }, () => `${name}-${seq++}`)
      const sends = ids.map((id, i) => p.send(seq - n + i, value(id, seq - n + i)))
      let settled: PromiseSettledResult<{ partition: number; offset: number }>[]
      try {
        settled = await within(Promise.allSettled(sends), PHASE_MS, `round ${round} (${n} sends)`)
      } catch (e) {
        problems.push(`HANG: ${(e as Error).message}`)
        break
      }
      settled.forEach((s, i) => {
        if (s.status === 'fulfilled') acked.push({ id: ids[i]!, ...s.value })
        else {
          rejected++
          if (!firstReject) firstReject = `first rejection in round ${round}: ${describeErr(s.reason)}`
          const why = notDiskFull(s.reason)
          if (why) {
            wrongShape++
            if (wrongShape <= 3) problems.push(`send ${ids[i]} rejected: ${why}`)
          }
        }
      })
      if (rejected > 0) after++
    }
    summary.push(`${round} rounds, ${acked.length} acked, ${rejected} rejected; ${firstReject || 'no rejection'}`)
    if (wrongShape > 3) problems.push(`… ${wrongShape - 3} more sends rejected with the wrong error`)

    // What a fresh instance reads back.
    const reader = await open(root)
    let back
    try {
      back = await within(readBack(reader, 't'), PHASE_MS, 'readBack on a full disk')
    } finally {
      await within(reader.close(), PHASE_MS, 'reader close').catch((e) =>
        problems.push(`HANG: ${(e as Error).message}`),
      )
    }
    const r1 = check(acked, back)
    summary.push(`while full: ${r1.text}`)
    if (JSON.stringify(r1.counts) !== JSON.stringify(CLEAN))
      problems.push(`checker while full: ${JSON.stringify(r1.counts)}`)

    // Space returns: the same instance sends again, at the next dense offset.
    unfill()
    const id = `${name}-after`
    try {
      const r = await within(p.send(seq, value(id, seq)), 5_000, 'send after space returned')
      acked.push({ id, ...r })
      const end = back.offsets.find((o) => o.partition === r.partition)?.end
      if (r.offset !== end)
        problems.push(
          `send after space returned landed at ${r.partition}@${r.offset}, expected the next dense offset ${end}`,
        )
    } catch (e) {
      problems.push(`send after space returned failed: ${describeErr(e)}`)
    }
    const reader2 = await open(root)
    try {
      const back2 = await within(readBack(reader2, 't'), PHASE_MS, 'readBack after space returned')
      const r2 = check(acked, back2)
      summary.push(`after space returned: ${r2.text}`)
      if (JSON.stringify(r2.counts) !== JSON.stringify(CLEAN))
        problems.push(`checker after space returned: ${JSON.stringify(r2.counts)}`)
      const info = await twain.describeTopic('t')
      const read = back2.records.length
      const ends = info.offsets.reduce((s, o) => s + o.end - o.start, 0)
      if (ends !== read) problems.push(`describeTopic (same instance) says ${ends} messages, history read ${read}`)
    } finally {
      await within(reader2.close(), PHASE_MS, 'reader close').catch((e) =>
        problems.push(`HANG: ${(e as Error).message}`),
      )
    }
  } catch (e) {
    problems.push(`unexpected: ${describeErr(e)}`)
  } finally {
    unfill()
    if (twain)
      await within(twain.close(), PHASE_MS, 'twain.close()').catch((e) =>
        problems.push(`HANG: ${(e as Error).message}`),
      )
    await sleep(20) // let stray rejections surface
    unhandled.stop()
    for (const u of unhandled.list) problems.push(`unhandled rejection: ${u}`)
    rmSync(root, { recursive: true, force: true })
  }
  return { acked, rejected, problems, summary }
}

function expectClean(r: CaseResult): void {
  const text = [...r.summary, ...r.problems.map((p) => `PROBLEM ${p}`)].join('\n')
  expect(r.problems, text).toEqual([])
  expect(r.rejected, `the disk never filled up (no send was rejected):\n${text}`).toBeGreaterThan(0)
}

describe('disk full by bytes (tmpfs size=2m)', () => {
  let fs: Tmpfs
  let filler: string
  beforeAll(() => {
    fs = mountTmpfs({ size: '2m' })
    filler = join(fs.dir, 'filler')
  })
  afterAll(() => fs?.unmount())

  const fill = (leave: number) => () =>
    `filled: ${freeBytes(fs.dir)} bytes free before, ${fillLeaving(fs.dir, filler, leave)} after`
  const unfill = () => rmSync(filler, { force: true })

  for (const fsync of ['never', 'batch'] as const) {
    for (let k = 0; k <= 64; k += 4) {
      it(`fsync '${fsync}', ${k} KiB left: sends resolve or reject with ERR_DISK_FULL, nothing lost or reused, sending resumes`, async () => {
        expectClean(await sweepCase(fs.dir, `b-${fsync}-${k}`, fsync, fill(k * KiB), unfill))
      }, 60_000)
    }
  }

  it('createTopic on a full disk rejects with ERR_DISK_FULL, leaves no topic, and works once space returns', async () => {
    await createTopicCase(fs.dir, 'ct', () => fillLeaving(fs.dir, filler, 0), unfill)
  }, 60_000)

  it('a consumer-group commit on a full disk fails with ERR_DISK_FULL; after space returns it commits and closes in 5 s', async () => {
    await groupCommitCase(fs.dir, 'gc', () => fillLeaving(fs.dir, filler, 0), unfill)
  }, 60_000)
})

describe('disk full by inodes (tmpfs nr_inodes)', () => {
  let fs: Tmpfs
  let fillDir: string
  beforeAll(() => {
    fs = mountTmpfs({ size: '2m', nrInodes: 200 })
    fillDir = join(fs.dir, 'inode-filler')
  })
  afterAll(() => fs?.unmount())

  const fill = (leave: number) => () =>
    `inodes: ${freeInodes(fs.dir)} free before, ${fillInodesLeaving(fs.dir, fillDir, leave)} after`
  const unfill = () => rmSync(fillDir, { recursive: true, force: true })

  for (const fsync of ['never', 'batch'] as const) {
    for (let j = 0; j <= 3; j++) {
      it(`fsync '${fsync}', ${j} inodes left (lock files, new segments and index files cannot be created)`, async () => {
        expectClean(await sweepCase(fs.dir, `i-${fsync}-${j}`, fsync, fill(j), unfill))
      }, 60_000)
    }
  }

  it('createTopic with no inode left rejects with ERR_DISK_FULL, leaves no topic, and works once inodes return', async () => {
    await createTopicCase(fs.dir, 'ct', () => fillInodesLeaving(fs.dir, fillDir, 0), unfill)
  }, 60_000)

  it('a consumer-group commit with no inode left (group lock) fails with ERR_DISK_FULL; then commits and closes in 5 s', async () => {
    await groupCommitCase(fs.dir, 'gc', () => fillInodesLeaving(fs.dir, fillDir, 0), unfill)
  }, 60_000)
})

async function createTopicCase(mnt: string, name: string, fill: () => number, unfill: () => void): Promise<void> {
  const root = join(mnt, name)
  mkdirSync(root, { recursive: true })
  const unhandled = trackUnhandled()
  const twain = await open(root)
  try {
    await twain.createTopic('existing')
    const before = await twain.listTopics()
    const left = fill()
    const err = await within(
      twain.createTopic('fresh', { partitions: 3 }),
      PHASE_MS,
      'createTopic on a full disk',
    ).then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(err, `createTopic on a full disk (${left} left) resolved`).toBeDefined()
    expect(notDiskFull(err), describeErr(err)).toBeUndefined()
    expect(await twain.listTopics()).toEqual(before)
    unfill()
    await within(twain.createTopic('fresh', { partitions: 3 }), 5_000, 'createTopic after space returned')
    expect(await twain.listTopics()).toEqual([...before, 'fresh'].sort())
    const r = await within(
      twain.producer<string>('fresh').send(1, 'x', { partition: 2 }),
      5_000,
      'send to the new topic',
    )
    expect(r).toEqual({ partition: 2, offset: 0 })
    await sleep(20)
    expect(unhandled.list).toEqual([])
  } finally {
    unfill()
    unhandled.stop()
    await within(twain.close(), PHASE_MS, 'twain.close()').catch(() => undefined)
    rmSync(root, { recursive: true, force: true })
  }
}

async function groupCommitCase(mnt: string, name: string, fill: () => number, unfill: () => void): Promise<void> {
  const root = join(mnt, name)
  const unhandled = trackUnhandled()
  const twain = await open(root, { pollMs: 50 })
  let consumer: Consumer<string> | undefined
  let closed = false
  try {
    await twain.createTopic('c')
    const p = twain.producer<string>('c')
    await p.sendBatch(Array.from({ length: 20 }, (_, i) => ({ key: i, value: `c-${i}` })))

    consumer = twain.consumer<string>('c', { group: 'g', commitIntervalMs: 50 })
    const c = consumer
    const errors: unknown[] = []
    c.on('error', (e) => errors.push(e))
    const got: GroupMessage<string>[] = []
    const held: GroupMessage<string>[] = []
    const loop = (async () => {
      for await (const m of c) {
        got.push(m)
        if (got.length <= 10) m.ack()
        else held.push(m)
      }
    })().catch((e: unknown) => errors.push(e))
    const committed = async () =>
      (await twain.describeGroup('g')).topics.find((t) => t.topic === 'c' && t.partition === 0)?.committed
    await until(async () => got.length === 20 && (await committed()) === 10, 10_000, 'the first 10 messages committed')

    const left = fill()
    for (const m of held.splice(0)) m.ack()
    const commitErr = await within(c.commit(), PHASE_MS, 'commit() on a full disk').then(
      () => undefined,
      (e: unknown) => e,
    )
    await sleep(300) // background commits (every 50 ms) and heartbeats meet the full disk too
    const seen = [commitErr, ...errors].filter((e) => e !== undefined)
    const text = `space left ${left}; commit(): ${commitErr === undefined ? 'resolved' : describeErr(commitErr)}; error events: ${errors.map(describeErr).join(' | ') || 'none'}`
    expect(seen.length, `no ERR_DISK_FULL from a commit on a full disk: ${text}`).toBeGreaterThan(0)
    expect(
      seen.map(notDiskFull).filter((x) => x !== undefined),
      text,
    ).toEqual([])

    unfill()
    await within(c.commit(), 5_000, 'commit() after space returned')
    await within(c.close(), 5_000, 'consumer.close() after space returned')
    closed = true
    await loop
    const d = await twain.describeGroup('g')
    expect(d.topics.find((t) => t.topic === 'c' && t.partition === 0)).toMatchObject({ committed: 20, end: 20, lag: 0 })
    await sleep(20)
    expect(unhandled.list).toEqual([])
  } finally {
    unfill()
    unhandled.stop()
    if (consumer && !closed) await within(consumer.close(), PHASE_MS, 'consumer close').catch(() => undefined)
    await within(twain.close(), PHASE_MS, 'twain.close()').catch(() => undefined)
    rmSync(root, { recursive: true, force: true })
  }
}
