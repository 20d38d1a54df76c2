import { ClosedError, FencedError } from '../../core/errors.js'
import type { Key, RecordMetadata } from '../../core/types.js'
import { InPlaceFields } from '../../producer/send-record.js'
import type { PartitionHandle } from './partition-message.js'

/** Options of one output (`ProcessorMessage.send`): a producer's `SendOptions` without `id` (an output's identity is its source position). */
export interface OutputOptions {
  /** Headers stored with the output (the store adds `x-twain-source`). @default none */
  headers?: Record<string, string>
  /** A registered message type: the value is validated and stored as tagged JSON. @default none (the value is stored as it is) */
  type?: string
  /** Write to this partition instead of the partitioner's choice. @default the processor's `partitioner` of the key */
  partition?: number
  /**
   * The output's event time, as `SendOptions.timestamp` (ms since the epoch or a `Date`), e.g. its
   * input's `message.timestamp` to keep event time through a pipeline.
   * @default the time the output is appended
   */
  timestamp?: number | Date
}

/** Where an output is stored. */
export interface OutputMetadata extends RecordMetadata {
  topic: string
}

/** Told how an output ended (`Outputs.emit`): `resolve` once stored, else `reject`. */
export type OutputResolve = (r: OutputMetadata) => void
export type OutputReject = (e: unknown) => void

const ignore = (): void => undefined

/**
 * Mark the promise of a send (`ProcessorMessage.send`) handled before it rejects: the processor
 * acts on an output that fails (its message is delivered again, or its partition is another
 * member's), so a caller that leaves the promise alone, as the batch idiom does, must not have the
 * process end on an unhandled rejection. A caller that awaits it still gets the failure.
 */
export function leftToAck(sent: Promise<unknown> | undefined): void {
  if (sent !== undefined) void sent.catch(ignore)
}

/**
 * Whether a failure of an output (or of a state flush), which sends its input partition back, is
 * reported as an `'error'` event: not when it is the member's own doing (`nack()` dropped it,
 * `close()`) or its partition moved on (`FencedError`: the loss is the member's `'revoked'`).
 */
export function reportedFailure(e: unknown): boolean {
  return !(e instanceof FencedError || e instanceof ClosedError || (e as { code?: string }).code === 'ERR_DISCARDED')
}

/** The message an output is of: its offset is the output's source position (with the output's sequence number). */
export interface OutputOf {
  readonly offset: number
  /** Its deliveries so far (a message's; absent for a timer turn): a rewind for its failed output counts on from them. */
  readonly deliveryCount?: number
  /**
   * Its output sent with `token` settled (`failure` undefined: stored): called once per output,
   * before the output's promise settles, so the message needs no promise of its own per output.
   */
  outputDone(token: number, failure: unknown): void
  /** Whether it may still send outputs: not settled, no ack asked for (absent: taken as no). */
  isOpen?(): boolean
}

/**
 * One output of a processor's message from `send` to its write (`Outputs`): the caller's input,
 * prepared in place into the record written (as a producer's `SendRecord`), with the message it
 * is of, its number, and who is told how it ended. One object per output, where an input, a
 * record, a queue entry and a `{ resolve, reject }` were four, and every output waiting for its
 * write holds them all.
 */
export class OutputRecord extends InPlaceFields {
  constructor(
    /** The message it is an output of (told first when it settles). */
    readonly m: OutputOf,
    /** That message's partition handle, as it was when the output was sent. */
    readonly h: PartitionHandle,
    /** Its number among the message's outputs (its source position with `m.offset`). */
    readonly seq: number,
    /** The delivery it was sent in (`OutputOf.outputDone`). */
    readonly token: number,
    key: Key,
    value: unknown,
    options: OutputOptions | undefined,
    /** Told once it is stored (or recognised as stored). */
    readonly resolve: OutputResolve,
    /** Told that it will not be. */
    readonly reject: OutputReject,
    /** The promise `resolve` and `reject` settle, when `send` made one (`leftToAck` before it rejects). */
    readonly sent: Promise<unknown> | undefined,
  ) {
    super(key, value, options)
  }
}
