import type { Attributes, Link, Span } from '@opentelemetry/api'
import type {
  Backend,
  IdempotentOutcome,
  IdempotentResult,
  OutputSource,
  TextFrame,
  TextFrames,
} from '../backends/backend.js'
import type { RecordInput } from '../backends/record.js'
import * as A from './attributes.js'
import type { Telemetry } from './telemetry.js'

/*
 * The store as producers and consumers see it when telemetry is on: every batch written to a
 * partition (the producer's appends, its text frames, a processor's outputs) is one operation,
 * traced as one span with links to the creation contexts its records carry (so a sendBatch of
 * 100,000 messages is one span per partition written, not 100,000), and counted in the messaging
 * metrics. Everything else reaches the store unchanged.
 */

/** One traced, measured write: `send <topic>`, or `commit <topic>` for a processor's outputs. */
class WriteOp {
  readonly #start = performance.now()
  readonly #span: Span | undefined

  constructor(
    private readonly tel: Telemetry,
    private readonly operation: 'send' | 'commit',
    private readonly topic: string,
    private readonly partition: number,
    private readonly count: number,
    links: Link[] | undefined,
    extra: Attributes | undefined,
  ) {
    const tracer = tel.tracer
    if (tracer === undefined) return
    const attributes: Attributes = {
      [A.SYSTEM]: A.SYSTEM_NAME,
      [A.OPERATION_NAME]: operation,
      [A.OPERATION_TYPE]: 'send',
      [A.DESTINATION]: topic,
      [A.PARTITION]: String(partition),
      ...extra,
    }
    if (count !== 1) attributes[A.BATCH_COUNT] = count
    this.#span = tracer.startSpan(`${operation} ${topic}`, {
      kind: tel.api.SpanKind.PRODUCER,
      attributes,
      ...(links === undefined ? {} : { links }),
    })
  }

  /** The write stored its records from `offset` on. */
  done(offset: number): void {
    this.#span?.setAttribute(A.OFFSET, offset)
    this.#span?.end()
    this.#measure(undefined)
  }

  failed(e: unknown): void {
    const type = A.errorType(e)
    if (this.#span !== undefined) {
      this.#span.setAttribute(A.ERROR_TYPE, type)
      this.#span.setStatus({ code: this.tel.api.SpanStatusCode.ERROR, message: (e as Error)?.message ?? String(e) })
      this.#span.end()
    }
    this.#measure(type)
  }

  #measure(error: string | undefined): void {
    const m = this.tel.instruments
    if (m === undefined) return
    const attrs = this.tel.attributes(this.operation, 'send', this.topic, this.partition, undefined, error)
    m.sent.add(this.count, attrs)
    m.operationDuration.record((performance.now() - this.#start) / 1000, attrs)
  }

  /** Trace `write`, which resolves with the first offset written (or what gives it). */
  async run<T>(write: Promise<T>, first: (r: T) => number): Promise<T> {
    try {
      const r = await write
      this.done(first(r))
      return r
    } catch (e) {
      this.failed(e)
      throw e
    }
  }
}

const firstOffset = (r: IdempotentResult[]): number => r[0]?.offset ?? -1
const firstOfOutcome = (o: IdempotentOutcome): number => {
  const s = o.slots[0]
  return s === undefined ? -1 : s < 0 ? o.base + ~s : s
}
const same = (n: number): number => n

function tracedFrames(frames: TextFrames, tel: Telemetry): TextFrames {
  return {
    frame: (topic, producerId) => frames.frame(topic, producerId),
    append: (topic, partition, frame) =>
      new WriteOp(tel, 'send', topic, partition, frame.count, undefined, undefined).run(
        frames.append(topic, partition, frame),
        same,
      ),
    appendNow: (topic: string, partition: number, frame: TextFrame) => {
      const count = frame.count
      let first: number | undefined
      try {
        first = frames.appendNow(topic, partition, frame)
      } catch (e) {
        new WriteOp(tel, 'send', topic, partition, count, undefined, undefined).failed(e)
        throw e
      }
      // Not now: the producer appends the frame through `append` instead, traced there.
      if (first !== undefined) new WriteOp(tel, 'send', topic, partition, count, undefined, undefined).done(first)
      return first
    },
    appendIdempotent: (topic, partition, frame, windowMs) =>
      new WriteOp(tel, 'send', topic, partition, frame.count, undefined, undefined).run(
        frames.appendIdempotent(topic, partition, frame, windowMs),
        firstOfOutcome,
      ),
  }
}

/** `store` with its writes traced and measured by `tel` (the rest passed through as it is). */
export function tracedStore(store: Backend, tel: Telemetry): Backend {
  const own: Partial<Record<keyof Backend, unknown>> = {
    append: (...args: Parameters<Backend['append']>) => {
      const [topic, partition, records] = args
      return new WriteOp(tel, 'send', topic, partition, records.length, links(tel, records), undefined).run(
        store.append(...args),
        same,
      )
    },
    appendIdempotent: (...args: Parameters<Backend['appendIdempotent']>) => {
      const [topic, partition, records] = args
      return new WriteOp(tel, 'send', topic, partition, records.length, links(tel, records), undefined).run(
        store.appendIdempotent(...args),
        firstOffset,
      )
    },
    appendSourced: (...args: Parameters<Backend['appendSourced']>) => {
      const [topic, partition, records, , source] = args
      return new WriteOp(tel, 'commit', topic, partition, records.length, links(tel, records), sourceOf(source)).run(
        store.appendSourced(...args),
        firstOffset,
      )
    },
    frames: store.frames === undefined ? undefined : tracedFrames(store.frames, tel),
  }
  const bound = new Map<PropertyKey, unknown>()
  return new Proxy(store, {
    get(target, prop) {
      if (Object.prototype.hasOwnProperty.call(own, prop)) return own[prop as keyof Backend]
      const v: unknown = Reflect.get(target, prop, target)
      if (typeof v !== 'function') return v
      let b = bound.get(prop)
      if (b === undefined) bound.set(prop, (b = (v as (...a: unknown[]) => unknown).bind(target)))
      return b
    },
  })
}

function links(tel: Telemetry, records: readonly RecordInput[]): Link[] | undefined {
  return tel.tracer === undefined ? undefined : tel.linksOf(records)
}

/** A processor's commit: the group and input partition whose outputs these are. */
function sourceOf(source: OutputSource): Attributes {
  return {
    [A.GROUP]: source.group,
    'twainmq.source.topic': source.topic,
    'twainmq.source.partition.id': String(source.partition),
  }
}
