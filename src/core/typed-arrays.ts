/** The typed arrays the stores' and the consumer's tables are kept in. */
export type NumberArray = Uint8Array | Uint16Array | Uint32Array | Int32Array | Float64Array

/** `size` (at least 1) doubled until it is at least `need`. */
export function doubledTo(size: number, need: number): number {
  let n = Math.max(1, size)
  while (n < need) n *= 2
  return n
}

/** A new array of `a`'s kind with `capacity` elements, `part` (of the same kind) copied in at `at`, the rest zero. */
export function reallocated<T extends NumberArray>(a: T, capacity: number, part: T, at = 0): T {
  const more = new (a.constructor as new (n: number) => T)(capacity)
  more.set(part, at)
  return more
}
