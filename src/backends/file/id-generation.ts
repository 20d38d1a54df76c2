import { doubledTo, reallocated } from '../../core/typed-arrays.js'

/** A slot's tag when empty, and when its entry was removed (a tombstone: a lookup goes past it). */
const EMPTY = 0
const REMOVED = 1

/** The tag a slot keeps of a hash: its top byte, never `EMPTY` or `REMOVED` (the slot is chosen by its low bits). */
const tagOf = (h: number): number => {
  const t = h >>> 24
  return t < 2 ? t + 2 : t
}

/** A string's hash (FNV-1a over its UTF-16 code units, mixed), never `EMPTY` or `REMOVED`. */
export function idHash(id: string): number {
  let h = 0x811c9dc5
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193)
  h ^= h >>> 15
  h = Math.imul(h, 0x2c1b3c6d)
  h ^= h >>> 12
  return h === EMPTY || h === REMOVED ? 2 : h
}

/** Grow a typed array to hold at least `need` elements (doubling), keeping the first `used`. */
function grown<T extends Int32Array | Float64Array | Uint16Array>(a: T, need: number, used: number): T {
  return need <= a.length ? a : reallocated(a, doubledTo(a.length * 2, need), a.subarray(0, used) as T)
}

/**
 * One generation of a partition's ids (see `IdTable`): per id, an entry with the offset of the
 * record that stored it and when (ms). Entries are numbered in the order they were added (a
 * number stays valid while the generation lives); an open-addressing hash table in typed arrays
 * finds them, and the ids' code units are copied into one array. So a lookup of an id the
 * generation does not hold (the common case: a new send) reads a slot or two of a flat array,
 * where a `Map` of 100,000 strings reads scattered entries and strings; and the generation holds
 * no string or object for the collector to trace or move. A slot keeps a byte of its entry's hash
 * (a tag), and the entry its whole hash: the slots a lookup reads at random are a quarter of the
 * bytes they would be with whole hashes, so more of them stay in the processor's cache.
 */
export class IdGeneration {
  /** Entries added (removed ones included: entry numbers stay valid). */
  size = 0
  /** Entries held (not removed). */
  live = 0
  /** The newest `at` of its entries (ms). */
  newest = -Infinity
  // The hash table: per slot, the tag of its entry's hash (or EMPTY, REMOVED) and the entry's number.
  private mask: number
  private tags: Uint8Array
  private entries: Int32Array
  // Per entry: its id's hash, where its id's code units start in `chars`, how many, its offset and time.
  private hashOf = new Int32Array(1 << 9)
  private starts = new Int32Array(1 << 9)
  private lengths = new Int32Array(1 << 9)
  private offsets = new Float64Array(1 << 9)
  private ats = new Float64Array(1 << 9)
  private chars = new Uint16Array(1 << 12)
  private used = 0

  constructor() {
    this.tags = new Uint8Array(1 << 10)
    this.entries = new Int32Array(1 << 10)
    this.mask = this.tags.length - 1
  }

  /** Empty it, keeping its arrays (a generation dropped is used again as the new current one). */
  reset(): this {
    this.tags.fill(EMPTY)
    this.size = 0
    this.live = 0
    this.used = 0
    this.newest = -Infinity
    return this
  }

  /** The entry of `id` (whose `idHash` is `h`), or -1. */
  find(id: string, h: number): number {
    const slot = this.slotOf(id, h)
    return slot < 0 ? -1 : (this.entries[slot] as number)
  }

  /** Add `id` (hash `h`, not held), stored at `offset` at `at`: its entry. */
  add(id: string, h: number, offset: number, at: number): number {
    const e = this.size++
    this.live++
    if (e >= this.offsets.length) this.growEntries(e + 1)
    const n = id.length
    const start = this.used
    if (start + n > this.chars.length) this.chars = grown(this.chars, start + n, start)
    const chars = this.chars
    for (let k = 0; k < n; k++) chars[start + k] = id.charCodeAt(k)
    this.used = start + n
    this.hashOf[e] = h
    this.starts[e] = start
    this.lengths[e] = n
    this.offsets[e] = offset
    this.ats[e] = at
    if (at > this.newest) this.newest = at
    if (this.size * 2 > this.tags.length) this.rehash()
    this.place(h, e)
    return e
  }

  offsetOf(e: number): number {
    return this.offsets[e] as number
  }

  atOf(e: number): number {
    return this.ats[e] as number
  }

  /** Set an entry's offset and time. */
  set(e: number, offset: number, at: number): void {
    this.offsets[e] = offset
    this.ats[e] = at
    if (at > this.newest) this.newest = at
  }

  /** Remove `id`'s entry (hash `h`): a lookup no longer finds it. */
  remove(id: string, h: number): void {
    const slot = this.slotOf(id, h)
    if (slot < 0) return
    this.tags[slot] = REMOVED
    this.live--
  }

  /** The slot of `id` (whose `idHash` is `h`), or -1. */
  private slotOf(id: string, h: number): number {
    const { mask, tags } = this
    const t = tagOf(h)
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const x = tags[i] as number
      if (x === EMPTY) return -1
      if (x !== t) continue
      const e = this.entries[i] as number
      if (this.hashOf[e] === h && this.holds(e, id)) return i
    }
  }

  /** Whether entry `e`'s id is `id`. */
  private holds(e: number, id: string): boolean {
    if (this.lengths[e] !== id.length) return false
    const chars = this.chars
    const start = this.starts[e] as number
    for (let k = 0; k < id.length; k++) if (chars[start + k] !== id.charCodeAt(k)) return false
    return true
  }

  private place(h: number, e: number): void {
    const { mask, tags } = this
    let i = h & mask
    while (tags[i] !== EMPTY) i = (i + 1) & mask
    tags[i] = tagOf(h)
    this.entries[i] = e
  }

  private growEntries(need: number): void {
    const used = this.size - 1
    this.hashOf = grown(this.hashOf, need, used)
    this.starts = grown(this.starts, need, used)
    this.lengths = grown(this.lengths, need, used)
    this.offsets = grown(this.offsets, need, used)
    this.ats = grown(this.ats, need, used)
  }

  /**
   * Number the entries held from 0 again, dropping the removed ones (their slots, numbers and
   * code units): entry numbers held elsewhere are no longer valid. Failed writes remove the
   * entries they added, and their retries add them again: without this, such a generation would
   * grow past its bound.
   */
  compact(): void {
    const { tags, entries, hashOf, starts, lengths, offsets, ats, chars } = this
    const cap = Math.max(1 << 9, this.live)
    let need = 0
    for (let j = 0; j < tags.length; j++) {
      const t = tags[j] as number
      if (t !== EMPTY && t !== REMOVED) need += lengths[entries[j] as number] as number
    }
    this.hashOf = new Int32Array(cap)
    this.starts = new Int32Array(cap)
    this.lengths = new Int32Array(cap)
    this.offsets = new Float64Array(cap)
    this.ats = new Float64Array(cap)
    this.chars = new Uint16Array(Math.max(1 << 12, need))
    let slots = 1 << 10
    while (slots < 2 * this.live) slots *= 2
    this.tags = new Uint8Array(slots)
    this.entries = new Int32Array(slots)
    this.mask = slots - 1
    let k = 0
    let used = 0
    for (let j = 0; j < tags.length; j++) {
      const t = tags[j] as number
      if (t === EMPTY || t === REMOVED) continue
      const e = entries[j] as number
      const h = hashOf[e] as number
      const start = starts[e] as number
      const n = lengths[e] as number
      this.chars.set(chars.subarray(start, start + n), used)
      this.hashOf[k] = h
      this.starts[k] = used
      this.lengths[k] = n
      this.offsets[k] = offsets[e] as number
      this.ats[k] = ats[e] as number
      used += n
      this.place(h, k++)
    }
    this.size = this.live = k
    this.used = used
  }

  /** Twice the slots, every entry not removed placed again. */
  private rehash(): void {
    const { tags, entries } = this
    this.tags = new Uint8Array(tags.length * 2)
    this.entries = new Int32Array(tags.length * 2)
    this.mask = this.tags.length - 1
    for (let j = 0; j < tags.length; j++) {
      const t = tags[j] as number
      if (t === EMPTY || t === REMOVED) continue
      const e = entries[j] as number
      this.place(this.hashOf[e] as number, e)
    }
  }
}
