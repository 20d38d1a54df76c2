import type { Backend, TopicMeta } from '../../../backends/backend.js'
import { parseSourceHeader, SOURCE_HEADER } from '../../../backends/source-header.js'
import { InvalidArgumentError, TopicExistsError, TopicNotFoundError } from '../../../core/errors.js'
import { checkTopicName } from '../../../core/names.js'
import type { PartitionKey } from '../../../core/partition-key.js'
import type { PartitionedLedger } from '../ledger.js'
import type { OwnedPartition, RewoundFrom } from '../owned-partition.js'
import type { PreparedRecord } from '../../../producer/send-record.js'
import type { Outputs } from '../outputs.js'
import { reportedFailure } from '../output-record.js'
import type { PartitionHandle } from '../partition-message.js'
import { PartitionState, type StatefulMessage } from './partition-state.js'
import { LAST_MARK } from './state-key.js'
import { doneThrough, TimerTurn } from './timer-turn.js'

/** Pause before a failed restore of a partition's state is tried again. */
const RESTORE_RETRY_MS = 1000

/** Records per read of a changelog restore. */
const RESTORE_READ = 4096

/** The changelog topic of store `name` of processor group `group`: `<group>-<name>-changelog` (Kafka Streams' naming). */
export const changelogTopic = (group: string, name: string): string => `${group}-${name}-changelog`

/**
 * The state store of a processor (`ProcessorOptions.state`): its changelog topic (created with
 * the input topic's partition count, compacted, string keys; an existing one must have that many
 * partitions), and one `PartitionState` per owned partition, restored from the changelog when the
 * partition is assigned. Until its state is restored a partition fetches nothing; then it starts
 * after the last input whose writes the changelog holds, if that is past the group's commit (the
 * commit lags the writes; everything before that input is done, since writes are flushed in input
 * order once a message's outputs are stored).
 */
export class ProcessorState {
  readonly topic: string
  private readonly states = new Map<PartitionKey, PartitionState>()
  /** The partition object last opened per partition: a restore of an earlier one (a failed acquire's) keeps nothing. */
  private readonly latest = new Map<PartitionKey, OwnedPartition>()
  /** The changelog topic, once checked or created (before any partition's restore ends). */
  private meta: TopicMeta | undefined
  /** The input topic's creation time, read with the changelog's check (the source key of its outputs, as `Outputs` caches it). */
  private incarnation: number | undefined
  private ready: Promise<void> | undefined
  private ledger: PartitionedLedger<unknown> | undefined
  private closed = false
  private readonly timers = new Set<NodeJS.Timeout>()

  constructor(
    private readonly store: Backend,
    private readonly group: string,
    readonly name: string,
    private readonly input: string,
    /** `term()` writes a dead letter (`ProcessorOptions.deadLetter`): a termed message takes its turn once it is stored. */
    readonly deadLettered: boolean,
  ) {
    if (typeof name !== 'string' || !/^[A-Za-z0-9_.-]{1,100}$/.test(name))
      throw new InvalidArgumentError(
        `processor() state must be a store name of 1 to 100 of A-Z a-z 0-9 _ . -, got ${JSON.stringify(name)}`,
      )
    this.topic = checkTopicName(changelogTopic(group, name))
  }

  attach(ledger: PartitionedLedger<unknown>): void {
    this.ledger = ledger
  }

  /** The state of the partition a message of `part` was read from (undefined before it is restored). */
  of(part: OwnedPartition): PartitionState | undefined {
    const s = this.states.get(part.key)
    return s !== undefined && s.part === part ? s : undefined
  }

  /**
   * Deliver the partition of a message again from its first message not acked (`nack()` of a
   * stateful message; `from`: that message, whose deliveries count on, as `PartitionedLedger.rewind`).
   */
  rewind(h: PartitionHandle, delayMs: number, from?: RewoundFrom): void {
    if (h.generation === h.part.generation) this.ledger?.rewind(h.part, delayMs, from)
  }

  /** Messages of `p` were read (in offset order): their state flushes go in that order. */
  fetched(msgs: readonly StatefulMessage[], p: OwnedPartition): void {
    this.of(p)?.fetched(msgs, p.generation)
  }

  /** A write of the changelog failed for good (the message comes again): reported unless its partition moved on. */
  failed(e: unknown): void {
    if (reportedFailure(e)) this.ledger?.core.emitError(e)
  }

  /** A partition was opened: fetch nothing until its state is restored. */
  opened(p: OwnedPartition): void {
    p.pausedUntil = Infinity
    this.latest.set(p.key, p)
    void this.restore(p)
  }

  /** A partition was given up: its state goes (another member restores it). */
  dropped(p: OwnedPartition): void {
    const s = this.states.get(p.key)
    if (s?.part === p) {
      s.retired = true
      this.states.delete(p.key)
    }
    if (this.latest.get(p.key) === p) this.latest.delete(p.key)
  }

  /**
   * A state write of input partition `partition` checked and encoded as its changelog record
   * (`key` encoded; `value` null: a delete).
   * @throws what a send of it would (a value that cannot be stored, one over the topic's `maxMessageBytes`).
   */
  prepare(outputs: Outputs, key: string, value: unknown, partition: number): PreparedRecord {
    return outputs.prepare(this.topic, this.meta as TopicMeta, { key, value, partition })
  }

  /** The changelog's `maxMessageBytes` (0 until it is checked, before any partition's restore ends). */
  get recordLimit(): number {
    return this.meta?.maxMessageBytes ?? 0
  }

  /** The partitions whose state is restored, with their state. */
  restored(): IterableIterator<PartitionState> {
    return this.states.values()
  }

  /**
   * A timer turn of partition state `state` (decision 208), named after input `offset`, numbered
   * from `seq`; undefined unless the partition is still this member's and not being handed over.
   * The caller sees to the rest: the partition quiet when a turn is decided, and its messages held
   * while the turn runs.
   */
  turn(state: PartitionState, outputs: Outputs, offset: number, seq: number): TimerTurn | undefined {
    const part = state.part
    if (this.of(part) !== state || part.lost || part.dropped || part.revoking || part.releasing) return undefined
    return new TimerTurn(this, outputs, state, { part, generation: part.generation }, offset, seq)
  }

  /** The end (next offset) of each partition of the input topic. */
  async inputEnds(): Promise<Map<number, number>> {
    return new Map((await this.store.offsets(this.input)).map((o) => [o.partition, o.end]))
  }

  close(): void {
    this.closed = true
    for (const t of this.timers) clearTimeout(t)
    this.timers.clear()
    for (const s of this.states.values()) s.retired = true
    this.states.clear()
  }

  private gone(p: OwnedPartition): boolean {
    return this.closed || p.dropped || p.lost || this.latest.get(p.key) !== p
  }

  private async restore(p: OwnedPartition): Promise<void> {
    const ledger = this.ledger as PartitionedLedger<unknown>
    try {
      await (this.ready ??= this.ensureTopic().catch((e: unknown) => {
        this.ready = undefined
        throw e
      }))
      const incarnation = this.incarnation as number
      const { values, last } = await this.read(p.partition, `${this.group} ${this.input}@${incarnation} ${p.partition}`)
      if (this.gone(p)) return
      // Everything up to `last` is done (its writes, and so its outputs and every earlier input's, are stored).
      if (last + 1 > p.position) ledger.restart(p, last + 1)
      const before = this.states.get(p.key)
      if (before !== undefined) before.retired = true
      this.states.set(p.key, new PartitionState(p, values))
      p.pausedUntil = 0
      ledger.core.fetchWake.wake()
    } catch (e) {
      if (this.gone(p)) return
      // A changelog that does not fit (its partition count, its key type) will not fit later either.
      if (e instanceof InvalidArgumentError) return ledger.core.fail(e)
      ledger.core.emitError(e)
      const t = setTimeout(() => {
        this.timers.delete(t)
        void this.restore(p)
      }, RESTORE_RETRY_MS)
      t.unref()
      this.timers.add(t)
    }
  }

  /** Partition `partition` of the changelog, whole: the latest value of each key, and the highest input of `source` its records show to be done (`doneThrough`; -1: none). */
  private async read(partition: number, source: string): Promise<{ values: Map<string, unknown>; last: number }> {
    const end = (await this.store.offsets(this.topic)).find((o) => o.partition === partition)?.end ?? 0
    const values = new Map<string, unknown>()
    let last = -1
    const reader = await this.store.openReader(this.topic, partition, 0)
    try {
      for (;;) {
        const msgs = await reader.read(RESTORE_READ)
        if (msgs.length === 0) break
        for (const m of msgs) {
          if (m.offset >= end) return { values, last }
          const k = m.key as string
          // A mark is no state: it only names its message (below).
          if (k !== LAST_MARK) {
            if (m.value === null) values.delete(k)
            else values.set(k, m.value)
          }
          const h = m.headers[SOURCE_HEADER]
          const s = h === undefined ? undefined : parseSourceHeader(h)
          if (s !== undefined && s.key === source) last = Math.max(last, doneThrough(s.offset, s.seq))
        }
        if ((msgs[msgs.length - 1] as { offset: number }).offset >= end - 1) break
      }
    } finally {
      await reader.close()
    }
    return { values, last }
  }

  /** Create the changelog unless it exists; an existing one must have the input's partition count. */
  private async ensureTopic(): Promise<void> {
    const input = await this.store.getTopic(this.input)
    this.incarnation = input.createdAt
    let meta: TopicMeta | undefined
    try {
      meta = await this.store.getTopic(this.topic)
    } catch (e) {
      if (!(e instanceof TopicNotFoundError)) throw e
    }
    if (meta === undefined) {
      const created: TopicMeta = {
        name: this.topic,
        partitions: input.partitions,
        keyType: 'string',
        messageTypes: [],
        retention: {},
        maxMessageBytes: Math.max(input.maxMessageBytes, 1024 * 1024) + 4096,
        createdAt: Date.now(),
        compact: true,
      }
      try {
        await this.store.createTopic(created)
        this.meta = await this.store.getTopic(this.topic)
        return
      } catch (e) {
        if (!(e instanceof TopicExistsError)) throw e
        meta = await this.store.getTopic(this.topic)
      }
    }
    if (meta.partitions !== input.partitions)
      throw new InvalidArgumentError(
        `State store "${this.name}" of group "${this.group}": its changelog "${this.topic}" has ${meta.partitions} partitions, topic "${this.input}" has ${input.partitions}; they must be the same (each input partition's state is in its changelog partition)`,
      )
    if (meta.keyType !== 'string')
      throw new InvalidArgumentError(
        `State store "${this.name}": topic "${this.topic}" exists with key type ${meta.keyType}; a changelog has string keys`,
      )
    this.meta = meta
  }
}
