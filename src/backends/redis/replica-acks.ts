import { Cluster, type Redis } from 'ioredis'
import { TimeoutError } from '../../core/errors.js'
import type { Client } from './connection.js'
import { keySlot } from './key-slot.js'

/** `replicaAcks` of `open()`: how many replicas must hold a batch before its send resolves. */
export interface ReplicaAckPolicy {
  /** Replicas that must acknowledge each batch (`WAIT`); 0 = none (a send resolves when the master has it). */
  replicas: number
  /** How long to wait for them, in ms. */
  timeoutMs: number
}

/**
 * Waits until replicas hold what this client wrote for a partition: `WAIT <replicas> <timeout>`
 * on the connection the append went through (WAIT counts that connection's writes), which on a
 * Cluster is the client's connection to the master serving the partition's slot. The writes go
 * through a client of their own, so a slow replica holds up appends only, not reads or heartbeats.
 */
export class ReplicaAcks {
  constructor(
    private readonly client: Client,
    readonly policy: ReplicaAckPolicy,
  ) {}

  /** The connection a command on `key` goes through now. */
  private connectionFor(key: string): Redis | Cluster {
    if (!(this.client instanceof Cluster)) return this.client
    const master = this.client.slots[keySlot(key)]?.[0]
    const node = master === undefined ? undefined : this.client.nodes('master').find((n) => `${n.options.host}:${n.options.port}` === master)
    return node ?? this.client // no slot map yet: the write itself will have failed
  }

  /**
   * Resolve once `policy.replicas` replicas acknowledged every write this client sent for `key`;
   * reject with a retriable `TimeoutError` naming `what` when fewer did within `policy.timeoutMs`.
   */
  async wait(key: string, what: string): Promise<void> {
    const { replicas, timeoutMs } = this.policy
    // In slices of at most WAIT_SLICE_MS, so no command on the writer waits longer than a Cluster
    // command may: a reply from a master that was frozen and replaced is never waited for.
    const deadline = Date.now() + timeoutMs
    let acked = 0
    for (;;) {
      const slice = Math.max(1, Math.min(WAIT_SLICE_MS, deadline - Date.now()))
      acked = Number(await this.connectionFor(key).call('WAIT', String(replicas), String(slice)))
      if (acked >= replicas || Date.now() >= deadline) break
    }
    if (acked < replicas) {
      throw new TimeoutError(`${what}: written to the master, but acknowledged by ${acked} of ${replicaWord(replicas)} within ${timeoutMs} ms (replicaAcks): a failover now could lose it, so the send is not acknowledged; it may still be in the log, and a send again may store it twice`)
    }
  }
}

/** Longest single `WAIT`: below the Cluster command timeout (1.5 s). */
const WAIT_SLICE_MS = 1000

const replicaWord = (n: number): string => `${n} replica${n === 1 ? '' : 's'}`
