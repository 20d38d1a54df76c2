import { describe, expect, it } from 'vitest'
import { keyCodec } from '../../src/core/keys.js'
import { InvalidKeyError, InvalidKeyTypeError, TwainError, type KeyType } from '../../src/index.js'
import { VALID } from '../helpers/key-cases.js'

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
