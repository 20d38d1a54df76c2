import { Cluster, type Redis } from 'ioredis'
import { ConnectionError, TimeoutError } from '../../core/errors.js'
import type { Client } from './connection.js'
import { Scripts } from './scripts.js'

/** `replicaAcks` of `open()`: how many replicas must hold a batch before its send resolves. */
export interface ReplicaAckPolicy {
  /** Replicas that must acknowledge each batch (`WAIT`); 0 = none (a send resolves when the master has it). */
  replicas: number
  /** How long to wait for them, in ms. */
  timeoutMs: number
}

/** A batch as the append script remembers it in the partition's producers hash. */
export interface BatchMark {
  /** `<instance>:<seq % 32>` */
  field: string
  /** `<seq>:<base offset>` */
  value: string
}

/** A pipeline's replies, as ioredis gives them. */
export type PipelineReply = Array<[Error | null, unknown]> | null

/**
 * Waits until replicas hold a batch this client appended. `WAIT` counts the writes of the connection
 * it is sent on, so each WAIT goes in one pipeline after the `replica-check` script on the
 * partition's producers hash: on a Cluster, the pipeline goes to the node serving the slot *now*
 * (after a failover, the promoted replica), the script says whether that node holds the batch and,
 * if it does, writes a mark, so the WAIT after it on the same connection covers the batch however it
 * reached the node. A node that does not hold it (promoted before the batch reached it) makes the
 * wait fail with a retriable `ConnectionError`, and the appender sends the batch again. Before, a
 * WAIT re-issued after a failover went to the new master's connection, which had written nothing,
 * and was answered at once: a send lost with the old master was acknowledged.
 */
export class ReplicaAcks {
  private readonly lua = Scripts.source('replica-check')

  constructor(
    private readonly client: Client,
    readonly policy: ReplicaAckPolicy,
  ) {}

  /**
   * Resolve once `policy.replicas` replicas acknowledged `batch`, written to the partition whose
   * producers hash is `key`; reject with a retriable `TimeoutError` naming `what` when fewer did
   * by `deadline` (ms since the epoch: the send's own, `policy.timeoutMs` after the backend took
   * it), with a retriable `ConnectionError` when the node serving the partition does not hold the
   * batch. A deadline already passed still gets one check and the shortest `WAIT` (1 ms).
   */
  async wait(key: string, batch: BatchMark, what: string, deadline: number): Promise<void> {
    const { replicas, timeoutMs } = this.policy
    const notHeld = `${what}: the master serving the partition now does not hold the batch (a failover to a replica it had not reached); it is sent again`
    const acked = await waitInSlices(replicas, deadline, (slice) => this.checkAndWait(key, batch, slice, what, notHeld))
    if (acked < replicas) {
      throw new TimeoutError(
        `${what}: written to the master, but acknowledged by ${acked} of ${replicaWord(replicas)} within ${timeoutMs} ms (replicaAcks): a failover now could lose it, so the send is not acknowledged; it may still be in the log, and a send again may store it twice`,
      )
    }
  }

  /**
   * Resolve once `policy.replicas` replicas hold what was written to `key`'s slot, known by its last
   * write, `mark` in the hash `key` (a promoted replica holds a prefix of what its master wrote),
   * within `policy.timeoutMs`; else a retriable `TimeoutError` naming `what`, or a retriable
   * `ConnectionError` when the node serving the slot now does not hold the mark.
   */
  async waitForHeld(key: string, mark: BatchMark, what: string): Promise<void> {
    const { replicas, timeoutMs } = this.policy
    const notHeld = `${what}: not on the master serving it now (a failover to a replica it had not reached)`
    const acked = await waitInSlices(replicas, Date.now() + timeoutMs, (slice) =>
      this.checkAndWait(key, mark, slice, what, notHeld),
    )
    if (acked < replicas)
      throw new TimeoutError(
        `${what}: acknowledged by ${acked} of ${replicaWord(replicas)} within ${timeoutMs} ms (replicaAcks)`,
      )
  }

  /** `writeAndWait` on this client: `write`, then `WAIT` for `policy.replicas` replicas. */
  writeAndWait(write: (p: Pipeline) => void, what: string): Promise<unknown> {
    return writeAndWait(this.client, this.policy, write, what)
  }

  /**
   * The error of a send whose deadline passed before its replicas were heard from: the master
   * serving its partition did not answer in time (failing over, frozen, killed), or its `WAIT`
   * queued behind others on the writer's connection to that master.
   */
  late(what: string): InstanceType<typeof TimeoutError> {
    const { replicas, timeoutMs } = this.policy
    return new TimeoutError(
      `${what}: not acknowledged by ${replicaWord(replicas)} within ${timeoutMs} ms (replicaAcks): the partition's master did not answer in time (a failover under way?), so the send is not acknowledged; it may still be in the log, and a send again may store it twice`,
    )
  }

  /** One `replica-check` + `WAIT` pipeline; the number of replicas that acknowledged. */
  private async checkAndWait(
    key: string,
    batch: BatchMark,
    slice: number,
    what: string,
    notHeld: string,
  ): Promise<number> {
    const run = (c: Redis | Cluster, asking: boolean): Promise<PipelineReply> => {
      const p = c.pipeline()
      if (asking) p.asking()
      return p
        .eval(this.lua, 1, key, batch.field, batch.value, Date.now())
        .call('WAIT', String(this.policy.replicas), String(slice))
        .exec()
    }
    let res = await run(this.client, false)
    const ask = res?.[0]?.[0]?.message.match(/^ASK \d+ (\S+)/)
    if (ask) {
      // The slot is migrating and the hash already moved: ask its new node, as a redirected command would.
      const node =
        this.client instanceof Cluster
          ? this.client.nodes('master').find((n) => `${n.options.host}:${n.options.port}` === ask[1])
          : undefined
      if (!node)
        throw new ConnectionError(
          `${what}: the partition's slot is migrating to ${ask[1]}, a node this client has no connection to yet`,
        )
      res = await run(node, true)
    }
    const [check, wait] = res ?? []
    if (!check || !wait) throw new ConnectionError(`${what}: no reply to the replica check`)
    if (check[0]) {
      if (this.client instanceof Cluster && check[0].message.startsWith('MOVED')) void this.client.refreshSlotsCache()
      throw check[0]
    }
    if (wait[0]) throw wait[0]
    if (Number(check[1]) !== 1) throw new ConnectionError(notHeld)
    return Number(wait[1])
  }
}

/** The commands of one pipeline, as ioredis chains them. */
type Pipeline = ReturnType<Client['pipeline']>

/**
 * Run `write` (commands that write, on the node serving their keys now) and a `WAIT` after them in
 * one pipeline, in slices, until `policy.replicas` replicas acknowledged or `policy.timeoutMs`
 * passed: then a retriable `TimeoutError` naming `what`. `WAIT` counts the writes of the connection
 * it is sent on, so the write in the same pipeline is what makes it cover everything the node held
 * before (written there through another connection, or replicated to it before a failover). The
 * write runs again before each slice, so it must be idempotent. Resolves with the first command's
 * last reply.
 */
export async function writeAndWait(
  client: Client,
  policy: ReplicaAckPolicy,
  write: (p: Pipeline) => void,
  what: string,
): Promise<unknown> {
  const { replicas, timeoutMs } = policy
  const deadline = Date.now() + timeoutMs
  let reply: unknown
  const acked = await waitInSlices(replicas, deadline, async (slice) => {
    for (let moved = 0; ; moved++) {
      const p = client.pipeline()
      write(p)
      const res: PipelineReply = await p.call('WAIT', String(replicas), String(slice)).exec()
      const first = res?.[0]
      const wait = res?.[res.length - 1]
      if (!first || !wait || res.length < 2) throw new TimeoutError(`${what}: no reply`)
      const failed = res.find(([err]) => err)?.[0]
      // MOVED: the slot's master changed (a failover) before the client's slot map did. The write
      // did not run, and ioredis does not redirect a pipeline whose WAIT succeeded: ask the
      // cluster where the slot is now and send it again.
      if (failed && client instanceof Cluster && /^MOVED /.test(failed.message) && moved < MAX_MOVED) {
        if (Date.now() >= deadline) throw failed
        await slotsRefreshed(client)
        continue
      }
      if (failed) throw failed
      reply = first[1]
      return Number(wait[1])
    }
  })
  if (acked < replicas)
    throw new TimeoutError(
      `${what}: acknowledged by ${acked} of ${replicaWord(replicas)} within ${timeoutMs} ms (replicaAcks)`,
    )
  return reply
}

/** Redirections one slice of `writeAndWait` follows (a slot moves once per failover). */
const MAX_MOVED = 3

/** Resolves once the Cluster client has asked for the slot map again (whatever the answer). */
function slotsRefreshed(cluster: Cluster): Promise<void> {
  return new Promise((resolve) => cluster.refreshSlotsCache(() => resolve()))
}

/** Longest single `WAIT`: below the Cluster command timeout (1.5 s). */
const WAIT_SLICE_MS = 1000

/**
 * Run `attempt` (a write and a `WAIT` of at most the given ms, on one connection; it resolves with
 * how many replicas acknowledged) until `replicas` did or `deadline` (ms since the epoch) passed;
 * the last count. In slices of at most WAIT_SLICE_MS, so no command waits longer than a Cluster
 * command may: a reply from a master that was frozen and replaced is never waited for. A deadline
 * already passed still gets one attempt, with the shortest `WAIT` (1 ms).
 */
export async function waitInSlices(
  replicas: number,
  deadline: number,
  attempt: (sliceMs: number) => Promise<number>,
): Promise<number> {
  for (;;) {
    const acked = await attempt(Math.max(1, Math.min(WAIT_SLICE_MS, deadline - Date.now())))
    if (acked >= replicas || Date.now() >= deadline) return acked
  }
}

const replicaWord = (n: number): string => `${n} replica${n === 1 ? '' : 's'}`
