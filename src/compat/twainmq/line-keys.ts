import { InvalidKeyError, InvalidKeyTypeError } from '../../core/errors.js'
import type { Key, KeyType } from '../../core/types.js'
import { b85DecodeInto, b85DecodeWord, b85DecodedLength } from './base85.js'

/*
 * The KEY field of a TwainMQ line: base85 of the key as `key_width` bytes — a big-endian unsigned
 * integer (1, 2, 4, 8 bytes), or for `-N` (charN) the UTF-8 bytes NUL-padded to N, read back with
 * the trailing NULs stripped (Python's `key_to_base85` / `base85_to_key`).
 */

const INT_WIDTHS: Record<string, number> = { u8: 1, u16: 2, u32: 4, u64: 8 }

/** TwainMQ's `key_width` of a key type; the unbounded `'string'` type has none. */
export function keyWidthOf(keyType: KeyType): number {
  const w = INT_WIDTHS[keyType]
  if (w !== undefined) return w
  const m = /^char([1-9][0-9]*)$/.exec(keyType)
  if (m) return -Number(m[1])
  throw new InvalidKeyTypeError(
    `Key type ${JSON.stringify(keyType)} has no TwainMQ encoding: use u8, u16, u32, u64 or charN`,
  )
}

/** The key type of a TwainMQ `key_width`. */
export function keyTypeOfWidth(width: number): KeyType {
  switch (width) {
    case 1:
      return 'u8'
    case 2:
      return 'u16'
    case 4:
      return 'u32'
    case 8:
      return 'u64'
  }
  if (Number.isSafeInteger(width) && width < 0) return `char${-width}`
  throw new InvalidKeyTypeError(`key_width ${JSON.stringify(width)} is invalid: TwainMQ uses 1, 2, 4, 8 or -N (charN)`)
}

/** The key bytes TwainMQ encodes (Python's `key_to_base85` before base85); `InvalidKeyError` like Python. */
export function keyBytes(key: Key, width: number): Buffer {
  if (width < 0) {
    if (typeof key !== 'string')
      throw new InvalidKeyError(`Key ${String(key)} is invalid for a char${-width} topic: use a string`, { key })
    const b = Buffer.from(key, 'utf8')
    if (b.length > -width)
      throw new InvalidKeyError(
        `Key ${JSON.stringify(key)} too long for ${-width} byte string (${b.length} UTF-8 bytes)`,
        { key },
      )
    return padKey(b, -width)
  }
  const k =
    typeof key === 'bigint' ? key : typeof key === 'number' && Number.isSafeInteger(key) ? BigInt(key) : undefined
  if (k === undefined || k < 0n || k >= 1n << BigInt(8 * width)) {
    throw new InvalidKeyError(`Integer key ${String(key)} does not fit ${width} unsigned bytes`, { key })
  }
  const out = Buffer.alloc(width)
  let v = k
  for (let i = width - 1; i >= 0; i--, v >>= 8n) out[i] = Number(v & 0xffn)
  return out
}

function padKey(b: Buffer, n: number): Buffer {
  if (b.length === n) return b
  const out = Buffer.alloc(n)
  b.copy(out)
  return out
}

/** The key bytes of a stored record key (a number for u8/u16/u32, else bytes; charN unpadded). */
export function recordKeyBytes(key: Buffer | number, width: number): Buffer {
  if (typeof key === 'number') {
    const out = Buffer.allocUnsafe(width)
    out.writeUIntBE(key, 0, width)
    return out
  }
  return width < 0 ? padKey(key, -width) : key
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

/** Decode the KEY field `buf[start, start + keyChars)`. Throws on bad base85 or bad UTF-8. */
export function decodeKeyField(keyWidth: number, keyChars: number, buf: Uint8Array, start: number): Key {
  const end = start + keyChars
  switch (keyWidth) {
    case 1:
    case 2:
    case 4:
      return b85DecodeWord(buf, start, end)
    case 8:
      return (BigInt(b85DecodeWord(buf, start, start + 5)) << 32n) | BigInt(b85DecodeWord(buf, start + 5, end))
  }
  const bytes = Buffer.allocUnsafe(b85DecodedLength(keyChars))
  let n = b85DecodeInto(buf, start, end, bytes, 0)
  while (n > 0 && bytes[n - 1] === 0) n--
  return utf8.decode(bytes.subarray(0, n))
}
