/**
 * Base85 exactly as Python's `base64.b85encode` / `b85decode` (RFC 1924 alphabet; not Ascii85, not
 * Z85), which is what Python TwainMQ 0.1.9 writes for keys, timestamps and payloads.
 *
 * - Encoding: pad the input with zero bytes to a multiple of 4, write each big-endian u32 as 5 digits
 *   (most significant first), then drop as many trailing characters as padding bytes were added.
 * - Decoding: pad the text with `~` (digit 84) to a multiple of 5, decode each group (a group above
 *   2^32-1 is an overflow), then drop as many trailing bytes as padding characters were added.
 *   Like Python, a bad character or an overflow is an error naming its position.
 *
 * The alphabet has neither `\n` nor `\r`, so encoded text is safe inside a line.
 */

/** The RFC 1924 alphabet, digit 0 first. */
export const B85_ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~'

const ENC = Buffer.from(B85_ALPHABET, 'latin1')
/** Byte → digit, or -1 for a byte outside the alphabet. */
const DEC = new Int16Array(256).fill(-1)
for (let i = 0; i < 85; i++) DEC[ENC[i] as number] = i

/** A base85 text that Python's `b85decode` would refuse, with the reason in Python's words. */
export class Base85Error extends Error {
  constructor(
    message: string,
    /** Position (character index) of the bad character or of the overflowing group. */
    readonly position: number,
  ) {
    super(message)
    this.name = 'Base85Error'
  }
}

/** Length of the base85 text of `n` bytes: `5*(n//4) + (n%4 and n%4+1)`. */
export function b85Length(n: number): number {
  const r = n % 4
  return 5 * ((n - r) / 4) + (r === 0 ? 0 : r + 1)
}

/** Number of bytes a base85 text of `chars` characters decodes to (Python's rule). */
export function b85DecodedLength(chars: number): number {
  const groups = Math.ceil(chars / 5)
  const padding = groups * 5 - chars
  return groups * 4 - padding < 0 ? 0 : groups * 4 - padding
}

/**
 * Encode `src[start, end)` as base85 ASCII bytes into `dst` at `at`; returns the position after the
 * last byte written. `dst` needs `b85Length(end - start)` free bytes.
 */
export function b85EncodeInto(src: Uint8Array, start: number, end: number, dst: Uint8Array, at: number): number {
  let i = start
  let o = at
  while (end - i >= 4) {
    let v =
      (((src[i] as number) << 24) >>> 0) +
      ((src[i + 1] as number) << 16) +
      ((src[i + 2] as number) << 8) +
      (src[i + 3] as number)
    for (let k = 4; k >= 0; k--) {
      const q = Math.floor(v / 85)
      dst[o + k] = ENC[v - q * 85] as number
      v = q
    }
    i += 4
    o += 5
  }
  const rest = end - i
  if (rest > 0) {
    let v = 0
    for (let k = 0; k < 4; k++) v = v * 256 + (k < rest ? (src[i + k] as number) : 0)
    const digits = [0, 0, 0, 0, 0]
    for (let k = 4; k >= 0; k--) {
      const q = Math.floor(v / 85)
      digits[k] = v - q * 85
      v = q
    }
    // The group is cut to rest + 1 characters (4 - rest padding bytes dropped).
    for (let k = 0; k <= rest; k++) dst[o++] = ENC[digits[k] as number] as number
  }
  return o
}

/** `base64.b85encode(bytes).decode()`. */
export function b85encode(bytes: Uint8Array): string {
  const out = Buffer.allocUnsafe(b85Length(bytes.length))
  b85EncodeInto(bytes, 0, bytes.length, out, 0)
  return out.toString('latin1')
}

/**
 * Decode base85 ASCII bytes `src[start, end)` into `dst` at `at`; returns the position after the
 * last byte written. Throws `Base85Error` (positions relative to `start`) like Python.
 */
export function b85DecodeInto(src: Uint8Array, start: number, end: number, dst: Uint8Array, at: number): number {
  const len = end - start
  let o = at
  for (let g = 0; g < len; g += 5) {
    const n = Math.min(5, len - g)
    let acc = 0
    for (let k = 0; k < 5; k++) {
      let d = 84 // '~' pads a short last group
      if (k < n) {
        d = DEC[src[start + g + k] as number] as number
        if (d < 0) throw new Base85Error(`bad base85 character at position ${g + k}`, g + k)
      }
      acc = acc * 85 + d
    }
    if (acc > 0xffffffff) throw new Base85Error(`base85 overflow in hunk starting at byte ${g}`, g)
    const bytes = n === 5 ? 4 : n - 1 // a short group of n characters stands for n - 1 bytes
    for (let k = 0; k < bytes; k++) {
      dst[o++] = Math.floor(acc / 2 ** (24 - 8 * k)) & 0xff
    }
  }
  return o
}

/** `base64.b85decode(text)` for a string or ASCII bytes; throws `Base85Error` like Python. */
export function b85decode(text: string | Uint8Array): Buffer {
  const src = typeof text === 'string' ? Buffer.from(text, 'latin1') : text
  if (typeof text === 'string' && /[^\x00-\x7f]/.test(text)) {
    const at = text.search(/[^\x00-\x7f]/)
    throw new Base85Error(`string argument should contain only ASCII characters (position ${at})`, at)
  }
  const out = Buffer.allocUnsafe(b85DecodedLength(src.length))
  const n = b85DecodeInto(src, 0, src.length, out, 0)
  return n === out.length ? out : out.subarray(0, n)
}

/**
 * Decode a base85 group of up to 5 characters at `src[start, end)` straight to an unsigned integer
 * of `end - start - 1` bytes (4 for a full group): the key and timestamp fast path.
 */
export function b85DecodeWord(src: Uint8Array, start: number, end: number): number {
  const n = end - start
  let acc = 0
  for (let k = 0; k < 5; k++) {
    let d = 84
    if (k < n) {
      d = DEC[src[start + k] as number] as number
      if (d < 0) throw new Base85Error(`bad base85 character at position ${k}`, k)
    }
    acc = acc * 85 + d
  }
  if (acc > 0xffffffff) throw new Base85Error('base85 overflow in hunk starting at byte 0', 0)
  const bytes = n >= 5 ? 4 : n - 1
  return Math.floor(acc / 2 ** (8 * (4 - bytes)))
}
