import { describe, expect, it } from 'vitest'
import { InvalidArgumentError, TwainError } from '../../../src/index.js'
import { collect } from '../../unit/helpers.js'
import { useFileStore } from '../../helpers/file-store.js'

describe('headers through a real topic', () => {
  const store = useFileStore({}, async (twain) => {
    await twain.createTopic('hd')
  })

  it('round-trips headers: unicode names and values, empty values, many headers', async () => {
    const many: Record<string, string> = {}
    for (let i = 0; i < 300; i++) many[`h${i}`] = `v${i}`
    const sets = [{ a: '1' }, { 'ünï-😀': 'wért 日本', empty: '' }, many, { long: 'x'.repeat(100_000) }]
    const p = store.twain.producer('hd')
    for (const headers of sets) await p.send(1, 'v', { headers })
    const got = await collect(store.twain.history('hd'))
    expect(got.map((m) => m.headers)).toEqual(sets)
  })

  it('an empty headers object reads back as {}', async () => {
    await store.twain.producer('hd').send(1, 'v', { headers: {} })
    expect((await collect(store.twain.history('hd')))[0]?.headers).toEqual({})
  })

  it('rejects non-string header values and non-object headers with InvalidArgumentError naming the header', async () => {
    const p = store.twain.producer('hd')
    await expect(p.send(1, 'v', { headers: { n: 5 as unknown as string } })).rejects.toBeInstanceOf(
      InvalidArgumentError,
    )
    await expect(p.send(1, 'v', { headers: { n: 5 as unknown as string } })).rejects.toThrow(/"n"/)
    await expect(p.send(1, 'v', { headers: ['a'] as unknown as Record<string, string> })).rejects.toBeInstanceOf(
      InvalidArgumentError,
    )
    await expect(p.send(1, 'v', { headers: null as unknown as Record<string, string> })).rejects.toBeInstanceOf(
      InvalidArgumentError,
    )
    expect(await store.twain.length('hd')).toBe(0)
  })

  it('a header named "__proto__" round-trips as an own header', async () => {
    const headers = JSON.parse('{"__proto__":"x","a":"b"}') as Record<string, string>
    expect(Object.keys(headers)).toEqual(['__proto__', 'a'])
    await store.twain.producer('hd').send(1, 'v', { headers })
    const [m] = await collect(store.twain.history('hd'))
    expect(Object.keys(m!.headers).sort()).toEqual(['__proto__', 'a'])
    expect(Object.getOwnPropertyDescriptor(m!.headers, '__proto__')?.value).toBe('x')
  })

  it('a header name longer than 65535 bytes is either rejected with a TwainError or read back intact, never corrupting the message', async () => {
    const name = 'n'.repeat(70_000)
    const p = store.twain.producer('hd')
    let rejected: unknown
    try {
      await p.send(1, 'value', { headers: { [name]: 'v' } })
    } catch (e) {
      rejected = e
    }
    if (rejected !== undefined) {
      expect(rejected).toBeInstanceOf(TwainError)
      expect(await store.twain.length('hd')).toBe(0)
    } else {
      const [m] = await collect(store.twain.history('hd'))
      expect(m?.value).toBe('value')
      expect(Object.keys(m!.headers).map((k) => k.length)).toEqual([70_000])
    }
  })
})
