import type { Backend, TopicMeta } from '../backends/backend.js'
import type { RecordInput } from '../backends/record.js'
import { TopicExistsError, TopicNotFoundError, TwainError } from '../core/errors.js'
import { cachedHash64 } from '../core/hash64.js'
import { keyCodec } from '../core/keys.js'
import type { Message } from '../core/types.js'
import { encodeValue } from '../core/values.js'

/**
 * Writes given-up messages to a dead-letter topic: the original key, value, type and headers plus
 * `x-dead-letter-reason`, `x-original-topic`, `x-original-partition`, `x-original-offset` and
 * `x-delivery-count`. A missing topic is created with the source topic's key type and one partition.
 */
export class DeadLetterWriter {
  private meta: Promise<TopicMeta> | undefined
  private readonly partitioner = cachedHash64()

  constructor(
    private readonly backend: Backend,
    readonly topic: string,
    private readonly producerId: string,
  ) {}

  private async target(source: string): Promise<TopicMeta> {
    try {
      return await this.backend.getTopic(this.topic)
    } catch (e) {
      if (!(e instanceof TopicNotFoundError)) throw e
    }
    const src = await this.backend.getTopic(source)
    try {
      await this.backend.createTopic({
        name: this.topic,
        partitions: 1,
        keyType: src.keyType,
        messageTypes: [],
        retention: {},
        maxMessageBytes: Math.max(src.maxMessageBytes, 1024 * 1024) + 4096,
        createdAt: Date.now(),
      })
    } catch (e) {
      if (!(e instanceof TopicExistsError)) throw e
    }
    return this.backend.getTopic(this.topic)
  }

  /**
   * Write `m` in the background, then call `written`; when the write fails, `failed` gets a
   * retriable `ERR_DEAD_LETTER` error naming the message (the member delivers it again).
   */
  send(m: Message & { deliveryCount: number }, reason: string, written: () => void, failed: (e: TwainError) => void): void {
    this.write(m, reason).then(written, (e) =>
      failed(new TwainError(`Dead-letter write of ${m.topic}/${m.partition}@${m.offset} to "${this.topic}" failed: ${(e as Error).message}`, { code: 'ERR_DEAD_LETTER', retriable: true, cause: e })),
    )
  }

  async write(m: Message & { deliveryCount: number }, reason: string): Promise<void> {
    this.meta ??= this.target(m.topic)
    let meta: TopicMeta
    try {
      meta = await this.meta
    } catch (e) {
      this.meta = undefined
      throw e
    }
    const codec = keyCodec(meta.keyType)
    const value = encodeValue(m.value, m.type !== undefined)
    const key = codec.encode(m.key)
    const record: RecordInput = {
      key,
      keyBytes: key.length,
      timestamp: Date.now(),
      kind: value.kind,
      value: value.bytes,
      valueBytes: value.length,
      type: m.type,
      headers: {
        ...m.headers,
        'x-dead-letter-reason': reason,
        'x-original-topic': m.topic,
        'x-original-partition': String(m.partition),
        'x-original-offset': String(m.offset),
        'x-delivery-count': String(m.deliveryCount),
      },
    }
    const partition = this.partitioner(codec.normalise(m.key), meta.partitions)
    await this.backend.append(this.topic, partition, [record], this.producerId)
  }
}
