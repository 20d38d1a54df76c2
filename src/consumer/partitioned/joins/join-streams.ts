import { InvalidArgumentError } from '../../../core/errors.js'
import type { Key } from '../../../core/types.js'
import { MessageStream } from '../../../stream/message-stream.js'
import { copiedHeaders } from '../copied-headers.js'
import type { ProcessorMessage, ProcessorMessageImpl } from '../processor-message.js'
import type { Processor } from '../processor.js'
import { noResult, ResultSource } from '../result-source.js'
import { checkKeepable, JoinBuffers, type JoinLane, type Side } from './join-buffers.js'
import { forward, SIDE_HEADER } from './join-forward.js'
import { checkJoinOptions, processorOptions, type JoinOptions } from './join-options.js'
import { coPartition, type JoinHost } from './join-topics.js'

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
  checkJoinOptions(options)
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
    const topic = await coPartition(this.host, o, `${o.group}-join`)
    if (this.closed) throw new InvalidArgumentError(`joinStreams() of group "${o.group}" was closed while it opened`)
    const opts = processorOptions(o.processors)
    const copier = this.host.processor<unknown, K>([o.left, o.right], { ...opts, group: `${o.group}-in` })
    // From the start of the join topic whatever `from` says: a copy committed by the copier and not
    // yet by the joiner would be skipped otherwise.
    const joiner = this.host.processor<unknown, K>(topic, { ...opts, group: o.group, state: 'join', from: 'start' })
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
    if (at === undefined) return m.ack() // its partition is gone: nothing it does is kept
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
      if (value === undefined)
        throw new InvalidArgumentError(
          `joinStreams() join() returned undefined for key ${String(m.key)} (event times ${leftTime} and ${rightTime}): return a value to store`,
        )
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
