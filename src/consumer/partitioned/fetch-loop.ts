import type { MessageFactory } from '../../backends/record.js'
import type { Message } from '../../core/types.js'
import type { ConsumerContext } from '../member-core.js'
import type { OwnedPartition } from '../owned-partition.js'
import type { MemberHost } from './host.js'

/** Most messages one read of a partition takes. */
const MAX_FETCH = 1024

/**
 * Hysteresis of the fetch loop: it refills once this much of `maxInFlight` is free, not one
 * message per ack. Settlements wake it only when that much room is free (decision 166).
 */
export function lowWater(maxInFlight: number): number {
  return Math.max(1, Math.floor(maxInFlight / 2))
}

/** What the fetch loop needs besides the member host. */
export interface FetchHost extends MemberHost {
  readonly decode: ConsumerContext['decode']
  /** Something wants messages (an iteration, or `poll()` was called). */
  demand(): boolean
  /** Fetched and not settled, over every partition (bounded by `maxInFlight`). */
  outstanding(): number
  /** What `p`'s next read builds its messages with (the ledger's message class, no copy). */
  messageFactory(p: OwnedPartition): MessageFactory
  /** Hand messages `p` fetched to the ledger (counted outstanding, buffered). */
  buffered(msgs: readonly Message[], p: OwnedPartition): void
  /** New messages are buffered: waiting views take them. */
  wakeViews(): void
  /** Start `p` over at `offset`: nothing of it outstanding, the new position committed next. */
  restart(p: OwnedPartition, offset: number): void
}

/**
 * The partitioned member's reads (kafkajs's runner): demand-driven, over the owned partitions a
 * watch marked dirty, round-robin with a fair share each, while fewer than `maxInFlight` messages
 * are outstanding. It sleeps on `fetchWake` (a watch, a settlement that made room, a new
 * partition, a seek, the shutdown).
 */
export class FetchLoop {
  /** Where the next fetch round starts. */
  private rr = 0

  constructor(private readonly host: FetchHost) {}

  /** Watch `p` for appends (again, when whether the watch keeps the process alive changed). */
  watch(p: OwnedPartition): void {
    const h = this.host
    p.unwatch?.()
    p.unwatch = h.backend.watch(
      p.topic,
      p.partition,
      () => {
        p.dirty = true
        h.fetchWake.wake()
      },
      h.keepAlive(),
    )
  }

  /** Re-subscribe the partitions' watches after `keepAlive()` changed. */
  rewatch(): void {
    for (const p of this.host.parts.values()) if (p.unwatch) this.watch(p)
  }

  /** Run until the member stops running. */
  async run(): Promise<void> {
    const h = this.host
    const max = h.opts.maxInFlight
    while (h.state() === 'running') {
      h.fetchWake.take()
      if (!h.demand()) {
        await h.fetchWake.next() // nothing reads until an iteration or poll() wants messages
        continue
      }
      let progressed = false
      // Round-robin with a fair share per partition, so a backlog on one cannot starve the others.
      const parts = [...h.parts.values()]
      const share = Math.max(1, Math.ceil(max / Math.max(1, parts.length)))
      const start = parts.length ? this.rr % parts.length : 0
      const low = lowWater(max)
      for (let k = 0; k < parts.length; k++) {
        const i = (start + k) % parts.length
        const p = parts[i] as OwnedPartition
        const room = max - h.outstanding()
        if (room <= 0 || (room < low && !progressed)) break
        if (p.revoking || p.lost || !p.dirty || !p.reader) continue
        p.dirty = false
        const want = Math.min(room, share, MAX_FETCH)
        this.rr = i + 1 // the next round starts after the partition served last
        if (await this.read(p, want)) progressed = true
      }
      if (!progressed) await h.fetchWake.next() // shutdown wakes it too
    }
  }

  /** Read up to `want` messages of `p` into the ledger; true when some were buffered. */
  private async read(p: OwnedPartition, want: number): Promise<boolean> {
    const h = this.host
    const gen = p.generation
    let msgs: Message[]
    try {
      msgs = await (p.reader as NonNullable<OwnedPartition['reader']>).read(want, h.messageFactory(p))
      if (h.decode && msgs.length) msgs = await h.decode(msgs)
    } catch (e) {
      h.emitError(e)
      return false
    }
    const rolledBack = p.reader?.takeRollback?.()
    if (rolledBack && h.state() === 'running' && !p.lost && !p.dropped) {
      // The log moved back below what was fetched (decision 112): start over where it changed, so
      // the records now stored there are delivered and the commit follows the new end.
      h.restart(p, rolledBack.from)
      h.emitError(rolledBack)
      return false
    }
    if (h.state() !== 'running' || p.lost || p.dropped || p.revoking || gen !== p.generation) {
      // A seek or revocation happened during the read: its result is stale, and the reader moved
      // past where the partition now wants to fetch from.
      if (!p.dropped && !p.lost) p.reader?.seek(p.position)
      return false
    }
    if (msgs.length === want) p.dirty = true
    if (msgs.length === 0) return false
    h.buffered(msgs, p)
    h.wakeViews()
    return true
  }
}
