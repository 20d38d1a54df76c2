import type { Backend } from '../backends/backend.js'
import { TopicExistsError, TopicNotFoundError, TwainError } from '../core/errors.js'
import type { Message } from '../core/types.js'
import type { TypeCheck } from '../producer/prepare.js'
import { Producer } from '../producer/producer.js'

/**
 * A dead letter keeps its message's type and value as the consumer read them: validated then (or
 * carrying the validation's error), and possibly of a type this instance never registered.
 */
export const AS_READ: TypeCheck = { validate: (_type, value) => Promise.resolve(value) }

/** Writes one dead letter (`m` given up, as `key`, `value` and `options`) instead of the writer's producer. */
export type DeadLetterSend = (
  m: Message & { deliveryCount: number },
  topic: string,
  key: Message['key'],
  value: unknown,
  options: { headers: Record<string, string>; type?: string },
) => Promise<unknown>

/**
 * Writes given-up messages to a dead-letter topic through a `Producer` of it (its encoding, size
 * and key checks and its partitioner): the original key, value, type and headers plus
 * `x-dead-letter-reason`, `x-original-topic`, `x-original-partition`, `x-original-offset` and
 * `x-delivery-count`. A missing topic is created with the source topic's key type and one partition.
 */
export class DeadLetterWriter {
  private ready: Promise<void> | undefined
  private readonly producer: Producer

  constructor(
    private readonly backend: Backend,
    readonly topic: string,
    producerId: string,
    /** Writes a dead letter instead of the producer (a processor's: exactly once, through its outputs). */
    private readonly sendVia?: DeadLetterSend,
  ) {
    this.producer = new Producer(backend, topic, producerId, AS_READ)
  }

  /** Create the dead-letter topic unless it exists: the key type of `source`, one partition. */
  private async ensureTopic(source: string): Promise<void> {
    try {
      await this.backend.getTopic(this.topic)
      return
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
        maxMessageBytes: Math.max(src.maxMessageBytes, 1024 * 1024) + 4096, // room for the x- headers
        createdAt: Date.now(),
      })
    } catch (e) {
      if (!(e instanceof TopicExistsError)) throw e
    }
  }

  /**
   * Write `m` in the background, then call `written`; when the write fails, `failed` gets a
   * retriable `ERR_DEAD_LETTER` error naming the message (the member delivers it again).
   */
  send(
    m: Message & { deliveryCount: number },
    reason: string,
    written: () => void,
    failed: (e: TwainError) => void,
  ): void {
    this.write(m, reason).then(written, (e) =>
      failed(
        new TwainError(
          `Dead-letter write of ${m.topic}/${m.partition}@${m.offset} to "${this.topic}" failed: ${(e as Error).message}`,
          { code: 'ERR_DEAD_LETTER', retriable: true, cause: e },
        ),
      ),
    )
  }

  async write(m: Message & { deliveryCount: number }, reason: string): Promise<void> {
    try {
      await (this.ready ??= this.ensureTopic(m.topic))
    } catch (e) {
      this.ready = undefined
      throw e
    }
    const headers = {
      ...m.headers,
      'x-dead-letter-reason': reason,
      'x-original-topic': m.topic,
      'x-original-partition': String(m.partition),
      'x-original-offset': String(m.offset),
      'x-delivery-count': String(m.deliveryCount),
    }
    const options = m.type === undefined ? { headers } : { headers, type: m.type }
    await (
      this.sendVia ? this.sendVia(m, this.topic, m.key, m.value, options) : this.producer.send(m.key, m.value, options)
    ).catch((e: unknown) => {
      if (e instanceof TopicNotFoundError) this.ready = undefined // deleted since: create it again next time
      throw e
    })
  }
}
