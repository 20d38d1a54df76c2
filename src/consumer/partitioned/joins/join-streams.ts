import { InvalidArgumentError } from '../../../core/errors.js'
import { checkTopicName } from '../../../core/names.js'
import type { Key } from '../../../core/types.js'
import { MessageStream } from '../../../stream/message-stream.js'
import type { ProcessorMessage, ProcessorMessageImpl } from '../processor-message.js'
import type { Processor, ProcessorOptions } from '../processor.js'
import { noResult, ResultSource } from '../result-source.js'
import { checkKeepable, JoinBuffers, type JoinLane, type Side } from './join-buffers.js'
import { copiedHeaders } from '../copied-headers.js'
import { forward, SIDE_HEADER } from './join-forward.js'
import { coPartition, type JoinHost } from './join-topics.js'

/** The processors' options `joinStreams()` passes on (README "Exactly-once processing"). */
export type JoinProcessorOptions = Omit<ProcessorOptions, 'group' | 'state' | 'deadLetter' | 'partitioner' | 'name'>

/** Options of `joinStreams()` (README "Stream–stream joins"). */
export interface JoinOptions<L, R, J, K extends Key> {
  /** The left topic. @default required */
  left: string
  /** The right topic: as many partitions as `left`, the same key type. @default required */
  right: string
  /**
   * The join's name: its processors' groups (`<group>` joins, `<group>-in` copies both topics
   * into the join topic `<group>-join`), and its state's changelog, `<group>-join-changelog`.
   * @default required
   */
  group: string
  /** Two records of a key pair when their event times are at most this far apart (ms). @default required */
  withinMs: number
  /** The topic each pair's `join()` value is sent to, under their key, timestamped with the later of the two. @default required */
  to: string
  /** A pair's value (a pure function of its arguments: it runs again for a record processed again). @default required */
  join: (left: L, right: R, pair: { key: K; leftTime: number; rightTime: number }) => J
  /** How far each side's event time may go back: its watermark is its largest event time seen less this. @default 0 */
  latenessMs?: number
  /** A left record's event time, ms since the epoch. @default its `timestamp` */
  leftTime?: (m: ProcessorMessage<L, K>) => number
  /** A right record's event time. @default its `timestamp` */
  rightTime?: (m: ProcessorMessage<R, K>) => number
  /** Topic a late record (below its side's watermark) is sent to, with the header `x-twain-join: left | right`. @default none: it is dropped */
  lateTo?: string
  /** Called with each late record and its side. @default none */
  onLate?: (m: ProcessorMessage<L | R, K>, side: 'left' | 'right') => void
  /** Options of both processors (`sessionTimeoutMs`, `from`, `maxInFlight`, `signal`, …). @default a processor's */
  processors?: JoinProcessorOptions
}

/** One pair, as stored in `to`. */
export interface JoinResult<J, K extends Key = Key> {
  key: K
  value: J
  /** The two records' event times. */
  leftTime: number
  rightTime: number
  /** The partition it was found in (the inputs' partition). */
  partition: number
  /** Where it is stored in `to`. */
  offset: number
  /** An earlier delivery of the record that found it stored it (this stream may then repeat it). */
  duplicate?: true
}

function checkOptions<L, R, J, K extends Key>(o: JoinOptions<L, R, J, K>): void {
  if (typeof o !== 'object' || o === null)
    throw new InvalidArgumentError(`joinStreams() needs options, got ${String(o)}`)
  checkTopicName(o.left)
  checkTopicName(o.right)
  checkTopicName(o.to)
  if (o.left === o.right)
    throw new InvalidArgumentError(`joinStreams() left and right are both "${o.left}": join two topics`)
  if (typeof o.group !== 'string' || o.group === '')
    throw new InvalidArgumentError(`joinStreams() group must be a name, got ${String(o.group)}`)
  checkTopicName(`${o.group}-join-changelog`)
  const w = o.withinMs
  if (typeof w !== 'number' || !Number.isSafeInteger(w) || w < 0)
    throw new InvalidArgumentError(`joinStreams() withinMs must be a non-negative integer (ms), got ${String(w)}`)
  const l = o.latenessMs ?? 0
  if (typeof l !== 'number' || !Number.isSafeInteger(l) || l < 0)
    throw new InvalidArgumentError(`joinStreams() latenessMs must be a non-negative integer, got ${String(l)}`)
  if (typeof o.join !== 'function') throw new InvalidArgumentError(`joinStreams() needs a join(left, right) function`)
  if (o.lateTo !== undefined) checkTopicName(o.lateTo)
}

/**
 * A windowed stream–stream join (README "Stream–stream joins"; docs/processing.md; decision 210):
 * each record of `left` is paired with each record of `right` of the same key whose event time is
 * within `withinMs` of its own, and `join(left, right)` is sent to `to` once per pair, exactly
 * once across kills and rebalances. `left` and `right` must be co-partitioned (the same partition
 * count and key type: `InvalidArgumentError` otherwise). Iterating the stream runs the join's
 * two processors: one copies both topics, partition for partition, into the join topic; the other
 * pairs its records with a state store (`JoinBuffers`). It yields each pair once stored.
 */
export function joinStreams<L, R, J, K extends Key = Key>(
  host: JoinHost,
  options: JoinOptions<L, R, J, K>,
): MessageStream<JoinResult<J, K>> {
  checkOptions(options)
  return new MessageStream<JoinResult<J, K>>({ open: () => new JoinSource(host, options) })
}

class JoinSource<L, R, J, K extends Key> extends ResultSource<ProcessorMessage<unknown, K>, JoinResult<J, K>> {
  private readonly buffers: JoinBuffers
  private readonly lanes = new WeakMap<object, JoinLane>()
  private processors: Array<Processor<unknown, K>> = []
  private closed = false

  constructor(
    private readonly host: JoinHost,
    private readonly o: JoinOptions<L, R, J, K>,
  ) {
    super()
    this.buffers = new JoinBuffers(o.withinMs, o.latenessMs ?? 0)
  }

  protected async source(): Promise<Processor<unknown, K>> {
    const o = this.o
    const topic = await coPartition(this.host, o.left, o.right, `${o.group}-join`)
    if (this.closed) throw new InvalidArgumentError(`joinStreams() of group "${o.group}" was closed while it opened`)
    const opts = o.processors ?? {}
    const copier = this.host.processor<unknown, K>([o.left, o.right], { ...opts, group: `${o.group}-in` })
    const joiner = this.host.processor<unknown, K>(topic, { ...opts, group: o.group, state: 'join' })
    this.processors = [copier, joiner]
    const times = { left: o.leftTime, right: o.rightTime } as Parameters<typeof forward>[3]
    void forward(copier, o.left, topic, times).catch((e: unknown) => this.fail(e))
    return joiner
  }

  protected take(m: ProcessorMessage<unknown, K>): void {
    const o = this.o
    const sideName = m.headers[SIDE_HEADER]
    if (sideName !== 'left' && sideName !== 'right')
      throw new InvalidArgumentError(
        `joinStreams() record ${m.topic}/${m.partition}@${m.offset} has no ${SIDE_HEADER} header: the join topic holds another writer's records`,
      )
    const side: Side = sideName === 'left' ? 0 : 1
    const at = (m as unknown as ProcessorMessageImpl<unknown>).stateOf()
    if (at === undefined) return // its partition is gone: nothing it does is kept
    let lane = this.lanes.get(at.state)
    if (lane === undefined || lane.generation !== at.generation) {
      lane = this.buffers.lane(at.state, at.generation)
      this.lanes.set(at.state, lane)
    }
    const t = m.timestamp
    if (this.buffers.late(lane, side, t)) {
      o.onLate?.(m as ProcessorMessage<L | R, K>, sideName)
      if (o.lateTo !== undefined)
        m.send(o.lateTo, m.key, m.value, { headers: copiedHeaders(m.headers), timestamp: t }).catch(() => undefined)
      m.ack()
      return
    }
    checkKeepable(m.value, `${m.topic}/${m.partition}@${m.offset}`)
    for (const p of this.buffers.add(m.state, lane, side, m.key, t, m.value)) {
      const [leftTime, left] = p.left
      const [rightTime, right] = p.right
      const value = o.join(left as L, right as R, { key: m.key, leftTime, rightTime })
      const sent = m.send(o.to, m.key, value, { timestamp: Math.max(leftTime, rightTime) })
      const result = { key: m.key, value, leftTime, rightTime, partition: m.partition }
      // A pair that failed: the record comes again (its ack fails), and so does the pair.
      this.track(
        sent.then(
          (r) => ({ ...result, offset: r.offset, ...(r.duplicate ? { duplicate: true as const } : {}) }),
          noResult,
        ),
      )
    }
    m.ack()
  }

  override async close(): Promise<void> {
    this.closed = true
    await super.close()
    await Promise.all(this.processors.map((p) => p.close()))
  }
}
