import { hostname } from 'node:os'
import { randomBytes } from 'node:crypto'
import type { Backend } from './backends/backend.js'
import { FileBackend } from './backends/file/file-backend.js'
import { isTwainmqRoot } from './compat/twainmq/detect.js'
import { twainmqFormat } from './compat/twainmq/twainmq-store.js'
import { ClosedError, InvalidArgumentError, TopicNotFoundError, GroupNotFoundError } from './core/errors.js'
import { TypeRegistry, type TypeValidator } from './core/message-types.js'
import { checkGroupName, checkInt, checkKnownKeys, checkTopicName } from './core/names.js'

const OPEN_KEYS = ['prefix', 'fsync', 'clientId', 'format', 'segmentBytes', 'pollMs', 'maxOpenFiles']
import type { Consumer } from './consumer/consumer.js'
import { ConsumerSet } from './consumer/consumer-set.js'
import type { SharedConsumer } from './consumer/shared-consumer.js'
import { resolveConsumerOptions, type ConsumerOptions } from './consumer/options.js'
import type { CreateTopicOptions, Key, Message, TopicInfo } from './core/types.js'
import { ensureTopic } from './ensure-topic.js'
import { parseTarget } from './open-target.js'
import { Producer, type ProducerOptions } from './producer/producer.js'
import { HistorySource } from './stream/history-source.js'
import type { BatchIterator, BatchSource } from './stream/batch-iterator.js'
import { MessageStream } from './stream/message-stream.js'
import { TailSource, checkTailFrom } from './stream/tail-source.js'
import type { FileOpenOptions, GroupDescription, HistoryOptions, TailOptions } from './twain-options.js'
import { topicMetaFrom } from './topic-options.js'

export type { FileOpenOptions, GroupDescription, HistoryOptions, TailOptions } from './twain-options.js'

/** A handle on a twainmq store (a directory or a Redis). Create with `open()`. */
export class Twain implements AsyncDisposable {
  private readonly types = new TypeRegistry()
  private readonly producers = new Set<Producer<unknown>>()
  private readonly consumers = new ConsumerSet()
  /** Live iterations of every stream this instance made (not the streams: those may be kept idle). */
  private readonly iterations = new Set<BatchIterator<unknown>>()
  private closing: Promise<void> | undefined

  private constructor(
    private readonly store: Backend,
    /** Identity of this instance; stored as `producerId` on every message it writes. */
    readonly clientId: string,
  ) {}

  /** Open a store: a path or `file:` URL, `redis://…`, `rediss://…` or `redis+cluster://…`. */
  static async open(target?: string, options: FileOpenOptions = {}): Promise<Twain> {
    checkKnownKeys('open()', options, OPEN_KEYS)
    const t = parseTarget(target)
    const clientId = options.clientId ?? `${hostname()}-${process.pid}-${randomBytes(4).toString('hex')}`
    if (typeof clientId !== 'string' || clientId.length === 0 || Buffer.byteLength(clientId) > 255) {
      throw new InvalidArgumentError(`clientId must be a string of 1-255 bytes, got ${JSON.stringify(clientId)}`)
    }
    if (t.kind === 'redis') {
      const prefix = options.prefix ?? 'twainmq:'
      if (typeof prefix !== 'string' || prefix.length > 1000) {
        throw new InvalidArgumentError(`prefix must be a string of at most 1000 characters, got ${JSON.stringify(prefix)}`)
      }
      // Loaded only for a Redis target: a file-backend app never loads ioredis (decision 59).
      const { RedisBackend } = await import('./backends/redis/redis-backend.js')
      return new Twain(await RedisBackend.connect({ url: t.url, cluster: t.cluster }, { prefix, clientId }), clientId)
    }
    const fsync = options.fsync ?? 'never'
    if (!(fsync === 'never' || fsync === 'batch' || fsync === 'always' || (typeof fsync === 'number' && fsync > 0 && Number.isFinite(fsync)))) {
      throw new InvalidArgumentError(`fsync must be 'never', 'batch', 'always' or an interval in ms, got ${JSON.stringify(fsync)}`)
    }
    const segmentBytes = checkInt('segmentBytes', options.segmentBytes ?? 64 * 1024 * 1024, 1024, 2 ** 31)
    const pollMs = checkInt('pollMs', options.pollMs ?? 250, 1, 60_000)
    const maxOpenFiles = options.maxOpenFiles ?? 512
    if (typeof maxOpenFiles !== 'number' || !Number.isInteger(maxOpenFiles) || maxOpenFiles < 8) {
      throw new InvalidArgumentError(`maxOpenFiles must be an integer >= 8, got ${String(maxOpenFiles)}`)
    }
    const format = options.format ?? 'native'
    if (format !== 'native' && format !== 'twainmq-v1') {
      throw new InvalidArgumentError(`format must be 'native' or 'twainmq-v1', got ${JSON.stringify(options.format)}`)
    }
    // Python TwainMQ topics are served per topic when asked for or when the root has .twc configs.
    const twainmq = format === 'twainmq-v1' || isTwainmqRoot(t.root)
    const backend = new FileBackend(t.root, {
      fsync,
      segmentBytes,
      pollMs,
      maxOpenFiles,
      ...(twainmq ? { foreign: { create: (root, hub) => twainmqFormat(root, hub, { fsync }), createTopicsInIt: format === 'twainmq-v1' } } : {}),
    })
    await backend.init()
    return new Twain(backend, clientId)
  }

  /** Which backend this instance uses. */
  get backend(): 'file' | 'redis' {
    return this.store.kind
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
    await this.store.createTopic(meta)
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
    await ensureTopic(this.store, name, options)
    return this.describeTopic(name)
  }

  async deleteTopic(name: string): Promise<void> {
    this.live()
    await this.store.deleteTopic(checkTopicName(name))
  }

  async topicExists(name: string): Promise<boolean> {
    this.live()
    try {
      await this.store.getTopic(checkTopicName(name))
      return true
    } catch (e) {
      if (e instanceof TopicNotFoundError) return false
      throw e
    }
  }

  listTopics(): Promise<string[]> {
    this.live()
    return this.store.listTopics()
  }

  async describeTopic(name: string): Promise<TopicInfo> {
    this.live()
    const m = await this.store.getTopic(checkTopicName(name))
    const offsets = await this.store.offsets(name)
    return { name: m.name, partitions: m.partitions, keyType: m.keyType, messageTypes: m.messageTypes, retention: m.retention, maxMessageBytes: m.maxMessageBytes, offsets }
  }

  /** Number of messages retained in a topic. */
  async length(topic: string): Promise<number> {
    this.live()
    const offsets = await this.store.offsets(checkTopicName(topic))
    return offsets.reduce((n, o) => n + (o.end - o.start), 0)
  }

  /**
   * Remove old messages: `{ maxMessages }` keeps the newest n of each partition; `{ before }` removes
   * offsets below the given one per partition. Resolves with how many were removed.
   */
  async trim(topic: string, how: { maxMessages: number } | { before: Record<number, number> }): Promise<number> {
    this.live()
    const offsets = await this.store.offsets(checkTopicName(topic))
    let removed = 0
    if (how && 'maxMessages' in how) {
      const keep = checkInt('maxMessages', how.maxMessages, 0, Number.MAX_SAFE_INTEGER)
      for (const o of offsets) removed += await this.store.trimBefore(topic, o.partition, o.end - keep)
    } else if (how && 'before' in how && how.before && typeof how.before === 'object') {
      for (const [p, off] of Object.entries(how.before)) {
        const partition = Number(p)
        if (!offsets.some((o) => o.partition === partition)) throw new InvalidArgumentError(`Partition ${p} does not exist in topic "${topic}"`)
        removed += await this.store.trimBefore(topic, partition, checkInt(`before[${p}]`, off, 0, Number.MAX_SAFE_INTEGER))
      }
    } else throw new InvalidArgumentError(`trim() takes { maxMessages } or { before: { partition: offset } }, got ${JSON.stringify(how)}`)
    return removed
  }

  /** A producer for one topic; `K` (e.g. `number`, `string`, or `KeyOf<'u32'>`) narrows the keys `send` accepts at compile time. */
  producer<V = unknown, K extends Key = Key>(topic: string, options: ProducerOptions = {}): Producer<V, K> {
    this.live()
    checkKnownKeys('producer()', options, ['partitioner', 'lingerMs', 'maxBatch', 'signal'])
    const p = new Producer<V, K>(this.store, checkTopicName(topic), this.clientId, this.types, options, (done) => this.producers.delete(done))
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
      () => {
        this.live()
        return open()
      },
      signal,
      this.iterations,
    )
  }

  /** A live stream of new messages of one or more topics; never completes by itself. */
  tail<V = unknown, K extends Key = Key>(topics: string | string[], options: TailOptions = {}): MessageStream<Message<V, K>> {
    this.live()
    const list = (Array.isArray(topics) ? topics : [topics]).map((t) => checkTopicName(t))
    if (list.length === 0) throw new InvalidArgumentError('tail() needs at least one topic')
    checkKnownKeys('tail()', options, ['from', 'partitions', 'skipOwn', 'signal'])
    const from = checkTailFrom(options.from ?? 'end')
    // Fix 'end' now (and for each later iteration when it starts), so a message sent right after is delivered.
    const snapshot = (): Map<string, number[] | Promise<number[]>> | undefined => {
      if (!(from === 'end' || (typeof from === 'object' && 'offset' in from && typeof from.offset === 'object'))) return undefined
      const ends = new Map<string, number[] | Promise<number[]>>()
      for (const t of list) {
        const e = this.store.endOffsetsNow?.(t) ?? this.store.endOffsetsSoon?.(t)
        if (e) ends.set(t, e)
      }
      return ends
    }
    let first: Map<string, number[] | Promise<number[]>> | undefined | null = snapshot()
    return this.stream(() => {
      const ends = first === null ? snapshot() : first
      first = null
      const source = new TailSource(this.store, {
        topics: list,
        partitions: options.partitions,
        from,
        skipProducer: options.skipOwn ? this.clientId : undefined,
        ends,
        decode: this.decoder(),
      })
      return source as BatchSource<Message> as BatchSource<Message<V, K>>
    }, options.signal)
  }

  /** A finite read of a topic's retained messages. */
  history<V = unknown, K extends Key = Key>(topic: string, options: HistoryOptions = {}): MessageStream<Message<V, K>> {
    this.live()
    checkTopicName(topic)
    checkKnownKeys('history()', options, ['partition', 'from', 'to', 'limit', 'reverse', 'signal'])
    if (options.limit !== undefined) checkInt('limit', options.limit, 0, Number.MAX_SAFE_INTEGER)
    return this.stream(() => new HistorySource(this.store, { topic, ...options, decode: this.decoder() }) as BatchSource<Message> as BatchSource<Message<V, K>>, options.signal)
  }

  /**
   * A member of a consumer group over one or more topics (README, "Consumer groups"). Partitioned mode: each
   * partition is owned by one live member; acked offsets are committed in order. Shared mode (Redis):
   * competing consumers on every partition, per-message acks, claims from dead members.
   */
  consumer<V = unknown, K extends Key = Key>(topics: string | string[], options: ConsumerOptions & { mode: 'shared' }): SharedConsumer<V, K>
  consumer<V = unknown, K extends Key = Key>(topics: string | string[], options: ConsumerOptions & { mode?: 'partitioned' }): Consumer<V, K>
  consumer<V = unknown, K extends Key = Key>(topics: string | string[], options: ConsumerOptions): Consumer<V, K> | SharedConsumer<V, K>
  consumer<V = unknown, K extends Key = Key>(topics: string | string[], options: ConsumerOptions): Consumer<V, K> | SharedConsumer<V, K> {
    this.live()
    const list = [...new Set((Array.isArray(topics) ? topics : [topics]).map((t) => checkTopicName(t)))]
    if (list.length === 0) throw new InvalidArgumentError('consumer() needs at least one topic')
    // A name in use by a live consumer of the group here is refused now (InvalidArgumentError).
    return this.consumers.create<V, K>({ store: this.store, clientId: this.clientId, iterations: this.iterations, decode: this.decoder() }, list, resolveConsumerOptions(options))
  }

  /** Members, assignments and committed/end/lag of every partition a group consumes. */
  async describeGroup(group: string): Promise<GroupDescription> {
    this.live()
    const snap = await this.store.groups.describeGroup(checkGroupName(group))
    if (!snap) throw new GroupNotFoundError(`Group "${group}" does not exist`)
    // A shared group (Redis): pending entries per partition, and members that read every partition.
    const shared = await this.store.shared?.describeGroup(snap.group, snap.topics)
    const topics: GroupDescription['topics'] = []
    for (const topic of [...snap.topics].sort()) {
      let offsets
      try {
        offsets = await this.store.offsets(topic)
      } catch (e) {
        if (e instanceof TopicNotFoundError) continue
        throw e
      }
      for (const o of offsets) {
        const committed = Math.max(snap.commits.get(`${topic}/${o.partition}`) ?? o.start, o.start)
        const row: GroupDescription['topics'][number] = { topic, partition: o.partition, committed, end: o.end, lag: Math.max(0, o.end - committed) }
        const pending = shared?.pending.get(`${topic}/${o.partition}`)
        if (pending !== undefined) row.pending = pending
        topics.push(row)
      }
    }
    return { group: snap.group, members: snap.members.map((m) => ({ id: m.id, name: m.name, assignments: shared?.members.get(m.id) ?? m.assignments })), topics }
  }

  /** Names of consumer groups. */
  listGroups(): Promise<string[]> {
    this.live()
    return this.store.groups.listGroups()
  }

  /** Set a group's committed offsets of a topic: to its start, its end, or given offsets per partition. */
  async resetGroup(group: string, topic: string, to: 'start' | 'end' | Record<number, number>): Promise<void> {
    this.live()
    checkGroupName(group)
    const offsets = await this.store.offsets(checkTopicName(topic))
    const target = new Map<number, number>()
    if (to === 'start' || to === 'end') for (const o of offsets) target.set(o.partition, to === 'start' ? o.start : o.end)
    else if (to && typeof to === 'object') {
      const byPartition = new Map(offsets.map((o) => [o.partition, o])) // not a find per entry: O(P²) over a wide topic
      for (const [p, off] of Object.entries(to)) {
        const o = byPartition.get(Number(p))
        if (!o) throw new InvalidArgumentError(`Partition ${p} does not exist in topic "${topic}"`)
        target.set(o.partition, checkInt(`offset of partition ${p}`, off, 0, Number.MAX_SAFE_INTEGER))
      }
    } else throw new InvalidArgumentError(`resetGroup() takes 'start', 'end' or { partition: offset }, got ${JSON.stringify(to)}`)
    await this.store.groups.resetGroup(group, topic, target)
    await this.store.shared?.resetGroup(group, topic, target)
  }

  /** Delete a consumer group (it must have no live members). */
  async deleteGroup(group: string): Promise<void> {
    this.live()
    const topics = this.store.shared ? ((await this.store.groups.describeGroup(checkGroupName(group)))?.topics ?? []) : []
    await this.store.groups.deleteGroup(checkGroupName(group))
    await this.store.shared?.deleteGroup(group, topics)
  }

  /** Whether the backend is reachable. */
  ping(): Promise<boolean> {
    return this.closing ? Promise.resolve(false) : this.store.ping()
  }

  /** Close every producer, stream and consumer this instance created, then the backend. Idempotent. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      const errors: unknown[] = []
      const run = async (f: () => Promise<void>) => f().catch((e) => void errors.push(e))
      await Promise.all(this.consumers.values().map((c) => run(() => c.close())))
      await Promise.all([...this.producers].map((p) => run(() => p.close())))
      await Promise.all([...this.iterations].map((it) => run(() => it.finish())))
      await run(() => this.store.close())
      this.producers.clear()
      this.consumers.clear()
      this.iterations.clear()
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
