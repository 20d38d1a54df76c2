import type { Backend } from '../backends/backend.js'
import { ClosedError, InvalidArgumentError, TopicNotFoundError } from '../core/errors.js'
import { TypeRegistry, type TypeValidator } from '../core/message-types.js'
import { checkInt, checkKnownKeys, checkTopicName } from '../core/names.js'
import { checkHistoryRange } from './history-range.js'
import type { Consumer } from '../consumer/partitioned/consumer.js'
import { ConsumerSet } from '../consumer/consumer-set.js'
import type { SharedConsumer } from '../consumer/shared/shared-consumer.js'
import { PROCESSOR_MAX_IN_FLIGHT, type Processor, type ProcessorOptions } from '../consumer/partitioned/processor.js'
import { cachedHash64 } from '../core/hash64.js'
import { resolveConsumerOptions, type ConsumerOptions } from '../consumer/options.js'
import type { ConsumerContext } from '../consumer/member-core.js'
import type { LagRow } from '../telemetry/lag.js'
import type { CreateTopicOptions, Key, Message, TopicCompaction, TopicInfo } from '../core/types.js'
import { ensureTopic } from './ensure-topic.js'
import { backgroundLog, checkLogger, rollbackLog, type Logger } from '../core/logger.js'
import { logMember } from './member-log.js'
import { deleteGroup, describeGroup, listGroups, resetGroup, type ResetTarget } from './group-commands.js'
import type { ResetOptions } from './state-reset.js'
import { openBackend } from './open-backend.js'
import { Producer, type ProducerOptions } from '../producer/producer.js'
import { HistorySource } from '../stream/history-source.js'
import type { BatchIterator, BatchSource } from '../stream/batch-iterator.js'
import { MessageStream } from '../stream/message-stream.js'
import { TailSource, checkTailFrom } from '../stream/tail-source.js'
import { Table, type TableOptions } from '../stream/table.js'
import type { FileOpenOptions, GroupDescription, HistoryOptions, TailOptions } from './twain-options.js'
import { compactionInfo, topicMetaFrom } from './topic-options.js'
import { observeLag } from '../telemetry/lag.js'
import type { InstanceTelemetry } from '../telemetry/hooks.js'
import { Telemetry } from '../telemetry/telemetry.js'
import { tracedStore } from '../telemetry/traced-store.js'

export type { FileOpenOptions, GroupDescription, HistoryOptions, TailOptions } from './twain-options.js'

let storeOf: (twain: object) => Backend
let telemetryFor: (twain: object) => InstanceTelemetry | undefined

/**
 * @internal The store under a `Twain`, for the package's layers above the facade (the HTTP gateway
 * appends and watches through it). Not part of the public API (not exported by the entry points).
 * @throws TypeError when `twain` is not a `Twain`.
 */
export function backendOf(twain: object): Backend {
  return storeOf(twain)
}

/**
 * @internal The telemetry of a `Twain` (undefined when it has none: no `@opentelemetry/api`, or
 * `open({ telemetry: false })`), for the HTTP gateway's server spans and propagation.
 */
export function telemetryOf(twain: object): InstanceTelemetry | undefined {
  return telemetryFor(twain)
}

/** A handle on a twainmq store (a directory or a Redis). Create with `open()`. */
export class Twain implements AsyncDisposable {
  private readonly types = new TypeRegistry()
  private readonly producers = new Set<Producer<unknown>>()
  private readonly consumers = new ConsumerSet()
  /** Live iterations of every stream this instance made (not the streams: those may be kept idle). */
  private readonly iterations = new Set<BatchIterator<unknown>>()
  private readonly tables = new Set<Table<unknown, Key>>()
  private closing: Promise<void> | undefined

  readonly #store: Backend
  #logger: Logger | undefined
  /** The store producers and consumers write through: `#store`, or it with its writes traced and measured. */
  readonly #writes: Backend
  readonly #telemetry: Telemetry | undefined
  readonly #unobserve: () => void

  static {
    // The package's layers above the facade (the HTTP gateway) reach the store through `backendOf`,
    // which only this class can answer: a private field read, not a registry kept beside it.
    storeOf = (twain) => {
      if (!(#store in twain)) throw new TypeError('Expected a Twain instance (from open())')
      return twain.#store
    }
    telemetryFor = (twain) => {
      if (!(#store in twain)) throw new TypeError('Expected a Twain instance (from open())')
      return twain.#telemetry
    }
  }

  private constructor(
    store: Backend,
    /** Identity of this instance; stored as `producerId` on every message it writes. */
    readonly clientId: string,
    telemetry: Telemetry | undefined,
  ) {
    this.#store = store
    this.#telemetry = telemetry
    this.#writes = telemetry?.wrapsStore ? tracedStore(store, telemetry) : store
    this.#unobserve = telemetry ? observeLag(telemetry, () => this.lagRows()) : () => undefined
  }

  /** Open a store: a path or `file:` URL, `redis://…`, `rediss://…` or `redis+cluster://…`. */
  static async open(target?: string, options: FileOpenOptions = {}): Promise<Twain> {
    // Checked (and the API loaded) first: a bad telemetry option leaves no store open.
    const telemetry = await Telemetry.open(options.telemetry)
    const logger = checkLogger(options.logger)
    const { backend, clientId } = await openBackend(target, options, logger && backgroundLog(logger))
    const twain = new Twain(backend, clientId, telemetry)
    twain.#logger = logger
    return twain
  }

  /** Which backend this instance uses. */
  get backend(): 'file' | 'redis' {
    // The contract lets a backend name itself (`Backend.kind: string`); the two this package opens are these.
    return this.#store.kind as 'file' | 'redis'
  }

  private live(): void {
    if (this.closing) throw new ClosedError('This twain instance is closed')
  }

  /**
   * Register a message type (TwainMQ's registered dataclasses), validated by a Standard Schema or a
   * function returning the validated value. Values sent with `{ type }` are validated before they are
   * written, and messages read back are validated again (a failure sets `message.error`; the stream
   * goes on), so a validator should be idempotent: parse and check, not transform one-way.
   */
  registerType<T>(name: string, schema?: TypeValidator<T>): void {
    this.types.register(name, schema as TypeValidator)
  }

  /**
   * Create a topic. **Keys are `u16` (integers 0..65535) unless you pass `keyType`**: for string
   * keys such as user ids, pass `keyType: 'string'` (or `'charN'`); for larger integers `'u32'`
   * or `'u64'` (bigint keys). Throws `TopicExistsError` if it exists: use `ensureTopic` in a script
   * that runs more than once.
   * @example
   * ```ts
   * await twain.createTopic('orders', { partitions: 3, keyType: 'string' })
   * ```
   */
  async createTopic(name: string, options: CreateTopicOptions = {}): Promise<TopicInfo> {
    this.live()
    const meta = topicMetaFrom(name, options)
    await this.#store.createTopic(meta)
    return this.describeTopic(name)
  }

  /**
   * Create a topic, or check that the existing one has the options given — so a setup script can
   * run again. Only the options you pass are compared (omitted ones are whatever the topic has); a
   * difference throws `InvalidArgumentError` naming the option, the existing and the requested
   * value. It never changes an existing topic. The default key type is `'u16'`, as for `createTopic`.
   * @example
   * ```ts
   * await twain.ensureTopic('orders', { partitions: 3, keyType: 'string' })
   * ```
   */
  async ensureTopic(name: string, options: CreateTopicOptions = {}): Promise<TopicInfo> {
    this.live()
    await ensureTopic(this.#store, name, options)
    return this.describeTopic(name)
  }

  async deleteTopic(name: string): Promise<void> {
    this.live()
    await this.#store.deleteTopic(checkTopicName(name))
  }

  async topicExists(name: string): Promise<boolean> {
    this.live()
    try {
      await this.#store.getTopic(checkTopicName(name))
      return true
    } catch (e) {
      if (e instanceof TopicNotFoundError) return false
      throw e
    }
  }

  listTopics(): Promise<string[]> {
    this.live()
    return this.#store.listTopics()
  }

  async describeTopic(name: string): Promise<TopicInfo> {
    this.live()
    const m = await this.#store.getTopic(checkTopicName(name))
    const offsets = await this.#store.offsets(name)
    return {
      name: m.name,
      partitions: m.partitions,
      keyType: m.keyType,
      messageTypes: m.messageTypes,
      retention: m.retention,
      maxMessageBytes: m.maxMessageBytes,
      attributes: { ...m.attributes },
      compact: m.compact === true,
      ...(m.compact === true ? compactionInfo(m.tombstoneRetentionMs, await this.#store.lastCompaction(name)) : {}),
      offsets,
    }
  }

  /**
   * Run one compaction pass over every partition of a compacted topic now (`createTopic(name, {
   * compact: true })`), beyond the passes that run in the background: older records of each key
   * are removed, expired tombstones too. Resolves with the topic's records and bytes before and
   * after it. Throws `InvalidArgumentError` when the topic is not compacted.
   * @example
   * ```ts
   * const { before, after } = await twain.compactTopic('prices')
   * ```
   */
  async compactTopic(name: string): Promise<TopicCompaction> {
    this.live()
    return this.#store.compact(checkTopicName(name))
  }

  /** Number of messages retained in a topic. */
  async length(topic: string): Promise<number> {
    this.live()
    const offsets = await this.#store.offsets(checkTopicName(topic))
    return offsets.reduce((n, o) => n + (o.end - o.start), 0)
  }

  /**
   * Remove old messages: `{ maxMessages }` keeps the newest n of each partition; `{ before }` removes
   * offsets below the given one per partition. Resolves with how many were removed.
   */
  async trim(topic: string, how: { maxMessages: number } | { before: Record<number, number> }): Promise<number> {
    this.live()
    const offsets = await this.#store.offsets(checkTopicName(topic))
    let removed = 0
    if (how && 'maxMessages' in how) {
      const keep = checkInt('maxMessages', how.maxMessages, 0, Number.MAX_SAFE_INTEGER)
      for (const o of offsets) removed += await this.#store.trimBefore(topic, o.partition, o.end - keep)
    } else if (how && 'before' in how && how.before && typeof how.before === 'object') {
      for (const [p, off] of Object.entries(how.before)) {
        const partition = Number(p)
        if (!offsets.some((o) => o.partition === partition))
          throw new InvalidArgumentError(`Partition ${p} does not exist in topic "${topic}"`)
        removed += await this.#store.trimBefore(
          topic,
          partition,
          checkInt(`before[${p}]`, off, 0, Number.MAX_SAFE_INTEGER),
        )
      }
    } else
      throw new InvalidArgumentError(
        `trim() takes { maxMessages } or { before: { partition: offset } }, got ${JSON.stringify(how)}`,
      )
    return removed
  }

  /** A producer for one topic; `K` (e.g. `number`, `string`, or `KeyOf<'u32'>`) narrows the keys `send` accepts at compile time. */
  producer<V = unknown, K extends Key = Key>(topic: string, options: ProducerOptions = {}): Producer<V, K> {
    this.live()
    checkKnownKeys('producer()', options, [
      'partitioner',
      'lingerMs',
      'maxBatch',
      'signal',
      'dedupWindowMs',
      'propagate',
    ])
    const p = new Producer<V, K>(
      this.#writes,
      checkTopicName(topic),
      this.clientId,
      this.types,
      options,
      (done) => this.producers.delete(done),
      this.#telemetry,
    )
    this.producers.add(p)
    return p
  }

  /** Validation of registered types on read, when any type has a validator (checked per iteration). */
  private decoder(): ((batch: Message[]) => Message[] | Promise<Message[]>) | undefined {
    if (!this.types.validates) return undefined
    return (batch) => {
      let async = false
      const out = batch.map((m) => {
        const r = this.types.checkRead(m)
        if (r instanceof Promise) async = true
        return r
      })
      return async ? Promise.all(out) : (out as Message[])
    }
  }

  /** A stream whose iterations this instance ends on close; iterating after close throws `ClosedError`. */
  private stream<T>(open: () => BatchSource<T>, signal: AbortSignal | undefined): MessageStream<T> {
    return new MessageStream<T>(
      {
        open: () => {
          this.live()
          return open()
        },
      },
      signal,
      this.iterations,
    )
  }

  /** A live stream of new messages of one or more topics; never completes by itself. */
  tail<V = unknown, K extends Key = Key>(
    topics: string | string[],
    options: TailOptions = {},
  ): MessageStream<Message<V, K>> {
    this.live()
    const list = (Array.isArray(topics) ? topics : [topics]).map((t) => checkTopicName(t))
    if (list.length === 0) throw new InvalidArgumentError('tail() needs at least one topic')
    checkKnownKeys('tail()', options, ['from', 'partitions', 'skipOwn', 'signal'])
    const from = checkTailFrom(options.from ?? 'end')
    // Fix 'end' now (and for each later iteration when it starts), so a message sent right after is delivered.
    const snapshot = (): Map<string, number[] | Promise<number[]>> | undefined => {
      if (!(from === 'end' || (typeof from === 'object' && 'offset' in from && typeof from.offset === 'object')))
        return undefined
      const ends = new Map<string, number[] | Promise<number[]>>()
      for (const t of list) {
        const e = this.#store.endOffsetsSnapshot(t)
        if (e) ends.set(t, e)
      }
      return ends
    }
    let first: Map<string, number[] | Promise<number[]>> | undefined | null = snapshot()
    return this.stream(() => {
      const ends = first === null ? snapshot() : first
      first = null
      const source = new TailSource(this.#store, {
        topics: list,
        partitions: options.partitions,
        from,
        skipProducer: options.skipOwn ? this.clientId : undefined,
        ends,
        decode: this.decoder(),
        onRollback: this.#logger && rollbackLog(this.#logger),
      })
      return source as BatchSource<Message> as BatchSource<Message<V, K>>
    }, options.signal)
  }

  /** A finite read of a topic's retained messages. */
  history<V = unknown, K extends Key = Key>(topic: string, options: HistoryOptions = {}): MessageStream<Message<V, K>> {
    this.live()
    checkTopicName(topic)
    checkKnownKeys('history()', options, ['partition', 'from', 'to', 'limit', 'reverse', 'signal'])
    checkHistoryRange(options)
    return this.stream(
      () =>
        new HistorySource(this.#store, {
          topic,
          ...options,
          decode: this.decoder(),
        }) as BatchSource<Message> as BatchSource<Message<V, K>>,
      options.signal,
    )
  }

  /**
   * The latest value of every key of `topic`, following it live (README, "Tables"): `ready()`,
   * `get(key)`, `has(key)`, `size`, `entries()`, `changes()`, `close()`. It starts reading at once.
   */
  table<V = unknown, K extends Key = Key>(topic: string, options: TableOptions = {}): Table<V, K> {
    this.live()
    checkTopicName(topic)
    checkKnownKeys('table()', options, ['changesBuffer', 'signal'])
    const t = new Table<V, K>(
      topic,
      {
        store: this.#store,
        decode: this.decoder(),
        iterations: this.iterations,
        done: (d) => void this.tables.delete(d),
        onRollback: this.#logger && rollbackLog(this.#logger),
      },
      options,
    )
    this.tables.add(t as unknown as Table<unknown, Key>)
    return t
  }

  /**
   * A member of a consumer group over one or more topics (README, "Consumer groups"). Partitioned mode: each
   * partition is owned by one live member; acked offsets are committed in order. Shared mode (Redis):
   * competing consumers on every partition, per-message acks, claims from dead members.
   */
  consumer<V = unknown, K extends Key = Key>(
    topics: string | string[],
    options: ConsumerOptions & { mode: 'shared' },
  ): SharedConsumer<V, K>
  consumer<V = unknown, K extends Key = Key>(
    topics: string | string[],
    options: ConsumerOptions & { mode?: 'partitioned' },
  ): Consumer<V, K>
  consumer<V = unknown, K extends Key = Key>(
    topics: string | string[],
    options: ConsumerOptions,
  ): Consumer<V, K> | SharedConsumer<V, K>
  consumer<V = unknown, K extends Key = Key>(
    topics: string | string[],
    options: ConsumerOptions,
  ): Consumer<V, K> | SharedConsumer<V, K> {
    this.live()
    const list = [...new Set((Array.isArray(topics) ? topics : [topics]).map((t) => checkTopicName(t)))]
    if (list.length === 0) throw new InvalidArgumentError('consumer() needs at least one topic')
    // A name in use by a live consumer of the group here is refused now (InvalidArgumentError).
    const resolved = resolveConsumerOptions(options)
    const c = this.consumers.create<V, K>(this.consumerContext(), list, resolved)
    if (this.#logger) logMember(c, this.#logger, { group: resolved.group, kind: 'consumer' })
    return c
  }

  /**
   * A processor (README, "Exactly-once processing"): a member of a partitioned group whose
   * messages send outputs (`m.send(topic, key, value)`) stored exactly once, across kill -9,
   * restarts, rebalances, retried writes and Redis failovers. `m.ack()` commits the message once its
   * outputs are stored; a member that lost a partition stores nothing more for it (`FencedError`).
   */
  processor<V = unknown, K extends Key = Key>(topics: string | string[], options: ProcessorOptions): Processor<V, K> {
    this.live()
    const list = [...new Set((Array.isArray(topics) ? topics : [topics]).map((t) => checkTopicName(t)))]
    if (list.length === 0) throw new InvalidArgumentError('processor() needs at least one topic')
    const { partitioner, state, ...rest } = options ?? ({} as ProcessorOptions)
    if ((rest as { mode?: unknown }).mode !== undefined && (rest as { mode?: unknown }).mode !== 'partitioned')
      throw new InvalidArgumentError(
        `processor() members are partitioned; got mode ${JSON.stringify((rest as { mode?: unknown }).mode)}`,
      )
    if (partitioner !== undefined && typeof partitioner !== 'function')
      throw new InvalidArgumentError(`processor() partitioner must be a function, got ${typeof partitioner}`)
    const resolved = resolveConsumerOptions({
      ...rest,
      mode: 'partitioned',
      maxInFlight: rest.maxInFlight ?? PROCESSOR_MAX_IN_FLIGHT,
    })
    const p = this.consumers.createProcessor<V, K>(
      this.consumerContext(),
      list,
      resolved,
      this.types,
      partitioner ?? cachedHash64(),
      state,
    )
    if (this.#logger) logMember(p, this.#logger, { group: resolved.group, kind: 'processor' })
    return p
  }

  /** What this instance's consumers and processors are made with. */
  private consumerContext(): ConsumerContext {
    return {
      store: this.#writes,
      clientId: this.clientId,
      iterations: this.iterations,
      decode: this.decoder(),
      telemetry: this.#telemetry,
    }
  }

  /** The lag of every group consumed here, per partition (the telemetry's lag gauges). */
  private async lagRows(): Promise<LagRow[]> {
    if (this.closing) return []
    const rows: LagRow[] = []
    for (const group of this.consumers.groups()) {
      let d: GroupDescription
      try {
        d = await describeGroup(this.#store, group)
      } catch {
        continue // not created yet, or deleted: nothing to report
      }
      for (const t of d.topics) rows.push({ group, topic: t.topic, partition: t.partition, lag: t.lag, lagMs: t.lagMs })
    }
    return rows
  }

  /** Members, assignments and committed/end/lag/lagMs of every partition a group consumes. */
  describeGroup(group: string): Promise<GroupDescription> {
    this.live()
    return describeGroup(this.#store, group)
  }

  /** Names of consumer groups. */
  listGroups(): Promise<string[]> {
    this.live()
    return listGroups(this.#store)
  }

  /**
   * Set a group's committed offsets of a topic: to its start, its end, given offsets per
   * partition (an offset below a partition's start, trimmed, sets the start; one past its end is
   * refused with `InvalidArgumentError`), or `{ time }` (ms since the epoch or a `Date`): every
   * partition to its first offset whose timestamp is at or after the time (its end when none is).
   * A group that does not exist is created. No member may be consuming the topic. A processor
   * group's state store is kept unless `options.state` names it: then it is cleared too, so a
   * replay rebuilds it (README "State stores", "Replaying").
   * @example await twain.resetGroup('billing', 'orders', { time: Date.now() - 3_600_000 }) // replay the last hour
   * @example await twain.resetGroup('counter', 'views', 'start', { state: 'per-user' }) // replay with the state rebuilt
   */
  resetGroup(group: string, topic: string, to: ResetTarget, options?: ResetOptions): Promise<void> {
    this.live()
    return resetGroup(this.#store, group, topic, to, options)
  }

  /** Delete a consumer group (it must have no live members). */
  deleteGroup(group: string): Promise<void> {
    this.live()
    return deleteGroup(this.#store, group)
  }

  /** Whether the backend is reachable. */
  ping(): Promise<boolean> {
    return this.closing ? Promise.resolve(false) : this.#store.ping()
  }

  /** Close every producer, stream and consumer this instance created, then the backend. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      const errors: unknown[] = []
      const run = async (f: () => Promise<void>) => f().catch((e) => void errors.push(e))
      this.#unobserve()
      await Promise.all(this.consumers.values().map((c) => run(() => c.close())))
      await Promise.all([...this.producers].map((p) => run(() => p.close())))
      await Promise.all([...this.tables].map((t) => run(() => t.close())))
      await Promise.all([...this.iterations].map((it) => run(() => it.finish())))
      await run(() => this.#store.close())
      this.producers.clear()
      this.consumers.clear()
      this.iterations.clear()
      this.tables.clear()
      if (errors.length) throw errors[0]
    })()
    return this.closing
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close()
  }
}

/** Open a store (same as `Twain.open`). */
export const open = (target?: string, options?: FileOpenOptions): Promise<Twain> => Twain.open(target, options)
