import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { keyCodec } from '../../src/core/keys.js'
import { InvalidKeyError, InvalidKeyTypeError, TwainError, open, type Key, type KeyType, type Twain } from '../../src/index.js'
import { collect, makeTmp, rmTmp } from './helpers.js'

const U64_MAX = (1n << 64n) - 1n

/** Valid keys per key type, including the extremes. */
const VALID: Array<[KeyType, Key[]]> = [
  ['u8', [0, 1, 127, 255]],
  ['u16', [0, 1, 256, 65535]],
  ['u32', [0, 65536, 2 ** 31, 2 ** 32 - 1]],
  ['u64', [0n, 1n, 2n ** 32n, 2n ** 53n + 1n, 2n ** 63n, U64_MAX]],
  ['char4', ['', 'a', 'abcd', 'é', 'éé', '€', '😀']],
  ['char12', ['user-1', 'ñandú', '日本語', 'ab€€cd']],
  ['string', ['', 'x', 'user-1', 'ünïcødé 😀 日本', 'a'.repeat(5000)]],
]

describe('key codecs (src/core/keys.ts)', () => {
  for (const [type, keys] of VALID) {
    it(`round-trips every valid ${type} key through encode/decode`, () => {
      const codec = keyCodec(type)
      expect(codec.type).toBe(type)
      for (const key of keys) {
        const bytes = codec.encode(key)
        if (codec.width > 0 && !type.startsWith('char')) expect(bytes.length).toBe(codec.width)
        // Decode from inside a larger buffer to check offsets are honoured.
        const framed = Buffer.concat([Buffer.from([9, 9, 9]), bytes, Buffer.from([7])])
        expect(codec.decode(framed, 3, 3 + bytes.length)).toEqual(key)
        expect(codec.normalise(key)).toEqual(key)
      }
    })
  }

  it('encodes integer keys big-endian at the type width', () => {
    expect([...keyCodec('u8').encode(255)]).toEqual([0xff])
    expect([...keyCodec('u16').encode(0x0102)]).toEqual([1, 2])
    expect([...keyCodec('u32').encode(0x01020304)]).toEqual([1, 2, 3, 4])
    expect([...keyCodec('u64').encode(0x0102030405060708n)]).toEqual([1, 2, 3, 4, 5, 6, 7, 8])
  })

  it('accepts a safe-integer number for u64 and normalises it to a bigint', () => {
    const codec = keyCodec('u64')
    expect(codec.normalise(42)).toBe(42n)
    expect(codec.decode(codec.encode(2 ** 53 - 1), 0, 8)).toBe(BigInt(2 ** 53 - 1))
  })

  it('counts charN length in UTF-8 bytes, not characters', () => {
    const codec = keyCodec('char4')
    expect(codec.encode('éé').length).toBe(4) // 2 chars, 4 bytes: fits
    expect(() => codec.encode('ééé')).toThrow(InvalidKeyError) // 3 chars, 6 bytes: too long
    expect(() => codec.encode('😀a')).toThrow(InvalidKeyError) // 5 bytes
  })

  const BAD: Array<[KeyType, unknown, string]> = [
    ['u8', -1, '-1'],
    ['u8', 1.5, '1.5'],
    ['u8', 256, '256'],
    ['u8', '7', '"7"'],
    ['u8', null, 'null'],
    ['u8', undefined, 'undefined'],
    ['u8', 3n, '3n'],
    ['u8', Number.NaN, 'NaN'],
    ['u16', 65536, '65536'],
    ['u16', -0.5, '-0.5'],
    ['u32', 2 ** 32, '4294967296'],
    ['u32', Infinity, 'Infinity'],
    ['u64', -1n, '-1n'],
    ['u64', 1n << 64n, '18446744073709551616'],
    ['u64', 1.5, '1.5'],
    ['u64', 2 ** 53, '9007199254740992'],
    ['u64', -1, '-1'],
    ['u64', '12', '"12"'],
    ['char4', 'hello', '"hello"'],
    ['char4', 'ééé', '"ééé"'],
    ['char4', 42, '42'],
    ['string', 5, '5'],
    ['string', true, 'true'],
  ]
  for (const [type, key, shown] of BAD) {
    it(`rejects ${type} key ${shown} with InvalidKeyError naming the key`, () => {
      const codec = keyCodec(type)
      let err: unknown
      try {
        codec.encode(key)
      } catch (e) {
        err = e
      }
      expect(err).toBeInstanceOf(InvalidKeyError)
      expect(err).toBeInstanceOf(TwainError)
      expect((err as InvalidKeyError).code).toBe('ERR_INVALID_KEY')
      expect((err as Error).message).toContain(shown)
      expect((err as Error).message).toContain(type)
      expect(() => codec.normalise(key)).toThrow(InvalidKeyError)
    })
  }

  it('accepts char1 and char99999 as key types', () => {
    expect(keyCodec('char1').width).toBe(1)
    expect(keyCodec('char99999').width).toBe(99999)
  })

  for (const bad of ['u12', 'char0', 'float', 'char', 'char-1', 'char01', 'char100000', 'U8', 'u64 ', '', 'int']) {
    it(`rejects key type ${JSON.stringify(bad)} with InvalidKeyTypeError naming it`, () => {
      let err: unknown
      try {
        keyCodec(bad)
      } catch (e) {
        err = e
      }
      expect(err).toBeInstanceOf(InvalidKeyTypeError)
      expect((err as InvalidKeyTypeError).code).toBe('ERR_INVALID_KEY_TYPE')
      expect((err as Error).message).toContain(JSON.stringify(bad))
    })
  }

  it('rejects non-string key types (number, null, object) with InvalidKeyTypeError', () => {
    for (const bad of [8, null, undefined, {}, ['u8']]) expect(() => keyCodec(bad)).toThrow(InvalidKeyTypeError)
  })
})

describe('keys through a real topic', () => {
  let dir: string
  let twain: Twain
  beforeEach(async () => {
    dir = makeTmp()
    twain = await open(dir)
  })
  afterEach(async () => {
    await twain.close()
    rmTmp(dir)
  })

  it('delivers every valid key of every key type unchanged (u64 as bigint) in history', async () => {
    for (const [type, keys] of VALID) {
      const topic = `keys-${type}`
      await twain.createTopic(topic, { keyType: type })
      const p = twain.producer(topic)
      await p.sendBatch(keys.map((key, i) => ({ key, value: i })))
      const got = await collect(twain.history(topic))
      expect(got.map((m) => m.key)).toEqual(keys)
      if (type === 'u64') for (const m of got) expect(typeof m.key).toBe('bigint')
    }
  })

  it('rejects a bad key at send with InvalidKeyError and writes nothing', async () => {
    await twain.createTopic('k8', { keyType: 'u8' })
    const p = twain.producer('k8')
    await expect(p.send(300, 'v')).rejects.toThrow(InvalidKeyError)
    await expect(p.send(-1, 'v')).rejects.toThrow(/-1/)
    expect(await twain.length('k8')).toBe(0)
    expect(await p.send(255, 'ok')).toEqual({ partition: 0, offset: 0 })
  })

  it('rejects createTopic with a bad key type with InvalidKeyTypeError naming it, creating nothing', async () => {
    await expect(twain.createTopic('bad', { keyType: 'u12' as KeyType })).rejects.toThrow(InvalidKeyTypeError)
    await expect(twain.createTopic('bad', { keyType: 'char0' as KeyType })).rejects.toThrow(/char0/)
    await expect(twain.createTopic('bad', { keyType: 'float' as KeyType })).rejects.toThrow(/float/)
    expect(await twain.topicExists('bad')).toBe(false)
  })

  it('defaults the key type to u16', async () => {
    const info = await twain.createTopic('dflt')
    expect(info.keyType).toBe('u16')
    await expect(twain.producer('dflt').send(65536, 'x')).rejects.toThrow(InvalidKeyError)
  })
})
