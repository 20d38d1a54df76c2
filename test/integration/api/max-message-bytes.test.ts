import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { InvalidArgumentError, InvalidKeyError, MessageTooLargeError, open, type Twain } from '../../../src/index.js'
import { collect, makeTmp, rmTmp } from '../../unit/helpers.js'

describe('maxMessageBytes', () => {
  let dir: string
  let twain: Twain
  beforeEach(async () => {
    dir = makeTmp()
    twain = await open(dir)
    // u16 keys: 2 bytes of key.
    await twain.createTopic('small', { maxMessageBytes: 100, partitions: 2 })
  })
  afterEach(async () => {
    await twain.close()
    rmTmp(dir)
  })

  it('accepts a message of exactly maxMessageBytes (key 2 + value 98)', async () => {
    await expect(twain.producer('small').send(1, 'x'.repeat(98))).resolves.toMatchObject({ offset: 0 })
  })

  it('rejects a message over the limit with MessageTooLargeError whose text has both sizes, writing nothing', async () => {
    const p = twain.producer('small')
    let err: unknown
    try {
      await p.send(1, 'x'.repeat(200))
    } catch (e) {
      err = e
    }
    expect(err).toBeInstanceOf(MessageTooLargeError)
    expect((err as MessageTooLargeError).code).toBe('ERR_MESSAGE_TOO_LARGE')
    expect((err as Error).message).toContain('202') // 2 key + 200 value
    expect((err as Error).message).toContain('100') // the limit
    expect((err as Error).message).toContain('small')
    expect(await twain.length('small')).toBe(0)
  })

  it('counts key + headers + encoded value (one byte over → rejected)', async () => {
    const p = twain.producer('small')
    // 2 (key) + 1 + 9 (header name+value) + 88 (value) = 100: fits
    await expect(p.send(1, 'v'.repeat(88), { headers: { h: '123456789' } })).resolves.toBeDefined()
    // one more byte of header value: 101
    await expect(p.send(1, 'v'.repeat(88), { headers: { h: '1234567890' } })).rejects.toThrow(/101/)
    // a header counts its UTF-8 bytes too: 2 + 1 + 2*4 ('é') + 1 + 88 = 100 fits, 'ééééé' is 101
    const at = await p.send(1, 'v'.repeat(88), { headers: { h: 'éééé1' } })
    await expect(p.send(1, 'v'.repeat(88), { headers: { h: 'ééééé' } })).rejects.toThrow(/101/)
    for await (const m of twain.history('small', { from: at.offset })) expect(m.headers).toEqual({ h: 'éééé1' })
    // multibyte characters count in UTF-8 bytes: 'é' is 2 bytes → 2 + 2*50 = 102
    await expect(p.send(1, 'é'.repeat(50))).rejects.toBeInstanceOf(MessageTooLargeError)
    // JSON counts its encoded form: {"a":"…"} is 8 bytes of syntax: 2 + 8 + 90 = 100 fits, 91 → 101 does not
    await expect(p.send(1, { a: 'x'.repeat(90) })).resolves.toBeDefined()
    await expect(p.send(1, { a: 'x'.repeat(91) })).rejects.toThrow(/101/)
    await expect(p.send(1, { a: 'x'.repeat(91) })).rejects.toBeInstanceOf(MessageTooLargeError)
    expect(await twain.length('small')).toBe(3)
  })

  it('string keys count toward the limit', async () => {
    await twain.createTopic('skeys', { keyType: 'string', maxMessageBytes: 50 })
    const p = twain.producer('skeys')
    await expect(p.send('k'.repeat(50), '')).resolves.toBeDefined()
    await expect(p.send('k'.repeat(51), '')).rejects.toBeInstanceOf(MessageTooLargeError)
  })

  it('sendBatch with one oversized item writes nothing at all', async () => {
    const p = twain.producer('small')
    const before = await twain.describeTopic('small')
    await expect(
      p.sendBatch([
        { key: 1, value: 'ok-1' },
        { key: 2, value: 'ok-2', partition: 1 },
        { key: 3, value: 'x'.repeat(500) },
        { key: 4, value: 'ok-4' },
      ]),
    ).rejects.toBeInstanceOf(MessageTooLargeError)
    expect(await twain.length('small')).toBe(0)
    expect((await twain.describeTopic('small')).offsets).toEqual(before.offsets)
    expect(await collect(twain.history('small'))).toEqual([])
    // the next send starts at offset 0: nothing was consumed
    expect(await p.send(1, 'after', { partition: 0 })).toEqual({ partition: 0, offset: 0 })
  })

  it('sendBatch with one bad key or bad partition writes nothing at all', async () => {
    const p = twain.producer('small')
    await expect(
      p.sendBatch([
        { key: 1, value: 'a' },
        { key: -5, value: 'b' },
      ]),
    ).rejects.toBeInstanceOf(InvalidKeyError)
    await expect(
      p.sendBatch([
        { key: 1, value: 'a' },
        { key: 2, value: 'b', partition: 7 },
      ]),
    ).rejects.toBeInstanceOf(InvalidArgumentError)
    await expect(
      p.sendBatch([
        { key: 1, value: 'a' },
        { key: 2, value: 'b', headers: { h: 5 as unknown as string } },
      ]),
    ).rejects.toBeInstanceOf(InvalidArgumentError)
    expect(await twain.length('small')).toBe(0)
  })

  it('an oversized send does not fail the other sends of the same tick', async () => {
    const p = twain.producer('small')
    const results = await Promise.allSettled([
      p.send(1, 'a', { partition: 0 }),
      p.send(1, 'y'.repeat(1000), { partition: 0 }),
      p.send(1, 'b', { partition: 0 }),
    ])
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
    expect((await collect(twain.history('small'))).map((m) => [m.offset, m.value])).toEqual([
      [0, 'a'],
      [1, 'b'],
    ])
  })
})
