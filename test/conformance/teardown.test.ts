// Conformance: ending tails and consumers releases everything at once, even while a read is
// blocked, and processes exit by themselves — on both backends.
import { from, take } from 'rxjs'
import { describe, expect, it } from 'vitest'
import { AbortError, ClosedError } from '../../src/index.js'
import { exited, lines, spawnChild } from '../helpers/spawn.js'
import { backends, perTest } from './backends.js'
import { PROMPT_MS, until } from '../helpers/wait.js'

/** Time for `fn` to settle, in ms. */
async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now()
  await fn()
  return performance.now() - t0
}

describe.each(backends())('teardown on $name', (kind) => {
  kind.hooks()
  const ctx = perTest(kind)
  /** Resolves once `n` more reads wait for data than `before` (see `waitingReads`). */
  const blocked = async (before: number, n = 1): Promise<void> =>
    until(async () => (await kind.waitingReads()) >= before + n, 5000, `${n} more waiting reads than ${before}`)

  it('abort of a waiting tail ends it with AbortError at once', async () => {
    await ctx.twain.createTopic('t', { partitions: 3 })
    const ctrl = new AbortController()
    const before = await kind.waitingReads()
    const it = ctx.twain.tail('t', { signal: ctrl.signal })[Symbol.asyncIterator]()
    const pending = it.next()
    await blocked(before)
    const t0 = performance.now()
    ctrl.abort()
    await expect(pending).rejects.toBeInstanceOf(AbortError)
    expect(performance.now() - t0).toBeLessThan(PROMPT_MS)
  })

  it('return(), close() and unsubscribe end a waiting tail at once and quietly', async () => {
    await ctx.twain.createTopic('t')
    const stream = ctx.twain.tail('t')
    const before = await kind.waitingReads()
    /** The ended tail's read is released: back to the count before it. */
    const released = async (): Promise<void> =>
      until(async () => (await kind.waitingReads()) === before, 5000, `waiting reads back to ${before}`)
    const it = stream[Symbol.asyncIterator]()
    const pending = it.next()
    await blocked(before)
    expect(await timed(() => it.return!())).toBeLessThan(PROMPT_MS)
    expect(await pending).toEqual({ done: true, value: undefined })

    const s2 = ctx.twain.tail('t')
    await released()
    const loop = (async () => {
      for await (const _ of s2) throw new Error('unexpected message')
    })()
    await blocked(before)
    expect(
      await timed(async () => {
        await s2.close()
        await loop
      }),
    ).toBeLessThan(PROMPT_MS)

    let completed = false
    await released()
    const sub = from(ctx.twain.tail('t')).subscribe({ complete: () => (completed = true) })
    await blocked(before)
    expect(await timed(async () => sub.unsubscribe())).toBeLessThan(PROMPT_MS)
    expect(completed).toBe(false)
  })

  it('twain.close() ends waiting tails and consumers promptly; later use throws ClosedError', async () => {
    await ctx.twain.createTopic('t', { partitions: 2 })
    const before = await kind.waitingReads()
    const tails = [ctx.twain.tail('t'), ctx.twain.tail('t', { from: 'start' })]
    const loops = tails.map(async (s) => {
      for await (const _ of s) throw new Error('unexpected')
    })
    const c = ctx.twain.consumer('t', { group: 'g', sessionTimeoutMs: 10_000, heartbeatIntervalMs: 100 })
    const cl = (async () => {
      for await (const _ of c) throw new Error('unexpected')
    })()
    await blocked(before) // the tails wait (on Redis both share one read per slot; the consumer's read may be a poll between heartbeats)
    await until(() => c.assignments().length === 2, 5000, 'the consumer to own both partitions')
    expect(await timed(() => ctx.twain.close())).toBeLessThan(PROMPT_MS)
    await Promise.all([...loops, cl])
    expect(() => ctx.twain.tail('t')).toThrow(ClosedError)
  })

  it('a tail ended with take(n) in RxJS delivers n and releases the read', async () => {
    await ctx.twain.createTopic('t')
    const got: string[] = []
    const before = await kind.waitingReads()
    const done = new Promise<void>((resolve) =>
      from(ctx.twain.tail<string>('t'))
        .pipe(take(2))
        .subscribe({ next: (m) => got.push(m.value), complete: resolve }),
    )
    await blocked(before)
    await ctx.twain.producer<string>('t').sendBatch([
      { key: 1, value: 'a' },
      { key: 2, value: 'b' },
      { key: 3, value: 'c' },
    ])
    await done
    expect(got).toEqual(['a', 'b'])
  })

  const modes: Array<[string, string[]]> = [
    ['tail-break', ['got x', 'done']],
    ['tail-abort', ['aborted', 'done']],
    ['tail-unsubscribe', ['got y', 'done']],
    ['tail-close-while-waiting', ['ended', 'done']],
    ['tail-break-no-close', ['got z', 'done']],
    ['group-iterate-close', ['got x', 'done']],
    ['group-never-iterated', ['assigned', 'done']],
    ['group-break-no-close', ['got x', 'done']],
    ['group-twain-close-while-iterating', ['got x', 'ended', 'done']],
  ]
  it.each(modes)(
    'a process that uses a stream (%s) exits by itself',
    async (mode, expected) => {
      const child = spawnChild('exit-check.ts', [ctx.store.target, ctx.store.prefix, mode])
      const out = lines(child)
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000)
      const code = await exited(child)
      clearTimeout(timer)
      expect({ code, lines: out.lines }, out.stderr()).toEqual({ code: 0, lines: expected })
    },
    20_000,
  )
})
