import type { KeyCodec } from '../../../core/keys.js'
import type { EntryRef, SharedDelivery } from '../../shared.js'
import { decodeEntry, eachScripted, isOffsetId, offsetOf } from '../entry-codec.js'
import type { RedisKeys } from '../keys.js'

/** An entry a member holds: handed out (or buffered) and not yet acknowledged or given back. */
export interface Held {
  /** Redis's delivery count of the entry. */
  count: number
  /** When it was last delivered or refreshed (ms). */
  refreshed: number
  /** Acknowledged; the XACK is waiting or under way. */
  acked?: boolean
  /** Being given back: held until the release is done, so a look for unknown entries skips it. */
  given?: boolean
}

/**
 * One partition stream as a shared-group member sees it: what it holds, its waiting
 * acknowledgements and where its recovery and claim scans stand.
 */
export class MemberPartition {
  /** Stream key. */
  readonly key: string
  /** The group's state of the partition (its `committed` offset). */
  readonly stateKey: string
  /** Own pending entries after this ID are still to be re-read (a restart); undefined = done. */
  recoverFrom: string | undefined = '0'
  /**
   * Own pending entries after this ID are to be looked at for ones the member does not hold ('' =
   * from the start; undefined = none to look at): a reply that may have been lost (decision 181).
   */
  adoptFrom: string | undefined = undefined
  /** Where the next XAUTOCLAIM continues. */
  claimCursor = '0-0'
  /** Entries held, by offset. */
  readonly held = new Map<number, Held>()
  /** Offsets acknowledged and not yet sent. */
  acks: number[] = []
  /** Acknowledgements being sent. */
  flushing = 0
  /** The highest offset new-entry reads (`XREADGROUP … >`) returned; −1: none yet. */
  newest = -1

  constructor(
    readonly topic: string,
    readonly partition: number,
    readonly codec: KeyCodec,
    keys: RedisKeys,
    group: string,
  ) {
    this.key = keys.stream(topic, partition)
    this.stateKey = keys.partitionGroup(topic, partition, group)
  }

  /** A read of this partition may have been answered without the member getting the reply: look at its own pending entries. */
  doubt(): void {
    this.adoptFrom = ''
  }

  /** An entry without a twainmq record (written by something else): acknowledged with the next batch, never delivered. */
  dropForeign(offset: number, now: number): void {
    this.held.set(offset, { count: 1, refreshed: now, acked: true })
    this.acks.push(offset)
  }

  /**
   * A new-entry read returned `offset` at or below {@link newest}: the group's cursor moved back
   * with the log (decision 112). Entries held from there on are forgotten, with their waiting
   * acknowledgements (they would acknowledge the records now stored there); returns them.
   */
  rollBack(offset: number): EntryRef[] {
    const gone: EntryRef[] = []
    for (const o of [...this.held.keys()]) {
      if (o < offset) continue
      this.held.delete(o)
      gone.push(this.ref(o))
    }
    this.acks = this.acks.filter((o) => o < offset)
    this.newest = offset - 1
    return gone
  }

  ref(offset: number): EntryRef {
    return { topic: this.topic, partition: this.partition, offset }
  }
}

/** Producer ids repeat from entry to entry: decode each distinct one once. */
export class ProducerIds {
  private last: Buffer | undefined
  private text = ''

  of(b: Buffer): string {
    if (this.last === undefined || !b.equals(this.last)) {
      this.last = b
      this.text = b.toString('utf8')
    }
    return this.text
  }
}

/** A delivery from an entry's record. */
export function delivery(
  p: MemberPartition,
  offset: number,
  record: Buffer,
  producerId: string,
  count: number,
): SharedDelivery {
  return { message: decodeEntry(record, p.codec, p.topic, p.partition, offset, producerId), deliveryCount: count }
}

/**
 * Entries as the shared-group scripts return them (`{id, count, record, producer id, ...}`, bulk
 * strings as Buffers): those not held yet become deliveries and are held from now on.
 */
export function takeScripted(p: MemberPartition, flat: unknown[], now: number, ids: ProducerIds): SharedDelivery[] {
  const out: SharedDelivery[] = []
  eachScripted(flat, (id, count, record, producer) => {
    const offset = offsetOf(id)
    if (p.held.has(offset)) return // never hand out an entry it holds
    if (record.length === 0) {
      if (isOffsetId(id)) p.dropForeign(offset, now)
      return
    }
    p.held.set(offset, { count, refreshed: now })
    out.push(delivery(p, offset, record, ids.of(producer), count))
  })
  return out
}
