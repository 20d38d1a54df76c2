// JSON values are stored only when JSON keeps them as they are: what JSON.stringify would silently
// change (NaN → null, a Map → {}, a function dropped, …) is refused with InvalidArgumentError naming
// where it is in the value.
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { open, type Twain } from '../../src/index.js'
import { collect, makeTmp, rmTmp } from '../unit/helpers.js'

describe('JSON values through a producer', () => {
  let dir: string
  let twain: Twain
  beforeEach(async () => {
    dir = makeTmp()
    twain = await open(dir)
    await twain.createTopic('vals')
  })
  afterEach(async () => {
    await twain.close()
    rmTmp(dir)
  })

  it('send and sendBatch reject a value JSON would change and write nothing', async () => {
    const p = twain.producer('vals')
    await expect(p.send(1, { price: NaN })).rejects.toThrow(/\$\.price is NaN/)
    await expect(p.sendBatch([{ key: 1, value: { ok: true } }, { key: 2, value: { m: new Map() } }])).rejects.toThrow(/\$\.m is a Map/)
    expect(await twain.length('vals')).toBe(0)
    await p.send(1, { at: new Date(0), note: undefined })
    expect((await collect(twain.history('vals'))).map((m) => m.value)).toEqual([{ at: '1970-01-01T00:00:00.000Z' }])
  })
})
