import { describe, expect, it } from 'vitest'
import { abortErrorFrom, backendError } from '../../src/core/errors.js'
import * as api from '../../src/index.js'
import {
  AbortError,
  BackendError,
  ClosedError,
  ConnectionError,
  FencedError,
  InvalidArgumentError,
  InvalidKeyError,
  InvalidKeyTypeError,
  InvalidTopicNameError,
  MessageTooLargeError,
  TimeoutError,
  TopicCorruptError,
  TopicExistsError,
  TopicNotFoundError,
  TwainError,
  TypeAlreadyRegisteredError,
  UnknownMessageTypeError,
  ValidationError,
} from '../../src/index.js'

type ErrorClass = new (message: string, options?: { cause?: unknown }) => TwainError

const SUBCLASSES: Array<[string, ErrorClass, boolean]> = [
  ['InvalidTopicNameError', InvalidTopicNameError, false],
  ['InvalidKeyTypeError', InvalidKeyTypeError, false],
  ['InvalidKeyError', InvalidKeyError, false],
  ['TopicExistsError', TopicExistsError, false],
  ['TopicNotFoundError', TopicNotFoundError, false],
  ['MessageTooLargeError', MessageTooLargeError, false],
  ['TypeAlreadyRegisteredError', TypeAlreadyRegisteredError, false],
  ['UnknownMessageTypeError', UnknownMessageTypeError, false],
  ['ValidationError', ValidationError, false],
  ['TopicCorruptError', TopicCorruptError, false],
  ['FencedError', FencedError, false],
  ['InvalidArgumentError', InvalidArgumentError, false],
  ['ConnectionError', ConnectionError, true],
  ['BackendError', BackendError, true],
  ['TimeoutError', TimeoutError, true],
  ['ClosedError', ClosedError, false],
  ['AbortError', AbortError, false],
]

describe('error tree (DESIGN §3.8)', () => {
  for (const [name, Cls, retriable] of SUBCLASSES) {
    it(`${name} is a TwainError and Error with name, ERR_ code, retriable=${retriable} and cause passed through`, () => {
      const cause = new Error('root cause')
      const e = new Cls(`bad value 42 in ${name}`, { cause })
      expect(e).toBeInstanceOf(Cls)
      expect(e).toBeInstanceOf(TwainError)
      expect(e).toBeInstanceOf(Error)
      expect(e.name).toBe(name)
      expect(Cls.name).toBe(name)
      expect(e.code).toMatch(/^ERR_[A-Z_]+$/)
      expect(typeof e.retriable).toBe('boolean')
      expect(e.retriable).toBe(retriable)
      expect(e.cause).toBe(cause)
      expect(e.message).toBe(`bad value 42 in ${name}`)
      expect(typeof e.stack).toBe('string')
      // without options: no cause property at all
      const bare = new Cls('x')
      expect(bare.cause).toBeUndefined()
      expect('cause' in bare).toBe(false)
    })
  }

  it('every subclass has its own code', () => {
    const codes = SUBCLASSES.map(([, Cls]) => new Cls('x').code)
    expect(new Set(codes).size).toBe(codes.length)
    expect(codes).not.toContain('ERR_TWAIN')
  })

  it('subclasses are not instances of each other', () => {
    expect(new TopicNotFoundError('x')).not.toBeInstanceOf(TopicExistsError)
    expect(new AbortError('x')).not.toBeInstanceOf(ClosedError)
  })

  it('the base TwainError takes a code, retriable flag and a non-Error cause', () => {
    const e = new TwainError('m', { code: 'ERR_CUSTOM', retriable: true, cause: 'why' })
    expect(e.code).toBe('ERR_CUSTOM')
    expect(e.retriable).toBe(true)
    expect(e.cause).toBe('why')
    expect(e.name).toBe('TwainError')
    const d = new TwainError('m')
    expect(d.code).toBe('ERR_TWAIN')
    expect(d.retriable).toBe(false)
  })

  it('the package exports every documented error class', () => {
    for (const [name] of SUBCLASSES) expect(typeof (api as Record<string, unknown>)[name]).toBe('function')
    expect(typeof api.TwainError).toBe('function')
  })

  it('abortErrorFrom keeps an AbortError reason and wraps any other reason as cause', () => {
    const c1 = new AbortController()
    const mine = new AbortError('mine')
    c1.abort(mine)
    expect(abortErrorFrom(c1.signal)).toBe(mine)
    const c2 = new AbortController()
    c2.abort('stop')
    const wrapped = abortErrorFrom(c2.signal)
    expect(wrapped).toBeInstanceOf(AbortError)
    expect(wrapped.cause).toBe('stop')
  })

  it('backendError wraps a foreign error as a retriable BackendError naming the operation and keeps TwainErrors', () => {
    const io = Object.assign(new Error('EIO: disk on fire'), { code: 'EIO' })
    const e = backendError('Cannot write segment /x', io)
    expect(e).toBeInstanceOf(BackendError)
    expect(e.retriable).toBe(true)
    expect(e.message).toContain('Cannot write segment /x')
    expect(e.message).toContain('disk on fire')
    expect(e.cause).toBe(io)
    const own = new TopicNotFoundError('t')
    expect(backendError('x', own)).toBe(own)
  })
})
