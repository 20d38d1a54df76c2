import type { Message } from '../../core/types.js'
import type { FetchRounds } from '../fetch-loop.js'
import type { PartitionedLedger } from './ledger.js'
import type { OwnedPartition } from './owned-partition.js'

/** Most messages one read of a partition takes. */
const MAX_FETCH = 1024

/**
 * The partitioned member's reads, the rounds of its fetch loop (`../fetch-loop.ts`): over the
 * owned partitions a watch marked dirty, round-robin with a fair share each, while fewer than
 * `maxInFlight` messages are outstanding. It keeps the partitions' watches, which wake the loop.
 */
export class PartitionReads<V> implements FetchRounds {
  /** Where the next fetch round starts. */
  private rr = 0

  constructor(private readonly ledger: PartitionedLedger<V>) {}

  get outstanding(): number {
    return this.ledger.outstanding
  }

  /** Watch `p` for appends (again, when whether the watch keeps the process alive changed). */
  watch(p: OwnedPartition): void {
    const core = this.ledger.core
    p.unwatch?.()
    p.unwatch = core.backend.watch(
      p.topic,
      p.partition,
      () => {
        p.dirty = true
        core.fetchWake.wake()
      },
      core.keepAlive,
    )
  }

  /** Re-subscribe the partitions' watches after `keepAlive` changed. */
  rewatch(): void {
    for (const p of this.ledger.parts.values()) if (p.unwatch) this.watch(p)
  }

  /** One round over the dirty partitions; true when some messages were buffered. */
  async round(): Promise<boolean> {
    const ledger = this.ledger
    const max = ledger.core.opts.maxInFlight
    let progressed = false
    // Round-robin with a fair share per partition, so a backlog on one cannot starve the others.
    const parts = [...ledger.parts.values()]
    const share = Math.max(1, Math.ceil(max / Math.max(1, parts.length)))
    const start = parts.length ? this.rr % parts.length : 0
    for (let k = 0; k < parts.length; k++) {
      const i = (start + k) % parts.length
      const p = parts[i] as OwnedPartition
      // The loop began the round at the refill mark; later partitions take what room is left.
      const room = max - ledger.outstanding
      if (room <= 0) break
      if (p.revoking || p.lost || !p.dirty || !p.reader || p.pausedUntil > Date.now()) continue
      p.dirty = false
      const want = Math.min(room, share, MAX_FETCH)
      this.rr = i + 1 // the next round starts after the partition served last
      if (await this.read(p, want)) progressed = true
    }
    return progressed
  }

  /** Read up to `want` messages of `p` into the ledger; true when some were buffered. */
  private async read(p: OwnedPartition, want: number): Promise<boolean> {
    const ledger = this.ledger
    const core = ledger.core
    const gen = p.generation
    let msgs: Message[]
    try {
      msgs = await (p.reader as NonNullable<OwnedPartition['reader']>).read(want, ledger.messageFactory(p))
      if (core.decode && msgs.length) msgs = await core.decode(msgs)
    } catch (e) {
      core.emitError(e)
      return false
    }
    const rolledBack = p.reader?.takeRollback()
    if (rolledBack && core.state === 'running' && !p.lost && !p.dropped) {
      // The log moved back below what was fetched (decision 112): start over where it changed, so
      // the records now stored there are delivered and the commit follows the new end.
      ledger.restart(p, rolledBack.from)
      core.emitError(rolledBack)
      return false
    }
    if (core.state !== 'running' || p.lost || p.dropped || p.revoking || gen !== p.generation) {
      // A seek or revocation happened during the read: its result is stale, and the reader moved
      // past where the partition now wants to fetch from.
      if (!p.dropped && !p.lost) p.reader?.seek(p.position)
      return false
    }
    if (msgs.length === want) p.dirty = true
    if (msgs.length === 0) return false
    ledger.buffered(msgs, p)
    core.wakeViews()
    return true
  }
}
