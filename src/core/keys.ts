import { InvalidKeyError, InvalidKeyTypeError } from './errors.js'
import type { Key, KeyType } from './types.js'

/** A parsed key type: how a key is checked, encoded to bytes and decoded. */
export interface KeyCodec {
  readonly type: KeyType
  /** Fixed byte width for integer keys, max UTF-8 bytes for charN, 0 for unbounded strings. */
  readonly width: number
  /** Check a key and return its bytes; throws `InvalidKeyError` naming the key. */
  encode(key: unknown): Buffer
  /** Check a key and return what a record stores: the number for `u8/u16/u32`, else its bytes. */
  recordKey(key: unknown): Buffer | number
  /** Decode bytes written by `encode`. */
  decode(buf: Uint8Array, start: number, end: number): Key
  /** Normalise a valid key to its read-side form (`u64` numbers become bigint). */
  normalise(key: unknown): Key
}

const INT_WIDTH: Record<string, number> = { u8: 1, u16: 2, u32: 4, u64: 8 }
const CHAR_RE = /^char([1-9][0-9]{0,4})$/

function describe(key: unknown): string {
  if (typeof key === 'bigint') return `${key}n`
  if (typeof key === 'string') return JSON.stringify(key)
  try {
    return String(key)
  } catch {
    return typeof key
  }
}

function intCodec(type: 'u8' | 'u16' | 'u32', width: number): KeyCodec {
  const max = 2 ** (width * 8) - 1
  const check = (key: unknown): number => {
    if (typeof key !== 'number' || !Number.isInteger(key) || key < 0 || key > max) {
      throw new InvalidKeyError(`Key ${describe(key)} is invalid for key type ${type}: use an integer 0..${max}`, {
        key,
      })
    }
    return key
  }
  return {
    type,
    width,
    encode(key) {
      const k = check(key)
      const b = Buffer.allocUnsafe(width)
      b.writeUIntBE(k, 0, width)
      return b
    },
    recordKey: check,
    decode(buf, start) {
      let v = 0
      for (let i = 0; i < width; i++) v = v * 256 + (buf[start + i] as number)
      return v
    },
    normalise: check,
  }
}

const U64_MAX = (1n << 64n) - 1n

function u64Codec(): KeyCodec {
  const check = (key: unknown): bigint => {
    let k: bigint | undefined
    if (typeof key === 'bigint') k = key
    else if (typeof key === 'number' && Number.isSafeInteger(key)) k = BigInt(key)
    if (k === undefined || k < 0n || k > U64_MAX) {
      throw new InvalidKeyError(
        `Key ${describe(key)} is invalid for key type u64: use a bigint (or safe integer) 0..2^64-1`,
        { key },
      )
    }
    return k
  }
  return {
    type: 'u64',
    width: 8,
    encode(key) {
      const b = Buffer.allocUnsafe(8)
      b.writeBigUInt64BE(check(key), 0)
      return b
    },
    decode(buf, start) {
      return Buffer.from(buf.buffer, buf.byteOffset + start, 8).readBigUInt64BE(0)
    },
    recordKey(key) {
      return this.encode(key)
    },
    normalise: check,
  }
}

function stringCodec(type: KeyType, maxBytes: number): KeyCodec {
  const check = (key: unknown): Buffer => {
    if (typeof key !== 'string') {
      throw new InvalidKeyError(`Key ${describe(key)} is invalid for key type ${type}: use a string`, { key })
    }
    const b = Buffer.from(key, 'utf8')
    if (maxBytes > 0 && b.length > maxBytes) {
      throw new InvalidKeyError(
        `Key ${describe(key)} is ${b.length} UTF-8 bytes, more than the ${maxBytes} allowed by key type ${type}`,
        { key },
      )
    }
    return b
  }
  return {
    type,
    width: maxBytes,
    encode: check,
    recordKey: check,
    decode(buf, start, end) {
      return Buffer.from(buf.buffer, buf.byteOffset + start, end - start).toString('utf8')
    },
    normalise(key) {
      check(key)
      return key as string
    },
  }
}

const cache = new Map<string, KeyCodec>()

/** Parse and validate a key type; throws `InvalidKeyTypeError` naming it. */
export function keyCodec(type: unknown): KeyCodec {
  if (typeof type === 'string') {
    const hit = cache.get(type)
    if (hit) return hit
  }
  let codec: KeyCodec | undefined
  if (type === 'u64') codec = u64Codec()
  else if (type === 'u8' || type === 'u16' || type === 'u32') codec = intCodec(type, INT_WIDTH[type] as number)
  else if (type === 'string') codec = stringCodec('string', 0)
  else if (typeof type === 'string') {
    const m = CHAR_RE.exec(type)
    if (m) codec = stringCodec(type as KeyType, Number(m[1]))
  }
  if (!codec) {
    throw new InvalidKeyTypeError(
      `Key type ${describe(type)} is invalid: use u8, u16, u32, u64, charN (N = 1..99999 UTF-8 bytes) or string`,
    )
  }
  cache.set(type as string, codec)
  return codec
}
