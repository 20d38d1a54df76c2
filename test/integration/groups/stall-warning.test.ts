// No silent stall (DESIGN §3.12): a member that holds `maxInFlight` messages, acking or terming
// none, for `stallWarningMs` while the application waits for more emits 'error' with a
// StalledError (ERR_STALLED) naming what it holds and `maxInFlight`: once per stall, again only
// after a settlement and a new stall; never while messages are settled slowly but steadily, nor
// when there is nothing to read. Without a listener it is a process warning, as every background
// failure is.
import { afterEach, describe, expect, it } from 'vitest'
import { InvalidArgumentError, StalledError, type GroupMessage } from '../../../src/index.js'
import { everyStore } from '../../conformance/backends.js'
import { sleep, until } from '../../helpers/wait.js'
import { FAST, fill, pollN, twain, useGroupStore } from './groups-fixtures.js'

/** Every 'error' a member emits, and a way to wait for the n-th. */
function errorsOf(c: { on(e: 'error', l: (err: Error) => void): () => void }): Error[] {
  const errors: Error[] = []
  c.on('error', (e) => errors.push(e))
  return errors
}

const stalls = (errors: Error[]) => errors.filter((e) => e instanceof StalledError)

/** Take `n` messages from an iteration, settling none. */
async function hold<M>(it: AsyncIterator<M>, n: number): Promise<M[]> {
  const out: M[] = []
  while (out.length < n) {
    const r = await it.next()
    if (r.done) throw new Error(`the iteration ended after ${out.length} of ${n} messages`)
    out.push(r.value)
  }
  return out
}

/**
 * Take `n` more messages of `member` through `it`, settling none, and wait for more: the stall it
 * then reports (its first since this call).
 */
async function stallAt<M>(
  member: { on(e: 'error', l: (err: Error) => void): () => void },
  it: AsyncIterator<M>,
  n: number,
): Promise<StalledError> {
  const errors = errorsOf(member)
  await hold(it, n)
  void it.next() // nothing more can be fetched
  await until(() => stalls(errors).length === 1, 10_000, 'an ERR_STALLED error')
  return stalls(errors)[0] as StalledError
}

describe.each(everyStore())('stall warning on $name', (kind) => {
  useGroupStore(kind)
  const timers: NodeJS.Timeout[] = []
  afterEach(() => timers.splice(0).forEach((t) => clearInterval(t)))

  it('a consumer holding maxInFlight unsettled messages while its loop waits for more reports ERR_STALLED once per stall', async () => {
    await twain.createTopic('t')
    await fill('t', 0, 30)
    const c = twain.consumer<string>('t', { group: 'g', ...FAST, maxInFlight: 5, stallWarningMs: 200 })
    const errors = errorsOf(c)
    const it = c[Symbol.asyncIterator]()
    const first = await hold(it, 5)
    const sixth = it.next() // the loop waits for more: nothing can be fetched
    await until(() => stalls(errors).length === 1, 10_000, 'an ERR_STALLED error')
    const e = stalls(errors)[0] as StalledError
    expect(e.code).toBe('ERR_STALLED')
    expect(e).toMatchObject({ held: 5, maxInFlight: 5 })
    expect(e.stalledMs).toBeGreaterThanOrEqual(200)
    expect(e.message).toMatch(/holds 5 messages \(maxInFlight 5\)/)
    expect(e.message).toMatch(/raise maxInFlight/)
    await sleep(800) // the same stall, four times stallWarningMs later: still reported once
    expect(stalls(errors)).toHaveLength(1)
    // Progress, then a new stall: reported again.
    for (const m of first) m.ack()
    expect((await sixth).done).toBe(false)
    await hold(it, 4)
    void it.next()
    await until(() => stalls(errors).length === 2, 10_000, 'a second ERR_STALLED error')
    expect(stalls(errors)[1]).toMatchObject({ held: 5, maxInFlight: 5 })
    await c.close()
  })

  it('a member whose reads come in pieces smaller than half of maxInFlight still fills up to it, so a stall is reported', async () => {
    await twain.createTopic('t')
    await fill('t', 0, 5010)
    // One partition: each read takes at most 1024 messages, and 3072 already leaves less than
    // half of 5000 free. Reading stopped there, and a loop holding 3072 waited with no report.
    const c = twain.consumer<string>('t', { group: 'g', ...FAST, maxInFlight: 5000, stallWarningMs: 200 })
    expect(await stallAt(c, c[Symbol.asyncIterator](), 5000)).toMatchObject({ held: 5000, maxInFlight: 5000 })
    await c.close()
  })

  it('a member holding more than half of maxInFlight while its loop waits reads what arrives later, up to maxInFlight', async () => {
    await twain.createTopic('t')
    await fill('t', 0, 8)
    const c = twain.consumer<string>('t', { group: 'g', ...FAST, maxInFlight: 10, stallWarningMs: 200 })
    const it = c[Symbol.asyncIterator]()
    await hold(it, 8)
    const ninth = it.next() // waits: two are free, less than the refill mark (half)
    await fill('t', 0, 3, 'later-')
    expect((await ninth).value).toMatchObject({ value: 'later-0' })
    expect(await stallAt(c, it, 1)).toMatchObject({ held: 10, maxInFlight: 10 })
    await c.close()
  })

  it('a processor holds up to 4000 messages unless told otherwise (its acks wait for its outputs), a consumer 1000', async () => {
    await twain.createTopic('t')
    await fill('t', 0, 4010)
    const p = twain.processor<string>('t', { group: 'p', ...FAST, stallWarningMs: 200 })
    expect(await stallAt(p, p[Symbol.asyncIterator](), 4000)).toMatchObject({ held: 4000, maxInFlight: 4000 })
    await p.close()
    const c = twain.consumer<string>('t', { group: 'c', ...FAST, stallWarningMs: 200 })
    expect(await stallAt(c, c[Symbol.asyncIterator](), 1000)).toMatchObject({ held: 1000, maxInFlight: 1000 })
    await c.close()
  })

  it('messages acked slowly but steadily while the member is full report nothing; once acks stop, the stall is reported', async () => {
    await twain.createTopic('t')
    await fill('t', 0, 120)
    const c = twain.consumer<string>('t', {
      group: 'g',
      ...FAST,
      maxInFlight: 6,
      stallWarningMs: 2000,
      drainTimeoutMs: 0,
    })
    const errors = errorsOf(c)
    const held: GroupMessage<string>[] = []
    let acked = 0
    let acking = true
    let stopWhenFull = false
    // A sliding window: the loop takes whatever it can (the member is full much of the time) and
    // the oldest message is acked every 40 ms, so a settlement comes long (50 times) before stallWarningMs.
    timers.push(
      setInterval(() => {
        if (stopWhenFull && held.length === 6) acking = false
        if (!acking) return
        const m = held.shift()
        if (m) {
          m.ack()
          acked++
        }
      }, 40),
    )
    const loop = (async () => {
      for await (const m of c) held.push(m)
    })()
    await until(() => acked >= 100, 60_000, '100 messages acked')
    expect(stalls(errors)).toEqual([])
    // The same member: its acks stop while it holds maxInFlight, and the stall is reported.
    stopWhenFull = true
    await until(() => !acking, 10_000, 'the window to fill up')
    await until(() => stalls(errors).length === 1, 10_000, 'an ERR_STALLED error once acks stopped')
    expect(stalls(errors)[0]).toMatchObject({ held: 6, maxInFlight: 6 })
    await c.close()
    await loop
  }, 90_000)

  it('a member with nothing more to read, or whose handler is busy, reports nothing; the same wait at maxInFlight does', async () => {
    await twain.createTopic('idle')
    await twain.createTopic('few')
    await twain.createTopic('busy')
    await twain.createTopic('full')
    await fill('few', 0, 3)
    await fill('busy', 0, 20)
    await fill('full', 0, 20)
    const opts = { ...FAST, maxInFlight: 5, stallWarningMs: 200, drainTimeoutMs: 0 }
    const idle = twain.consumer<string>('idle', { group: 'g', ...opts })
    const few = twain.consumer<string>('few', { group: 'g', ...opts })
    const busy = twain.consumer<string>('busy', { group: 'g', ...opts })
    const full = twain.consumer<string>('full', { group: 'g', ...opts })
    const quiet = [idle, few, busy].map(errorsOf)
    const reported = errorsOf(full)
    const idleNext = idle[Symbol.asyncIterator]().next() // nothing to read at all
    const fewIt = few[Symbol.asyncIterator]()
    await hold(fewIt, 3)
    void fewIt.next() // holds all there is (3 < maxInFlight) and waits
    const busyIt = busy[Symbol.asyncIterator]()
    await hold(busyIt, 1) // holds 5 (fetched), is handling the first: not waiting for more
    await hold(full[Symbol.asyncIterator](), 5).then((ms) => expect(ms).toHaveLength(5))
    void full[Symbol.asyncIterator]().next()
    await until(() => stalls(reported).length === 1, 10_000, 'the full member to report ERR_STALLED')
    await sleep(600) // three times stallWarningMs more
    expect(quiet.map(stalls)).toEqual([[], [], []])
    await Promise.all([idle, few, busy, full].map((c) => c.close()))
    await idleNext
  })

  it('a member read with poll() reports ERR_STALLED once its polls find nothing while it holds maxInFlight', async () => {
    await twain.createTopic('t')
    await fill('t', 0, 10)
    const c = twain.consumer<string>('t', {
      group: 'g',
      ...FAST,
      maxInFlight: 4,
      stallWarningMs: 200,
      drainTimeoutMs: 0,
    })
    const errors = errorsOf(c)
    await pollN(c, 4)
    const more: GroupMessage<string>[] = []
    await until(
      () => {
        more.push(...c.pollMany(10)) // nothing more comes: the polls wait in vain
        return stalls(errors).length === 1
      },
      10_000,
      'an ERR_STALLED error',
    )
    expect(more).toEqual([])
    expect(stalls(errors)[0]).toMatchObject({ held: 4, maxInFlight: 4 })
    await c.close()
  })

  it('a processor holding maxInFlight unsettled messages reports ERR_STALLED', async () => {
    await twain.createTopic('t')
    await fill('t', 0, 10)
    const p = twain.processor<string>('t', {
      group: 'g',
      ...FAST,
      maxInFlight: 4,
      stallWarningMs: 200,
      drainTimeoutMs: 0,
    })
    const errors = errorsOf(p)
    const it = p[Symbol.asyncIterator]()
    await hold(it, 4)
    void it.next()
    await until(() => stalls(errors).length === 1, 10_000, 'an ERR_STALLED error')
    expect(stalls(errors)[0]).toMatchObject({ code: 'ERR_STALLED', held: 4, maxInFlight: 4 })
    await p.close()
  })

  it('without an error listener, a stall is printed once as a TwainmqWarning (code ERR_STALLED), not thrown', async () => {
    const warnings: Error[] = []
    const onWarning = (w: Error) => {
      if (w.name === 'TwainmqWarning') warnings.push(w)
    }
    process.on('warning', onWarning)
    try {
      await twain.createTopic('t')
      await fill('t', 0, 10)
      const c = twain.consumer<string>('t', {
        group: 'g',
        ...FAST,
        maxInFlight: 3,
        stallWarningMs: 200,
        drainTimeoutMs: 0,
      })
      const it = c[Symbol.asyncIterator]()
      await hold(it, 3)
      void it.next()
      await until(() => warnings.length > 0, 10_000, 'a TwainmqWarning')
      expect(warnings[0]).toMatchObject({ code: 'ERR_STALLED' })
      expect(warnings[0]?.message).toMatch(/group "g": ERR_STALLED: .*holds 3 messages \(maxInFlight 3\)/)
      await c.close()
    } finally {
      process.off('warning', onWarning)
    }
  })

  // Shared groups exist on Redis only.
  if (kind.caps.shared)
    it('a shared member holding maxInFlight unsettled messages reports ERR_STALLED, again after progress', async () => {
      await twain.createTopic('t', { partitions: 2 })
      await fill('t', 0, 10)
      await fill('t', 1, 10)
      const c = twain.consumer<string>('t', {
        group: 'g',
        mode: 'shared',
        ...FAST,
        maxInFlight: 4,
        stallWarningMs: 200,
        drainTimeoutMs: 0,
      })
      const errors = errorsOf(c)
      const it = c[Symbol.asyncIterator]()
      const first = await hold(it, 4)
      const next = it.next()
      await until(() => stalls(errors).length === 1, 10_000, 'an ERR_STALLED error')
      expect(stalls(errors)[0]).toMatchObject({ held: 4, maxInFlight: 4 })
      for (const m of first) m.ack()
      await next
      await hold(it, 3)
      void it.next()
      await until(() => stalls(errors).length === 2, 10_000, 'a second ERR_STALLED error')
      await c.close()
    })

  it('stallWarningMs: Infinity turns the warning off; 0 and other bad values are refused naming the value', async () => {
    await twain.createTopic('t')
    for (const bad of [0, -1, 1.5, NaN, 86_400_001, '30000']) {
      expect(() => twain.consumer('t', { group: 'g', stallWarningMs: bad as number })).toThrow(InvalidArgumentError)
      expect(() => twain.consumer('t', { group: 'g', stallWarningMs: bad as number })).toThrow(
        `stallWarningMs must be an integer 1..86400000 or Infinity (no stall warning), got ${typeof bad === 'string' ? `"${bad}"` : String(bad)}`,
      )
    }
    await fill('t', 0, 10)
    const off = twain.consumer<string>('t', {
      group: 'off',
      ...FAST,
      maxInFlight: 3,
      stallWarningMs: Infinity,
      drainTimeoutMs: 0,
    })
    const on = twain.consumer<string>('t', {
      group: 'on',
      ...FAST,
      maxInFlight: 3,
      stallWarningMs: 200,
      drainTimeoutMs: 0,
    })
    const [offErrors, onErrors] = [off, on].map(errorsOf) as [Error[], Error[]]
    for (const c of [off, on]) {
      const it = c[Symbol.asyncIterator]()
      await hold(it, 3)
      void it.next()
    }
    await until(() => stalls(onErrors).length === 1, 10_000, 'the member with a stallWarningMs to report')
    await sleep(600)
    expect(stalls(offErrors)).toEqual([])
    await Promise.all([off.close(), on.close()])
  })
})
