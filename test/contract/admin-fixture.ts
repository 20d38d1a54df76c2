/**
 * Groups of both modes for the group-admin and consumed-retention contract tests (not a test file):
 * a partitioned group with given commits, and a shared group (where the kind has shared groups)
 * that acknowledged a given prefix of each partition.
 */
import type { Backend } from '../../src/backends/backend.js'
import type { MemberSpec } from '../../src/backends/group.js'
import { HOST } from '../../src/backends/liveness.js'
import type {
  SharedDelivery,
  SharedMember,
  SharedMemberEvents,
  SharedMemberOptions,
} from '../../src/backends/shared.js'

export const memberSpec = (id: string, topics: string[], o: Partial<MemberSpec> = {}): MemberSpec => ({
  id,
  name: `name-${id}`,
  topics,
  sessionTimeoutMs: 30_000,
  pid: process.pid,
  host: HOST,
  ...o,
})

/**
 * Join `group` as its only member `id` (it leases every partition of `topic`) and commit
 * `offsets[p]` on each partition p; the member stays live unless `leave`.
 */
export async function commitPartitioned(
  b: Backend,
  group: string,
  topic: string,
  offsets: readonly number[],
  o: { id?: string; leave?: boolean } = {},
): Promise<void> {
  const id = o.id ?? `${group}-m`
  const { owned } = await b.groups.groupHeartbeat(group, memberSpec(id, [topic]), [])
  if (owned.length !== offsets.length)
    throw new Error(`member ${id} of "${group}" leases ${owned.length} partitions, expected ${offsets.length}`)
  const fenced = await b.groups.groupCommit(
    group,
    id,
    offsets.map((offset, partition) => ({
      topic,
      partition,
      offset,
      epoch: owned.find((l) => l.partition === partition)?.epoch ?? -1,
    })),
  )
  if (fenced.length > 0) throw new Error(`commits of ${id} fenced: ${JSON.stringify(fenced)}`)
  if (o.leave !== false) await b.groups.groupLeave(group, id)
}

const quiet: SharedMemberEvents = {
  lost: () => undefined,
  trimmed: () => undefined,
  committed: () => undefined,
  error: () => undefined,
  fenced: () => undefined,
  rolledBack: () => undefined,
}

/**
 * Join shared group `group` on `topic` as `name`, take every entry (`total` of them), acknowledge
 * those below `acked[p]` on partition p and flush: the rest stays pending. Returns the live member.
 */
export async function ackShared(
  b: Backend,
  group: string,
  topic: string,
  total: number,
  acked: readonly number[],
  name = 's1',
): Promise<SharedMember> {
  if (!b.shared) throw new Error(`backend ${b.kind} has no shared groups`)
  const options: SharedMemberOptions = {
    group,
    name,
    topics: [topic],
    from: 'start',
    claimAfterMs: 60_000,
    ackIntervalMs: 50,
    sessionTimeoutMs: 30_000,
    heartbeatIntervalMs: 1000,
  }
  const m = await b.shared.join(options, quiet)
  const got: SharedDelivery[] = []
  const deadline = Date.now() + 10_000
  while (got.length < total) {
    if (Date.now() > deadline) throw new Error(`shared member ${name} got ${got.length} of ${total} entries`)
    got.push(...(await m.fetch(total - got.length, AbortSignal.timeout(1000))))
  }
  for (const d of got)
    if (d.message.offset < (acked[d.message.partition] ?? 0))
      m.ack({ topic, partition: d.message.partition, offset: d.message.offset })
  await m.flush()
  return m
}
