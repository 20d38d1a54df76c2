import { TopicNotFoundError } from '../../core/errors.js'
import type { TopicMeta } from '../backend.js'
import { redisError, type Client } from './connection.js'
import type { RedisKeys } from './keys.js'
import type { Scripts } from './scripts.js'

/**
 * Trimming and retention on Redis (docs/format.md, "Redis layout"). Every removal is exact at offset level (XTRIM MINID
 * `<offset>-1` in a script that also moves the partition's `start`), and happens only because the
 * user asked for it: `trim()`, or a retention limit set on the topic. There is no default MAXLEN,
 * so entries a group has not committed are never dropped behind anyone's back; `consumed` removes
 * only what every group consuming the topic has committed.
 */
export class RedisRetention {
  constructor(
    private readonly client: Client,
    private readonly scripts: Scripts,
    private readonly keys: RedisKeys,
  ) {}

  private partKeys(topic: string, partition: number): [stream: string, end: string, start: string] {
    return [this.keys.stream(topic, partition), this.keys.end(topic, partition), this.keys.start(topic, partition)]
  }

  /** Remove offsets below `before` (clamped to the retained range); resolves with how many were removed. */
  async trimBefore(topic: string, partition: number, before: number): Promise<number> {
    try {
      return Number(await this.scripts.call('trim', this.partKeys(topic, partition), [Math.max(0, Math.floor(before))]))
    } catch (e) {
      if (e instanceof Error && e.message.startsWith('NOTOPIC'))
        throw new TopicNotFoundError(`Topic "${topic}" (partition ${partition}) does not exist`)
      throw redisError(`Trim of "${topic}" partition ${partition} failed`, e)
    }
  }

  /**
   * The first offset with `timestamp >= time`, whatever the order of timestamps: a binary search
   * in Lua over the running maximum, then (only when the first retained entry carries a maximum
   * from a trimmed one) a scan a page per call (offset-for-time-3.lua).
   */
  async offsetForTime(topic: string, partition: number, time: number): Promise<number> {
    try {
      const keys = this.partKeys(topic, partition)
      let [offset, done] = await this.scripts.call('offset-for-time', keys, [time, ''])
      while (Number(done) !== 1)
        [offset, done] = await this.scripts.call('offset-for-time', keys, [time, Number(offset)])
      return Number(offset)
    } catch (e) {
      throw redisError(`Time lookup in "${topic}" partition ${partition} failed`, e)
    }
  }

  /**
   * Apply `maxMessages`, `maxAgeMs` and `maxBytes` (estimated from Redis's memory use); `consumed`
   * is the backend-agnostic `trimConsumed` (backends/trim-consumed.ts), run by the backend after this.
   */
  async apply(meta: TopicMeta): Promise<number> {
    const r = meta.retention
    let removed = 0
    for (let p = 0; p < meta.partitions; p++) {
      if (r.maxMessages === undefined && r.maxAgeMs === undefined && r.maxBytes === undefined) break
      let cut = 0
      const [end, start] = await this.bounds(meta.name, p)
      if (r.maxMessages !== undefined) cut = Math.max(cut, end - r.maxMessages)
      if (r.maxAgeMs !== undefined) cut = Math.max(cut, await this.offsetForTime(meta.name, p, Date.now() - r.maxAgeMs))
      if (r.maxBytes !== undefined && end > start) {
        const bytes = Number((await this.client.memory('USAGE', this.keys.stream(meta.name, p)).catch(() => 0)) ?? 0)
        if (bytes > r.maxBytes) cut = Math.max(cut, end - Math.floor(((end - start) * r.maxBytes) / bytes))
      }
      if (cut > start) removed += await this.trimBefore(meta.name, p, cut)
    }
    return removed
  }

  /** End and start offsets of a partition. */
  async bounds(topic: string, partition: number): Promise<[end: number, start: number]> {
    const [end, start] = await this.client.mget(this.keys.end(topic, partition), this.keys.start(topic, partition))
    return [Number(end ?? 0), Number(start ?? 0)]
  }
}
