import { b85DecodeWord } from './base85.js'

/*
 * The TS field of a TwainMQ line: base85 of a big-endian float64 of POSIX seconds, written by Python
 * as `datetime.now(timezone.utc).timestamp()` (= µs / 10**6) and read with
 * `datetime.fromtimestamp` (microsecond precision). `Message.timestamp` is in ms.
 */

const scratch = Buffer.alloc(8)

/** `x` rounded to the nearest integer, ties to even (Python's rounding of timestamps). */
function roundHalfEven(x: number): number {
  const r = Math.round(x)
  return r - x === 0.5 && r % 2 !== 0 ? r - 1 : r
}

/**
 * The microsecond of a ms timestamp: `ms × 1000` rounded to the nearest integer, with the product
 * computed exactly (a float product would be off by one for some timestamps after 2041).
 * For a message read from a Python TwainMQ topic this is the microsecond Python stored.
 *
 * @example
 * ```ts
 * import { microsOf } from 'twainmq'
 * const us = microsOf(message.timestamp) // as Python's datetime has it
 * ```
 */
export function microsOf(ms: number): number {
  if (Number.isInteger(ms)) return ms * 1000
  // Split ms into a 26-bit high part and the rest (Veltkamp): each times 1000 is then exact.
  const t = 134217729 * ms
  const hi = t - (t - ms)
  const h = hi * 1000
  const l = (ms - hi) * 1000
  const fh = Math.floor(h)
  return fh + roundHalfEven(h - fh + l)
}

/**
 * The ms timestamp of stored seconds: the microsecond Python reads from them
 * (`datetime.fromtimestamp`: the fraction's µs rounded half to even) divided by 1000. So a whole
 * ms timestamp written by twainmq reads back unchanged, and `microsOf(timestamp)` is Python's µs.
 */
export function secondsToMs(seconds: number): number {
  let whole = Math.trunc(seconds)
  let us = roundHalfEven((seconds - whole) * 1e6)
  if (us >= 1e6) {
    us -= 1e6
    whole += 1
  } else if (us < 0) {
    us += 1e6
    whole -= 1
  }
  return (whole * 1e6 + us) / 1000
}

/**
 * The seconds to store for a ms timestamp: the float Python's `datetime.timestamp()` gives for its
 * microsecond (`µs / 10**6`, correctly rounded), so a timestamp read from a TwainMQ line is written
 * back as the same float. TwainMQ times have microsecond precision: finer fractions are rounded.
 */
export function msToSeconds(ms: number): number {
  return microsOf(ms) / 1e6
}

/** Decode the TS field at `buf[start, start + 10)` to stored seconds. */
export function decodeSecondsField(buf: Uint8Array, start: number): number {
  scratch.writeUInt32BE(b85DecodeWord(buf, start, start + 5), 0)
  scratch.writeUInt32BE(b85DecodeWord(buf, start + 5, start + 10), 4)
  return scratch.readDoubleBE(0)
}
