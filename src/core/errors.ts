/**
 * The twainmq error tree. Every error has a stable `code` (`ERR_…`), a `retriable` flag that tells
 * whether the same call may succeed later, and the native `cause` where one exists. Messages always
 * name the bad value.
 */
export class TwainError extends Error {
  /** Stable machine-readable code, e.g. `ERR_TOPIC_NOT_FOUND`. */
  readonly code: string
  /** Whether retrying the same operation later may succeed. */
  readonly retriable: boolean

  constructor(message: string, options: { code?: string; retriable?: boolean; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = new.target.name
    this.code = options.code ?? 'ERR_TWAIN'
    this.retriable = options.retriable ?? false
  }
}

type Opts = { cause?: unknown }

function subclass(name: string, code: string, retriable = false) {
  const cls = class extends TwainError {
    constructor(message: string, options: Opts = {}) {
      super(message, { code, retriable, cause: options.cause })
      this.name = name
    }
  }
  Object.defineProperty(cls, 'name', { value: name })
  return cls
}

/** A topic name that is not `^[A-Za-z0-9_.-]{1,200}$`, is `.`/`..`, or starts with `__`. */
export const InvalidTopicNameError = subclass('InvalidTopicNameError', 'ERR_INVALID_TOPIC_NAME')
export type InvalidTopicNameError = InstanceType<typeof InvalidTopicNameError>
/** A key type other than `u8|u16|u32|u64|charN|string`. */
export const InvalidKeyTypeError = subclass('InvalidKeyTypeError', 'ERR_INVALID_KEY_TYPE')
export type InvalidKeyTypeError = InstanceType<typeof InvalidKeyTypeError>
/** A key that does not fit the topic's key type. */
export const InvalidKeyError = subclass('InvalidKeyError', 'ERR_INVALID_KEY')
export type InvalidKeyError = InstanceType<typeof InvalidKeyError>
/** `createTopic` of a name that exists. */
export const TopicExistsError = subclass('TopicExistsError', 'ERR_TOPIC_EXISTS')
export type TopicExistsError = InstanceType<typeof TopicExistsError>
/** An operation on a topic that does not exist. */
export const TopicNotFoundError = subclass('TopicNotFoundError', 'ERR_TOPIC_NOT_FOUND')
export type TopicNotFoundError = InstanceType<typeof TopicNotFoundError>
/** Key + headers + encoded value larger than the topic's `maxMessageBytes`. */
export const MessageTooLargeError = subclass('MessageTooLargeError', 'ERR_MESSAGE_TOO_LARGE')
export type MessageTooLargeError = InstanceType<typeof MessageTooLargeError>
/** `registerType` of a name already registered. */
export const TypeAlreadyRegisteredError = subclass('TypeAlreadyRegisteredError', 'ERR_TYPE_ALREADY_REGISTERED')
export type TypeAlreadyRegisteredError = InstanceType<typeof TypeAlreadyRegisteredError>
/** A message type that is not registered (or not allowed on the topic). */
export const UnknownMessageTypeError = subclass('UnknownMessageTypeError', 'ERR_UNKNOWN_MESSAGE_TYPE')
export type UnknownMessageTypeError = InstanceType<typeof UnknownMessageTypeError>
/** A value rejected by its registered type's schema. */
export const ValidationError = subclass('ValidationError', 'ERR_VALIDATION')
export type ValidationError = InstanceType<typeof ValidationError>
/** Stored data that cannot be decoded (bad CRC in the middle of a segment, broken metadata). */
export const TopicCorruptError = subclass('TopicCorruptError', 'ERR_TOPIC_CORRUPT')
export type TopicCorruptError = InstanceType<typeof TopicCorruptError>
/** A commit by a group member that no longer owns the partition. */
export const FencedError = subclass('FencedError', 'ERR_FENCED')
export type FencedError = InstanceType<typeof FencedError>
/** An option or argument out of its range. */
export const InvalidArgumentError = subclass('InvalidArgumentError', 'ERR_INVALID_ARGUMENT')
export type InvalidArgumentError = InstanceType<typeof InvalidArgumentError>
/** The backend could not be reached. */
export const ConnectionError = subclass('ConnectionError', 'ERR_CONNECTION', true)
export type ConnectionError = InstanceType<typeof ConnectionError>
/** The backend failed an operation (I/O error, Redis error). */
export const BackendError = subclass('BackendError', 'ERR_BACKEND', true)
export type BackendError = InstanceType<typeof BackendError>
/** An operation did not finish in time (e.g. a partition lock could not be taken). */
export const TimeoutError = subclass('TimeoutError', 'ERR_TIMEOUT', true)
export type TimeoutError = InstanceType<typeof TimeoutError>
/** Use of a closed `Twain`, producer, stream or consumer. */
export const ClosedError = subclass('ClosedError', 'ERR_CLOSED')
export type ClosedError = InstanceType<typeof ClosedError>
/** An `AbortSignal` fired. */
export const AbortError = subclass('AbortError', 'ERR_ABORTED')
export type AbortError = InstanceType<typeof AbortError>

/** The error to throw for an aborted signal: its reason when that is already an `AbortError`. */
export function abortErrorFrom(signal: AbortSignal): InstanceType<typeof AbortError> {
  const reason: unknown = signal.reason
  if (reason instanceof AbortError) return reason
  return new AbortError('The operation was aborted', { cause: reason })
}

/** Wrap an unknown I/O failure as a `BackendError` naming what was being done. */
export function backendError(what: string, cause: unknown): TwainError {
  if (cause instanceof TwainError) return cause
  const detail = cause instanceof Error ? cause.message : String(cause)
  return new BackendError(`${what}: ${detail}`, { cause })
}
