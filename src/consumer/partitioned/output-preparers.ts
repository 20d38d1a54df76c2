import type { TopicMeta } from '../../backends/backend.js'
import type { Partitioner } from '../../core/hash64.js'
import { Preparer, type TypeCheck } from '../../producer/prepare.js'

/** A topic's preparer, for one configuration of it and one type check. */
interface TopicPreparer {
  topic: string
  p: Preparer
  meta: TopicMeta
  types: TypeCheck
}

/**
 * The preparers of a processor's outputs and state writes: one per topic configuration and type
 * check, the last one used found without a lookup (a processor sends to one topic, mostly). Their
 * clock is not read: an output without an event time is stamped when its call is written, a state
 * write when it is prepared (`Outputs`, decision 237).
 */
export class OutputPreparers {
  private readonly byTopic = new Map<string, TopicPreparer>()
  private last: TopicPreparer | undefined

  constructor(private readonly partitioner: Partitioner) {}

  of(topic: string, meta: TopicMeta, types: TypeCheck): Preparer {
    let had = this.last
    if (had !== undefined && had.topic === topic && had.meta === meta && had.types === types) return had.p
    had = this.byTopic.get(topic)
    if (had === undefined || had.meta !== meta || had.types !== types) {
      had = { topic, p: new Preparer(meta, this.partitioner, types, 0), meta, types }
      this.byTopic.set(topic, had)
    }
    this.last = had
    return had.p
  }
}
