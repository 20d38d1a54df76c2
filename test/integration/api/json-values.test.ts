// JSON values are stored only when JSON keeps them as they are: what JSON.stringify would silently
// change (NaN → null, a Map → {}, a function dropped, …) is refused with InvalidArgumentError naming
// where it is in the value.
import { describe, expect, it } from 'vitest'
import { collect } from '../../unit/helpers.js'
import { useFileStore } from '../../helpers/file-store.js'

describe('JSON values through a producer', () => {
  const store = useFileStore({}, async (twain) => {
    await twain.createTopic('vals')
  })

  it('send and sendBatch reject a value JSON would change and write nothing', async () => {
    const p = store.twain.producer('vals')
    await expect(p.send(1, { price: NaN })).rejects.toThrow(/\$\.price is NaN/)
    await expect(
      p.sendBatch([
        { key: 1, value: { ok: true } },
        { key: 2, value: { m: new Map() } },
      ]),
    ).rejects.toThrow(/\$\.m is a Map/)
    expect(await store.twain.length('vals')).toBe(0)
    await p.send(1, { at: new Date(0), note: undefined })
    expect((await collect(store.twain.history('vals'))).map((m) => m.value)).toEqual([
      { at: '1970-01-01T00:00:00.000Z' },
    ])
  })
})
