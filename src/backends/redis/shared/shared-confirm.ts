import type { SharedDelivery } from '../../shared.js'
import { redisError, type Client } from '../connection.js'
import { idOf, offsetOf } from '../entry-codec.js'
import { writeAndWait, type ReplicaAckPolicy } from '../replica-acks.js'
import { Scripts } from '../scripts.js'
import type { MemberPartition } from './shared-entries.js'
import type { MemberState } from './shared-state.js'

/**
 * With `replicaAcks`, a shared member hands an entry out only once replicas hold its delivery to
 * the member (decision 182): XREADGROUP's effect on the group is replicated like any write, and a
 * failover to a replica it had not reached gave the entry out again, to whichever member read next.
 * One pipeline per partition: the `shared-confirm` script on the node serving the partition now
 * (which entries it holds as the member's; each claimed again, a write), then `WAIT` on the same
 * connection, in slices, until `policy.replicas` replicas acknowledged or `policy.timeoutMs` passed.
 * Acknowledgements wait the same way (`run`), so one a failover lost is not taken for done.
 */
export class DeliveryConfirm {
  private readonly lua = Scripts.source('shared-confirm')

  constructor(
    private readonly client: Client,
    readonly policy: ReplicaAckPolicy,
  ) {}

  /**
   * The offsets, of those given, whose delivery to `member` replicas hold; rejects (a retriable
   * `TimeoutError` or the connection's failure) when that is not known within the policy's time.
   */
  async confirm(
    key: string,
    group: string,
    member: string,
    offsets: readonly number[],
    what: string,
  ): Promise<Set<number>> {
    const mine = (await this.run(this.lua, [key], [group, member, ...offsets.map(idOf)], what)) as Array<
      string | Buffer
    >
    return new Set(mine.map((id) => offsetOf(id)))
  }

  /**
   * Run a script that writes (`lua`, on the node serving `keys`), then wait until the replicas
   * hold what it wrote; the script runs again before each slice of the wait, so it must be
   * idempotent (XACK is). Resolves with its last reply.
   */
  async run(
    lua: string,
    keys: readonly string[],
    args: ReadonlyArray<string | number>,
    what: string,
  ): Promise<unknown> {
    return writeAndWait(this.client, this.policy, (p) => p.eval(lua, keys.length, ...keys, ...args), what)
  }
}

/**
 * Deliveries whose delivery to the member replicas hold (decision 182). The others are not handed
 * out and no longer held: entries the node serving the partition does not hold as the member's
 * are read again by whichever member comes next; when that is not known in time, the partition is
 * looked at again for the member's own pending entries.
 */
export async function confirmDeliveries(
  s: MemberState,
  confirm: DeliveryConfirm,
  got: readonly SharedDelivery[],
): Promise<SharedDelivery[]> {
  const by = new Map<MemberPartition, SharedDelivery[]>()
  for (const d of got) {
    const p = s.part(d.message)
    if (!p) continue
    const list = by.get(p)
    if (list) list.push(d)
    else by.set(p, [d])
  }
  const out: SharedDelivery[] = []
  await Promise.all(
    [...by].map(async ([p, list]) => {
      let mine: Set<number>
      try {
        mine = await confirm.confirm(
          p.key,
          s.group,
          s.name,
          list.map((d) => d.message.offset),
          `Shared group "${s.group}": delivery to member "${s.name}" of ${list.length} entries of "${p.topic}" partition ${p.partition}`,
        )
      } catch (e) {
        mine = new Set()
        p.doubt()
        if (!s.stopped)
          s.events.error(
            redisError(
              `Shared group "${s.group}": member "${s.name}" could not confirm its delivery of ${list.length} entries of "${p.topic}" partition ${p.partition} with replicas; they are read again`,
              e,
            ),
          )
      }
      for (const d of list) {
        const o = d.message.offset
        if (mine.has(o)) out.push(d)
        else if (!p.held.get(o)?.acked) {
          p.held.delete(o)
          // Read again by `>` if the group lost them: not a rollback.
          if (o <= p.newest) p.newest = o - 1
        }
      }
    }),
  )
  return out
}
