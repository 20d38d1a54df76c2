import * as A from './attributes.js'
import type { Telemetry } from './telemetry.js'

/** The lag of one group on one partition, as `describeGroup` reports it. */
export interface LagRow {
  group: string
  topic: string
  partition: number
  /** Messages not yet committed. */
  lag: number
  /** Age of the oldest message not yet committed, in ms (0 when caught up). */
  lagMs: number
}

/**
 * Register the observable gauges `messaging.consumer.lag` (messages) and
 * `messaging.consumer.lag.age` (seconds) per group and partition, read from `rows` at each
 * collection. Returns what unregisters them (at the instance's close). Without metrics, nothing.
 */
export function observeLag(tel: Telemetry, rows: () => Promise<LagRow[]>): () => void {
  const m = tel.instruments
  if (m === undefined) return () => undefined
  const messages = m.meter.createObservableGauge(A.LAG_MESSAGES, {
    unit: '{message}',
    description: 'Messages of a partition a consumer group has not committed yet',
  })
  const age = m.meter.createObservableGauge(A.LAG_AGE, {
    unit: 's',
    description: 'Age of the oldest message of a partition a consumer group has not committed yet (0 when caught up)',
  })
  const callback = async (result: {
    observe(o: typeof messages, value: number, attributes: Record<string, string>): void
  }): Promise<void> => {
    for (const r of await rows()) {
      const attrs = {
        [A.SYSTEM]: A.SYSTEM_NAME,
        [A.GROUP]: r.group,
        [A.DESTINATION]: r.topic,
        [A.PARTITION]: String(r.partition),
      }
      result.observe(messages, r.lag, attrs)
      result.observe(age, r.lagMs / 1000, attrs)
    }
  }
  m.meter.addBatchObservableCallback(callback, [messages, age])
  return () => m.meter.removeBatchObservableCallback(callback, [messages, age])
}
