import { randomBytes } from 'node:crypto'
import { TopicCorruptError, TopicExistsError, TopicNotFoundError } from '../../core/errors.js'
import type { KeyType } from '../../core/types.js'
import type { TopicMeta } from '../backend.js'
import { isConnectionError, redisError, type Client } from './connection.js'
import type { RedisKeys } from './keys.js'
import { INCARNATIONS_FIELD } from './incarnations.js'
import { placeTopic } from './placement.js'
import type { ReplicaAcks } from './replica-acks.js'
import type { Scripts } from './scripts.js'

/** A claim in state 'creating' older than this was abandoned by a dead creator. */
const ABANDONED_MS = 30_000
/** How long a cached configuration is used without asking Redis again (appends, readers). */
const CACHE_MS = 1000
/** How long a send waits for an expired configuration to be read again before it uses the cached one. */
const REFRESH_WAIT_MS = 50
/** A consumer group created and destroyed at once to create a partition's stream empty. */
const INIT_GROUP = '__twainmq_init'

/**
 * Topic configurations in Redis: `<prefix><topic>:meta` hashes and the `<prefix>topics` set.
 * Creating claims the name first (state 'creating'), then initialises every partition, then marks
 * the topic 'ready'; only ready topics exist for readers and writers.
 */
export class RedisTopics {
  private readonly cache = new Map<string, { meta: TopicMeta; at: number }>()
  /** Reads of expired configurations under way (one per topic). */
  private readonly refreshing = new Map<string, Promise<TopicMeta>>()

  constructor(
    private readonly client: Client,
    private readonly scripts: Scripts,
    private readonly keys: RedisKeys,
    /**
     * With `replicaAcks`: a creation resolves once replicas hold it (decision 220); its waits go on
     * the appends' own client, so no other command queues behind a `WAIT`.
     */
    private readonly acks?: ReplicaAcks,
  ) {}

  async create(meta: TopicMeta): Promise<void> {
    const token = randomBytes(8).toString('hex')
    const fields = [
      'name',
      meta.name,
      'partitions',
      String(meta.partitions),
      'keyType',
      meta.keyType,
      'messageTypes',
      JSON.stringify(meta.messageTypes),
      'retention',
      JSON.stringify(meta.retention),
      'maxMessageBytes',
      String(meta.maxMessageBytes),
      'createdAt',
      String(meta.createdAt),
      ...(meta.attributes ? ['attributes', JSON.stringify(meta.attributes)] : []),
      ...(meta.compact ? ['compact', '1'] : []),
      ...(meta.tombstoneRetentionMs === undefined ? [] : ['tombstoneRetentionMs', String(meta.tombstoneRetentionMs)]),
    ]
    const tags = placeTopic(this.client, meta.name, meta.partitions)
    if (tags) fields.push('tags', JSON.stringify(tags))
    try {
      const claimed = await this.scripts.call(
        'create-topic',
        [this.keys.meta(meta.name)],
        [token, Date.now(), ABANDONED_MS, ...fields],
      )
      if (Number(claimed) !== 1)
        throw new TopicExistsError(`Topic "${meta.name}" already exists (Redis key ${this.keys.meta(meta.name)})`)
      this.keys.place(meta.name, tags)
      try {
        const groups = await this.client.smembers(this.keys.groups())
        // Every partition settled before the claim can go: none of this try's writes comes after another's.
        const settled = await Promise.allSettled(
          Array.from({ length: meta.partitions }, async (_, p) => {
            const stale = await this.allKeysOf(meta.name, p, groups)
            // Leftovers of an interrupted delete go first, then the partition's keys.
            await Promise.all([this.client.del(...stale), ...this.initPartition(meta.name, p, token, meta.compact)])
            await this.replicated(
              this.keys.producers(meta.name, p),
              '-',
              '-',
              `Cannot create topic "${meta.name}": partition ${p}`,
            )
          }),
        )
        for (const r of settled) if (r.status === 'rejected') throw r.reason
      } catch (e) {
        // Not ready yet: the claim goes, so a creation tried again does not wait for it to be abandoned.
        await this.scripts.call('topic-abandon', [this.keys.meta(meta.name)], [token]).catch(() => undefined)
        throw e
      }
      const ready = await this.scripts.call('topic-ready', [this.keys.meta(meta.name)], [token])
      if (Number(ready) !== 1) throw new TopicExistsError(`Topic "${meta.name}" was taken over by another creator`)
      const unsafe = `Topic "${meta.name}", ready on its master, is not safe from a failover yet`
      await this.replicated(this.keys.meta(meta.name), 'state', 'ready', `${unsafe}: its configuration`)
      if (this.acks)
        await this.acks.writeAndWait((p) => p.sadd(this.keys.topics(), meta.name), `${unsafe}: its listing`)
      else await this.client.sadd(this.keys.topics(), meta.name)
    } catch (e) {
      throw redisError(`Cannot create topic "${meta.name}"`, e)
    }
    this.cache.set(meta.name, { meta, at: Date.now() })
  }

  /** With `replicaAcks`: wait until replicas hold what the creation wrote to `key`'s slot, its last write `field` = `value`. */
  private async replicated(key: string, field: string, value: string, what: string): Promise<void> {
    await this.acks?.waitForHeld(key, { field, value }, what)
  }

  /**
   * Every key a script names exists from the start (an empty stream, `start` 0, a free reservation
   * `-`, a producers hash with a placeholder field, the id hash and sorted set with theirs): while a Cluster slot migrates, a script naming
   * an absent key gets TRYAGAIN until the migration ends; with every key present only while the
   * partition's keys are split between the two masters. Sent in this order on the connection to the
   * slot's master: `end` = 0 marks the partition as existing, and the producers hash goes last, so a
   * node holding its placeholder holds the whole partition (`replicated`).
   */
  private initPartition(topic: string, p: number, token: string, compact = false): Array<Promise<unknown>> {
    const stream = this.keys.stream(topic, p)
    return [
      this.client.xgroup('CREATE', stream, INIT_GROUP, '0', 'MKSTREAM'),
      this.client.xgroup('DESTROY', stream, INIT_GROUP),
      this.client.set(this.keys.start(topic, p), '0'),
      this.client.set(this.keys.reservation(topic, p), '-'),
      // Remembered idempotency ids, two generations, each with a placeholder field that is never removed.
      this.client.hset(this.keys.ids(topic, p), '', '0 0'),
      this.client.hset(this.keys.idsBefore(topic, p), '', '-'),
      ...(compact ? this.initCompaction(topic, p) : []),
      this.client.set(this.keys.end(topic, p), '0'),
      // Its first incarnation is this creation's (decision 112): a tail of the topic deleted and
      // created again sees a log rebuilt from offset 0.
      this.client.hset(this.keys.producers(topic, p), '-', '-', INCARNATIONS_FIELD, `t${token}:0`),
    ]
  }

  /** A compacted topic's partition: the keys the compaction script names, present from the start as the others are. */
  private initCompaction(topic: string, p: number): Array<Promise<unknown>> {
    return [
      this.client.hset(this.keys.compactIndex(topic, p), '', '-'),
      this.client.zadd(this.keys.compactTombstones(topic, p), '+inf', ''),
      this.client.hset(this.keys.compactState(topic, p), 'cur', '0', 'from', '0'),
    ]
  }

  /** Every key of a partition: its log's, its groups' and its processor sources' (one sorted set per source its sources hash names). */
  private async allKeysOf(name: string, p: number, groups: readonly string[]): Promise<string[]> {
    const sources = await this.client.hkeys(this.keys.sources(name, p))
    return [
      ...this.keys.partitionKeys(name, p),
      ...groups.map((g) => this.keys.partitionGroup(name, p, g)),
      ...sources.map((s) => this.keys.sourceOutputs(name, p, s)),
    ]
  }

  async delete(name: string): Promise<void> {
    const meta = await this.get(name)
    this.cache.delete(name)
    try {
      // The configuration goes first: from then on the topic does not exist for anyone.
      await this.client.del(this.keys.meta(name))
      await this.client.srem(this.keys.topics(), name)
      await this.client.del(this.keys.accessed(name))
      const groups = await this.client.smembers(this.keys.groups())
      await Promise.all(
        Array.from({ length: meta.partitions }, async (_, p) =>
          this.client.del(...(await this.allKeysOf(name, p, groups))),
        ),
      )
    } catch (e) {
      throw redisError(`Cannot delete topic "${name}"`, e)
    }
  }

  /** Note a topic's last access (the last writer wins); a topic that does not exist is ignored. */
  async markAccess(name: string, at: number): Promise<void> {
    try {
      if ((await this.client.exists(this.keys.meta(name))) === 1)
        await this.client.set(this.keys.accessed(name), String(Math.round(at)))
    } catch (e) {
      throw redisError(`Cannot note an access of topic "${name}"`, e)
    }
  }

  async lastAccess(name: string): Promise<number | undefined> {
    try {
      const v = await this.client.get(this.keys.accessed(name))
      return v === null ? undefined : Number(v)
    } catch (e) {
      throw redisError(`Cannot read the last access of topic "${name}"`, e)
    }
  }

  async list(): Promise<string[]> {
    try {
      const names = (await this.client.smembers(this.keys.topics())).filter((n) => !n.startsWith('__'))
      const states = await Promise.all(names.map((n) => this.client.hget(this.keys.meta(n), 'state')))
      return names.filter((_, i) => states[i] === 'ready').sort()
    } catch (e) {
      throw redisError('Cannot list topics', e)
    }
  }

  /** A topic's configuration, read from Redis. */
  async get(name: string): Promise<TopicMeta> {
    let h: Record<string, string>
    try {
      h = await this.client.hgetall(this.keys.meta(name))
    } catch (e) {
      throw redisError(`Cannot read topic "${name}"`, e)
    }
    if (h.state !== 'ready') {
      this.cache.delete(name)
      throw new TopicNotFoundError(`Topic "${name}" does not exist (no ready Redis key ${this.keys.meta(name)})`)
    }
    let meta: TopicMeta
    try {
      meta = {
        name,
        partitions: Number(h.partitions),
        keyType: h.keyType as KeyType,
        messageTypes: JSON.parse(h.messageTypes ?? '[]') as string[],
        retention: JSON.parse(h.retention ?? '{}') as TopicMeta['retention'],
        maxMessageBytes: Number(h.maxMessageBytes),
        createdAt: Number(h.createdAt),
        ...(h.attributes === undefined ? {} : { attributes: JSON.parse(h.attributes) as Record<string, string> }),
        ...(h.compact === '1' ? { compact: true } : {}),
        ...(h.tombstoneRetentionMs === undefined ? {} : { tombstoneRetentionMs: Number(h.tombstoneRetentionMs) }),
      }
      this.keys.place(name, h.tags === undefined ? undefined : (JSON.parse(h.tags) as string[]))
    } catch (cause) {
      throw new TopicCorruptError(`Configuration of topic "${name}" in ${this.keys.meta(name)} is not valid`, { cause })
    }
    if (!Number.isInteger(meta.partitions) || meta.partitions < 1)
      throw new TopicCorruptError(`Topic "${name}" has an invalid partition count ${JSON.stringify(h.partitions)}`)
    this.cache.set(name, { meta, at: Date.now() })
    return meta
  }

  /**
   * The configuration, from the cache when it was read within the last second. An older one is
   * read again, but when that read does not answer within {@link REFRESH_WAIT_MS} or fails for the
   * connection's sake (the master holding `:meta` is down or failing over), the cached one is used
   * and the read goes on in the background: partitions on healthy masters are not stopped by the
   * metadata's node. A topic found missing or corrupt is never served from the cache.
   */
  async cached(name: string): Promise<TopicMeta> {
    return this.fresh(name) ?? this.refreshed(name)
  }

  /** The configuration when the cache has one read within the last second (no await for callers on the send path). */
  fresh(name: string): TopicMeta | undefined {
    const hit = this.cache.get(name)
    return hit && Date.now() - hit.at < CACHE_MS ? hit.meta : undefined
  }

  private async refreshed(name: string): Promise<TopicMeta> {
    const hit = this.cache.get(name)
    if (!hit) return this.get(name)
    let refresh = this.refreshing.get(name)
    if (!refresh) {
      const r = this.get(name).finally(() => {
        if (this.refreshing.get(name) === r) this.refreshing.delete(name)
      })
      r.catch(() => undefined) // awaited below or by a later call; a background failure keeps the cache
      this.refreshing.set(name, r)
      refresh = r
    }
    let timer: NodeJS.Timeout | undefined
    const slow = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), REFRESH_WAIT_MS)
      timer.unref()
    })
    try {
      return (await Promise.race([refresh, slow])) ?? hit.meta
    } catch (e) {
      if (isConnectionError(e)) return hit.meta // a ConnectionError from get()
      throw e
    } finally {
      clearTimeout(timer)
    }
  }

  /** Forget a cached configuration (the topic was found missing). */
  forget(name: string): void {
    this.cache.delete(name)
  }
}
