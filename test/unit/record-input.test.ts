// recordInput (backends/record.ts): the one way a writer other than the producer (the HTTP gateway)
// builds a record, with the key stored the topic's key codec's way and a string value unmeasured.
import { describe, expect, it } from 'vitest'
import { recordInput, UNMEASURED } from '../../src/backends/record.js'
import { InvalidKeyError } from '../../src/core/errors.js'
import { keyCodec } from '../../src/core/keys.js'
import { ValueKind } from '../../src/core/values.js'

describe('recordInput', () => {
  it('stores an integer key as the number in its codec width, and bytes for other key types', () => {
    expect(recordInput(keyCodec('u16'), 0, ValueKind.Text, 'x')).toMatchObject({ key: 0, keyBytes: 2 })
    expect(recordInput(keyCodec('u32'), 7, ValueKind.Text, 'x')).toMatchObject({ key: 7, keyBytes: 4 })
    const s = recordInput(keyCodec('string'), 'héllo', ValueKind.Text, 'x')
    expect(Buffer.isBuffer(s.key) && s.key.toString('utf8')).toBe('héllo')
    expect(s.keyBytes).toBe(Buffer.byteLength('héllo'))
  })

  it('leaves a string value unmeasured and measures bytes; keeps type, headers and a given timestamp', () => {
    expect(recordInput(keyCodec('u16'), 0, ValueKind.Text, 'héllo').valueBytes).toBe(UNMEASURED)
    const r = recordInput(keyCodec('u16'), 0, ValueKind.Typed, Buffer.from('{}'), {
      type: 'ds.config',
      headers: { a: 'b' },
      timestamp: 12.5,
    })
    expect(r).toMatchObject({ valueBytes: 2, type: 'ds.config', headers: { a: 'b' }, timestamp: 12.5 })
  })

  it('refuses a key its codec refuses, naming it', () => {
    expect(() => recordInput(keyCodec('u16'), 70_000, ValueKind.Text, 'x')).toThrow(InvalidKeyError)
    expect(() => recordInput(keyCodec('u16'), 70_000, ValueKind.Text, 'x')).toThrow(/70000/)
  })
})
