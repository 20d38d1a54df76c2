import type { EntryRef } from '../../shared.js'
import { redisError } from '../connection.js'
import { Scripts } from '../scripts.js'
import type { DeliveryConfirm } from './shared-confirm.js'
import { idOf } from '../entry-codec.js'
import type { MemberPartition } from './shared-entries.js'

/** Acknowledgements sent in one XACK (and the batch size that sends them at once). */
const ACK_BATCH = 1000

/**
 * A shared member's acknowledgements, batched: one `shared-ack` script call per partition per batch
 * (XACK of up to 1000 IDs plus the group's committed offset), sent when a batch fills up and on
 * `flush()` (the member flushes every `ackIntervalMs` and when leaving).
 */
export class SharedAcks {
  private readonly flushes = new Set<Promise<void>>()

  private readonly ackLua = Scripts.source('shared-ack')

  constructor(
    private readonly scripts: Scripts,
    private readonly group: string,
    private readonly parts: readonly MemberPartition[],
    private readonly committed: (offsets: EntryRef[]) => void,
    private readonly error: (e: Error) => void,
    /** With `replicaAcks`: an acknowledgement is done once replicas hold it (decision 182). */
    private readonly replicas?: DeliveryConfirm,
  ) {}

  /** One `shared-ack` call; with `replicaAcks`, resolved once replicas hold it. */
  private send(p: MemberPartition, chunk: number[]): Promise<[acked: number, committed: string]> {
    const args = [this.group, ...chunk.map(idOf)] as const
    if (!this.replicas) return this.scripts.call('shared-ack', [p.key, p.stateKey], args)
    const what = `Shared group "${this.group}": acknowledgement of ${chunk.length} entries of "${p.topic}" partition ${p.partition}`
    return this.replicas.run(this.ackLua, [p.key, p.stateKey], args, what) as Promise<[number, string]>
  }

  /** Acknowledge an entry the member holds (one it does not hold was claimed or trimmed: its XACK would acknowledge someone else's delivery). */
  ack(p: MemberPartition, offset: number): void {
    const h = p.held.get(offset)
    if (!h || h.acked || h.given) return
    h.acked = true
    p.acks.push(offset)
    if (p.acks.length >= ACK_BATCH) this.track(this.flushPart(p)).catch((e) => this.error(e as Error))
  }

  private track(p: Promise<void>): Promise<void> {
    this.flushes.add(p)
    void p.then(
      () => this.flushes.delete(p),
      () => this.flushes.delete(p),
    )
    return p
  }

  private async flushPart(p: MemberPartition): Promise<void> {
    if (p.acks.length === 0) return
    const offsets = p.acks
    p.acks = []
    let sent = 0
    let committed: string | undefined
    try {
      while (sent < offsets.length) {
        const chunk = offsets.slice(sent, sent + ACK_BATCH)
        const [, c] = await this.send(p, chunk)
        for (const o of chunk) p.held.delete(o)
        sent += chunk.length
        if (c !== '') committed = c
      }
    } catch (e) {
      // Not sent: they go with the next flush.
      p.acks = offsets.slice(sent).concat(p.acks)
      throw redisError(
        `Shared group "${this.group}": acknowledgement of ${offsets.length - sent} entries of "${p.topic}" partition ${p.partition} failed`,
        e,
      )
    } finally {
      if (committed !== undefined) this.committed([p.ref(Number(committed))])
    }
  }

  /** Send every waiting acknowledgement, and wait for those under way; rejects with the first failure. */
  async flush(): Promise<void> {
    const sends = this.parts.filter((p) => p.acks.length > 0).map((p) => this.track(this.flushPart(p)))
    const all = await Promise.allSettled([...sends, ...this.flushes])
    const failed = all.find((r): r is PromiseRejectedResult => r.status === 'rejected')
    if (failed) throw failed.reason
  }
}
