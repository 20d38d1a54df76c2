import { StalledError } from '../core/errors.js'
import { errorFields, logTo, type Logger } from '../core/logger.js'
import type { ConsumerEventMap } from '../consumer/events.js'

/** What a consumer or processor offers to be logged: its events. */
interface Member {
  on<E extends keyof ConsumerEventMap>(event: E, listener: (payload: ConsumerEventMap[E]) => void): () => void
}

const parts = (tps: ReadonlyArray<{ topic: string; partition: number }>): string[] =>
  tps.map((tp) => `${tp.topic}/${tp.partition}`)

/**
 * Tell `logger` what a member does in the background (`open(…, { logger })`): partitions assigned
 * and revoked (`info`), commits (`debug`), stalls (`warn`) and background failures (`error`). Its
 * `'error'` listener means such failures are logged rather than printed as process warnings.
 */
export function logMember(member: Member, logger: Logger, fields: { group: string; kind: string }): void {
  member.on('assigned', (tps) =>
    logTo(
      logger,
      'info',
      { ...fields, event: 'assigned', partitions: parts(tps) },
      `twainmq: ${fields.kind} of group "${fields.group}" assigned ${parts(tps).join(' ')}`,
    ),
  )
  member.on('revoked', (tps) =>
    logTo(
      logger,
      'info',
      { ...fields, event: 'revoked', partitions: parts(tps) },
      `twainmq: ${fields.kind} of group "${fields.group}" gave up ${parts(tps).join(' ')}`,
    ),
  )
  member.on('commit', (offsets) =>
    logTo(
      logger,
      'debug',
      {
        ...fields,
        event: 'commit',
        offsets: offsets.map((o) => ({ partition: `${o.topic}/${o.partition}`, offset: o.offset })),
      },
      `twainmq: ${fields.kind} of group "${fields.group}" committed`,
    ),
  )
  member.on('error', (e) =>
    e instanceof StalledError
      ? logTo(logger, 'warn', { ...fields, event: 'stalled', held: e.held, maxInFlight: e.maxInFlight }, e.message)
      : logTo(logger, 'error', { ...fields, event: 'failure', ...errorFields(e) }, e.message),
  )
}
