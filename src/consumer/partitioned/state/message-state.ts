import { InvalidArgumentError } from '../../../core/errors.js'
import type { Key } from '../../../core/types.js'
import type { PreparedRecord } from '../../../producer/send-record.js'
import type { PartitionState, StatefulMessage, StateWrite } from './partition-state.js'
import { decodeStateKey, encodeStateKey } from './state-key.js'
import {
  deferredBytes,
  flushWrite,
  MAX_STATE_BYTES,
  MAX_STATE_WRITES,
  STATE_RECORD_OVERHEAD,
  type OwnedWrites,
  type StateStore,
} from './state-store.js'

/** What a message's state view asks of its message. */
export interface StateOwner extends StatefulMessage {
  /** Its partition's state (undefined: its partition is gone). */
  partitionState(): PartitionState | undefined
  /** The generation of its partition it was read in. */
  stateGeneration(): number
  /** Why it may not write now (settled, ack called), or undefined. */
  writeRefusal(): string | undefined
  /** A write checked and encoded as its changelog record (throws as a send of it would). */
  prepareState(key: string, value: unknown): PreparedRecord
  /** The changelog's `maxMessageBytes`: a write whose encoding waits must be bound below it. */
  stateRecordLimit(): number
}

/** `ProcessorMessage.state`: the partition's state, read and written as this message. */
export class MessageState implements StateStore, OwnedWrites {
  constructor(private readonly m: StateOwner) {}

  get<T = unknown>(key: Key): T | undefined {
    return this.m.partitionState()?.get(encodeStateKey(key)) as T | undefined
  }

  has(key: Key): boolean {
    return this.m.partitionState()?.has(encodeStateKey(key)) ?? false
  }

  set(key: Key, value: unknown): void {
    if (value === undefined || value === null)
      throw new InvalidArgumentError(
        `state.set(${JSON.stringify(String(key))}) needs a value, got ${String(value)}: use delete()`,
      )
    this.write(key, value, false)
  }

  /** @internal `set` of a value the caller made for this write and never changes (`OwnedWrites`). */
  setOwned(key: Key, value: unknown, bytes?: number): void {
    this.write(key, value, true, bytes)
  }

  delete(key: Key): void {
    this.write(key, null, false)
  }

  get size(): number {
    return this.m.partitionState()?.size ?? 0
  }

  *entries<T = unknown>(): IterableIterator<[Key, T]> {
    const s = this.m.partitionState()
    if (s === undefined) return
    for (const [k, v] of s.entries()) yield [decodeStateKey(k), v as T]
  }

  /** `known`: `value`'s `deferredBytes` bound, when the writer gave it. */
  private write(key: Key, value: unknown, owned: boolean, known?: number): void {
    const k = encodeStateKey(key)
    const why = this.m.writeRefusal()
    if (why !== undefined) throw new InvalidArgumentError(`state write of key ${JSON.stringify(String(key))}: ${why}`)
    const s = this.m.partitionState()
    if (s === undefined) return // its partition is gone: the message is not acked, nothing is kept
    const had = s.writeOf(this.m, k)
    if (had === undefined && s.writesOf(this.m) >= MAX_STATE_WRITES)
      throw new InvalidArgumentError(
        `Message ${this.m.offset} wrote more than ${MAX_STATE_WRITES} state keys (its writes are stored in one call)`,
      )
    // Checked and encoded now (a value that cannot be stored is refused here, not when the
    // message's writes go), unless it cannot fail (a delete's tombstone, whose key is bounded
    // below): then only if it is the last write of its key when its flush is written.
    const bound = value === null ? 0 : (known ?? deferredBytes(value, owned))
    const deferred = k.length * 3 + bound + STATE_RECORD_OVERHEAD
    const w: StateWrite =
      bound >= 0 && deferred <= this.m.stateRecordLimit()
        ? { key: k, value, rec: undefined, bytes: deferred, by: this.m, seq: -1 }
        : { key: k, ...flushWrite(this.m.prepareState(k, value), value, this.m) }
    const total = s.bytesOf(this.m) - (had?.bytes ?? 0) + w.bytes
    if (total > MAX_STATE_BYTES)
      throw new InvalidArgumentError(
        `state write of key ${JSON.stringify(String(key))}: message ${this.m.offset} would write ${total} bytes of state, more than ${MAX_STATE_BYTES} (its writes are stored in one call)`,
      )
    s.write(this.m, this.m.stateGeneration(), k, w)
  }
}
