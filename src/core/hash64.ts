import type { Key } from './types.js'

const C1 = 0xbf58476d1ce4e5b9n
const C2 = 0x94d049bb133111ebn

/** A partitioner maps a key to a partition in `0..partitions-1`. */
export type Partitioner = (key: Key, partitions: number) => number

function keyToBigInt(key: Key): bigint {
  if (typeof key === 'bigint') return key
  if (typeof key === 'number') return BigInt(key)
  // Python: int.from_bytes(key.encode('utf-8'), 'big'), unpadded (also for charN keys).
  const bytes = Buffer.from(key, 'utf8')
  if (bytes.length === 0) return 0n
  return BigInt('0x' + bytes.toString('hex'))
}

/**
 * TwainMQ's `partition_hash64`: the splitmix64 finaliser on *unbounded* integers (no 64-bit
 * masking, as Python computes it), so a key lands in the same partition as in Python TwainMQ.
 */
export function hash64(key: Key, partitions: number): number {
  let x = keyToBigInt(key)
  x = (x ^ (x >> 30n)) * C1
  x = (x ^ (x >> 27n)) * C2
  x = x ^ (x >> 31n)
  return Number(x % BigInt(partitions))
}

/**
 * `hash64` with small caches, as real workloads repeat keys: BigInt arithmetic costs 0.2–1 µs per
 * key. Number keys use a direct-mapped table of `limit` slots (a lookup builds nothing); other
 * keys a `Map` of up to `limit` entries, simply cleared when full.
 */
export function cachedHash64(limit = 4096): Partitioner {
  const cache = new Map<string, number>()
  // Number keys: a direct-mapped cache (slot = the key's low bits), no string built per lookup.
  const size = 2 ** Math.max(4, Math.ceil(Math.log2(limit)))
  const keys = new Float64Array(size)
  const counts = new Int32Array(size) // partition counts; 0 = empty
  const parts = new Int32Array(size)
  return (key, partitions) => {
    if (partitions === 1) return 0
    if (typeof key === 'number' && Number.isSafeInteger(key)) {
      const slot = key & (size - 1)
      if (keys[slot] === key && counts[slot] === partitions) return parts[slot] as number
      const p = hash64(key, partitions)
      keys[slot] = key
      counts[slot] = partitions
      parts[slot] = p
      return p
    }
    const id = `${typeof key}:${String(key)}:${partitions}`
    let p = cache.get(id)
    if (p === undefined) {
      p = hash64(key, partitions)
      if (cache.size >= limit) cache.clear()
      cache.set(id, p)
    }
    return p
  }
}
