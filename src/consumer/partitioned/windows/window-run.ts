import type { Key } from '../../../core/types.js'
import type { ProcessorMessageImpl } from '../processor-message.js'
import {
  deferredBytes,
  MAX_STATE_BYTES,
  MAX_STATE_WRITES,
  STATE_RECORD_OVERHEAD,
  type OwnedWrites,
  type StateStore,
} from '../state/state-store.js'
import type { WindowStore } from './windowing.js'

/** The bytes a key can add to a write's changelog record: 3 per UTF-16 unit, and the 2 of `encodeStateKey`'s escape. */
const keyBytes = (key: Key): number => (typeof key === 'string' ? key.length * 3 + 2 : 48)

/** A write's bound not given by its writer (`deferredBytes` is asked in `take`). */
const UNKNOWN = -2

/**
 * The state writes of a run of consecutive messages of one input partition, as `windowed()`
 * processes them (decision 227): each key's last value is held here, not written, and the run's
 * last message writes them all when the run ends (at the end of the batch the messages came in),
 * each earlier message being acked as **carried** — its turn in the partition's flushes joins the
 * flush of that last message's writes, so no message of the run is committed before the writes
 * that hold what it did are stored.
 *
 * A message is placed in two steps: its writes go to a layer of their own (`cur`) over the run's,
 * and are taken into the run (`take`) only when the run stays within one message's limits
 * (`MAX_STATE_WRITES` keys, `MAX_STATE_BYTES` by the bound `deferredBytes` gives) and every value
 * can wait to be encoded; otherwise the run ends before the message, which then writes its own
 * layer itself (`ownWrites`), checked as any message's writes are.
 */
export class WindowRun implements WindowStore {
  /** The run's writes: each key's last value (`null`: deleted). */
  private readonly dirty = new Map<Key, unknown>()
  /** A bound on the bytes of the run's records (each write counted, even of a key written before). */
  private bytes = 0
  /** The messages of the run, in offset order: every one but the last is acked as carried. */
  msgs: Array<ProcessorMessageImpl<unknown>> = []
  /** The message being placed: its writes (keys and values, in the order made). */
  private readonly curKeys: Key[] = []
  private readonly curValues: unknown[] = []
  /** Whether each was made with `setOwned` (`OwnedWrites`), and its bound when the writer gave it (else `UNKNOWN`). */
  private readonly curOwned: boolean[] = []
  private readonly curBounds: number[] = []
  /** How many of the `cur` entries are the placed message's (the arrays are reused, not emptied). */
  private curN = 0
  /** The message being placed: what the run does not hold it reads from its partition's state (earlier runs' writes included). */
  private placing: ProcessorMessageImpl<unknown> | undefined
  /** The key `get` last looked up in `dirty` while placing, and whether it was there (`take` need not look again). */
  private seenKey: Key | undefined = undefined
  private seenIn = false

  /** Start placing `m`: reads see its own writes, then the run's, then its partition's state. */
  begin(m: ProcessorMessageImpl<unknown> | undefined): void {
    this.placing = m
    this.curN = 0
    this.seenKey = undefined
  }

  get<T = unknown>(key: Key): T | undefined {
    const keys = this.curKeys
    for (let i = this.curN - 1; i >= 0; i--)
      if (keys[i] === key) {
        const v = this.curValues[i]
        return (v === null ? undefined : v) as T | undefined
      }
    const v = this.dirty.get(key)
    this.seenKey = key
    this.seenIn = v !== undefined
    if (v !== undefined) return (v === null ? undefined : v) as T | undefined
    return (this.placing as ProcessorMessageImpl<unknown>).state.get<T>(key)
  }

  set(key: Key, value: unknown): void {
    this.put(key, value, false, UNKNOWN)
  }

  setOwned(key: Key, value: unknown, bytes = UNKNOWN): void {
    this.put(key, value, true, bytes)
  }

  delete(key: Key): void {
    this.put(key, null, false, 0)
  }

  private put(key: Key, value: unknown, owned: boolean, bound: number): void {
    const i = this.curN++
    this.curKeys[i] = key
    this.curValues[i] = value
    this.curOwned[i] = owned
    this.curBounds[i] = bound
  }

  /** Whether the run holds writes. */
  get empty(): boolean {
    return this.dirty.size === 0
  }

  /**
   * Take the placed message's writes into the run, if the run stays within one message's limits
   * and each value's encoding can wait (`recordLimit`: the changelog's `maxMessageBytes`); false
   * (nothing taken) otherwise.
   */
  take(recordLimit: number): boolean {
    const keys = this.curKeys
    const n = this.curN
    if (n === 0) return true
    let added = 0
    let bytes = this.bytes
    for (let i = 0; i < n; i++) {
      const given = this.curBounds[i] as number
      const b = given !== UNKNOWN ? given : deferredBytes(this.curValues[i], this.curOwned[i] as boolean)
      if (b < 0) return false
      const rec = keyBytes(keys[i] as Key) + b + STATE_RECORD_OVERHEAD
      if (rec > recordLimit) return false
      bytes += rec
      const k = keys[i] as Key
      if (!(k === this.seenKey ? this.seenIn : this.dirty.has(k))) added++
    }
    if (this.dirty.size + added > MAX_STATE_WRITES || bytes > MAX_STATE_BYTES) return false
    for (let i = 0; i < n; i++) this.dirty.set(keys[i] as Key, this.curValues[i])
    this.bytes = bytes
    this.begin(undefined)
    return true
  }

  /** The bound the writer gave of the placed message's write `i`, if any. */
  private bound(i: number): number | undefined {
    const b = this.curBounds[i] as number
    return b === UNKNOWN ? undefined : b
  }

  /** The placed message's writes, made as its own (the run they did not fit in ended before it). */
  ownWrites(m: ProcessorMessageImpl<unknown>): void {
    const st = m.state as StateStore & OwnedWrites
    const keys = this.curKeys
    for (let i = 0; i < this.curN; i++) {
      const v = this.curValues[i]
      if (v === null) st.delete(keys[i] as Key)
      else if (this.curOwned[i] === true) st.setOwned(keys[i] as Key, v, this.bound(i))
      else st.set(keys[i] as Key, v)
    }
    this.begin(undefined)
  }

  /** The run's writes, made as `m`'s (its last message), and the run emptied. */
  writeAs(m: ProcessorMessageImpl<unknown>): void {
    const st = m.state as StateStore & OwnedWrites
    // Every value taken can wait to be encoded: an owned object, or a value that cannot change.
    for (const [k, v] of this.dirty) {
      if (v === null) st.delete(k)
      else st.setOwned(k, v)
    }
    this.reset()
  }

  /** An empty run (the writes of a message being placed stay). */
  reset(): void {
    this.dirty.clear()
    this.seenKey = undefined
    this.bytes = 0
    this.msgs = []
  }
}
