import type { KeyCodec } from '../../core/keys.js'
import { readRecord, recordEnd } from '../record-codec.js'
import type { EntryRef, SharedDelivery } from '../shared.js'
import type { RedisKeys } from './keys.js'

/** An entry a member holds: handed out (or buffered) and not yet acknowledged or given back. */
export interface Held {
  /** Redis's delivery count of the entry. */
  count: number
  /** When it was last delivered or refreshed (ms). */
  refreshed: number
  /** Acknowledged; the XACK is waiting or under way. */
  acked?: boolean
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
  /** Where the next XAUTOCLAIM continues. */
  claimCursor = '0-0'
  /** Entries held, by offset. */
  readonly held = new Map<number, Held>()
  /** Offsets acknowledged and not yet sent. */
  acks: number[] = []
  /** Acknowledgements being sent. */
  flushing = 0

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

  /** An entry without a twainmq record (written by something else): acknowledged with the next batch, never delivered. */
  dropForeign(offset: number, now: number): void {
    this.held.set(offset, { count: 1, refreshed: now, acked: true })
    this.acks.push(offset)
  }

  ref(offset: number): EntryRef {
    return { topic: this.topic, partition: this.partition, offset }
  }
}

/** The offset of an entry ID `<offset>-1`. */
export function offsetOf(id: Buffer | string): number {
  let n = 0
  if (typeof id === 'string') {
    for (let i = 0; i < id.length; i++) {
      const c = id.charCodeAt(i)
      if (c < 48 || c > 57) break
      n = n * 10 + (c - 48)
    }
    return n
  }
  for (let i = 0; i < id.length; i++) {
    const c = id[i] as number
    if (c < 48 || c > 57) break
    n = n * 10 + (c - 48)
  }
  return n
}

/** Whether an entry ID has the form twainmq writes (`<offset>-1`), so its offset names it. */
export function isOffsetId(id: Buffer): boolean {
  return id.length >= 3 && id[id.length - 1] === 0x31 && id[id.length - 2] === 0x2d
}

/** The entry ID of an offset. */
export const idOf = (offset: number): string => `${offset}-1`

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
export function delivery(p: MemberPartition, offset: number, record: Buffer, producerId: string, count: number): SharedDelivery {
  return { message: readRecord(record, 0, recordEnd(record, 0), 0, p.codec, p.topic, p.partition, offset, producerId), deliveryCount: count }
}

/**
 * Entries as the shared-group scripts return them (`{id, count, record, producer id, ...}`, bulk
 * strings as Buffers): those not held yet become deliveries and are held from now on.
 */
export function takeScripted(p: MemberPartition, flat: unknown[], now: number, ids: ProducerIds): SharedDelivery[] {
  const out: SharedDelivery[] = []
  for (let i = 0; i + 3 < flat.length; i += 4) {
    const offset = offsetOf(flat[i] as Buffer)
    const count = Number(flat[i + 1])
    const record = flat[i + 2] as Buffer
    if (p.held.has(offset)) continue // never hand out an entry it holds
    if (record.length === 0) {
      if (isOffsetId(flat[i] as Buffer)) p.dropForeign(offset, now)
      continue
    }
    p.held.set(offset, { count, refreshed: now })
    out.push(delivery(p, offset, record, ids.of(flat[i + 3] as Buffer), count))
  }
  return out
}

/** Offsets of a list of entry IDs. */
export const offsetsOf = (ids: unknown): number[] => (Array.isArray(ids) ? ids.map((id) => offsetOf(id as Buffer)) : [])
