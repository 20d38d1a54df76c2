import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { WatchHub } from '../../../src/backends/file/watch-hub.js'
import { open, type Twain } from '../../../src/index.js'
import { makeTmp, rmTmp, takeN } from '../../unit/helpers.js'
import { PROMPT_MS, sleep, until } from '../../helpers/wait.js'
import { directoryWatches } from '../../helpers/waiting-reads.js'

describe('watch hub at scale', () => {
  let dir: string | undefined
  let hub: WatchHub | undefined
  const twains: Twain[] = []
  afterEach(async () => {
    hub?.close()
    hub = undefined
    for (const t of twains.splice(0)) await t.close()
    rmTmp(dir)
  })

  it('polls 1,200 watched directories in slices of 1,000 per tick, and ones without a watch on every tick', async () => {
    dir = makeTmp()
    hub = new WatchHub({ pollMs: 15 })
    const wakes = new Array<number>(1200).fill(0)
    for (let i = 0; i < wakes.length; i++) {
      const d = join(dir, String(i))
      mkdirSync(d)
      hub.subscribe(d, () => wakes[i]!++, '.seg', false)
    }
    let unwatched = 0
    hub.subscribe(join(dir, 'missing'), () => unwatched++, '.seg', false) // fs.watch fails: only the tick
    while (unwatched < 8) await sleep(15)
    const ticks = unwatched
    const total = wakes.reduce((a, b) => a + b, 0)
    // Each tick wakes the next 1,000 watched directories (the missing one on every tick)…
    expect(total).toBeGreaterThanOrEqual(1000 * (ticks - 1))
    expect(total).toBeLessThanOrEqual(1000 * (ticks + 1))
    // …so every directory still gets its turn.
    expect(Math.min(...wakes)).toBeGreaterThanOrEqual(1)
  })

  it('wakes a tail over 100 partitions at once for an append by another instance, beyond the chokidar-watched ones', async () => {
    dir = makeTmp()
    const a = await open(dir, { pollMs: 60_000 }) // the poll tick cannot be what delivers
    const b = await open(dir, { pollMs: 60_000 })
    twains.push(a, b)
    await a.createTopic('w', { partitions: 100 })
    const before = directoryWatches()
    const tail = a.tail<string>('w', { from: 'end' })
    const got = takeN(tail, 2, 3000)
    await until(() => directoryWatches() >= before + 100, 5000, "the tail's watches of 100 partition directories")
    const t0 = Date.now()
    await b.producer<string>('w').send(1, 'late', { partition: 99 }) // b's hub does not know a's tail
    await b.producer<string>('w').send(1, 'early', { partition: 0 })
    const msgs = await got
    expect(msgs.map((m) => m.partition).sort((x, y) => x - y)).toEqual([0, 99])
    expect(Date.now() - t0).toBeLessThan(PROMPT_MS) // not the 60 s poll
  })
})
