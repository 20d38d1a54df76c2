import { InvalidArgumentError } from '../../../core/errors.js'
import type { Key } from '../../../core/types.js'
import type { ProcessorMessage } from '../processor-message.js'
import type { Processor } from '../processor.js'
import { copiedHeaders } from '../copied-headers.js'

/** The header that tells a join topic's record's side: `left` or `right`. */
export const SIDE_HEADER = 'x-twain-join'

/** The event time of each side's records (default: their `timestamp`). */
export interface SideTimes<K extends Key> {
  left?: (m: ProcessorMessage<never, K>) => number
  right?: (m: ProcessorMessage<never, K>) => number
}

/**
 * Copy a join's two topics into its join topic (`joinStreams()`): each record, as an output of it
 * (so once, whatever crashes), to the same partition, with its key, value and headers, its side in
 * `SIDE_HEADER` and its event time as its timestamp. A partition's records of each side thus keep
 * their order in the join topic's partition of the same number. Ends when `copier` closes.
 */
export async function forward<K extends Key>(
  copier: Processor<unknown, K>,
  left: string,
  topic: string,
  times: SideTimes<K>,
): Promise<void> {
  for await (const m of copier) {
    const side = m.topic === left ? 'left' : 'right'
    const time = times[side]
    const t = time === undefined ? m.timestamp : time(m as ProcessorMessage<never, K>)
    if (typeof t !== 'number' || !Number.isFinite(t) || t < 0)
      throw new InvalidArgumentError(
        `joinStreams() event time of ${m.topic}/${m.partition}@${m.offset} is not ms since the epoch: ${String(t)}`,
      )
    const headers = copiedHeaders(m.headers)
    headers[SIDE_HEADER] = side
    // A copy that failed: the partition goes back to the record, and it is copied again.
    m.send(topic, m.key, m.value, { partition: m.partition, timestamp: t, headers }).catch(() => undefined)
    m.ack()
  }
}
