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

/** A topic name that is not `^[A-Za-z0-9_.-]{1,200}$`, is `.`/`..`, or starts with `__`. */
export class InvalidTopicNameError extends TwainError {
  constructor(message: string, options: Opts = {}) {
    super(message, { code: 'ERR_INVALID_TOPIC_NAME', cause: options.cause })
    this.name = 'InvalidTopicNameError'
  }
}
/** A key type other than `u8|u16|u32|u64|charN|string`. */
export class InvalidKeyTypeError extends TwainError {
  constructor(message: string, options: Opts = {}) {
    super(message, { code: 'ERR_INVALID_KEY_TYPE', cause: options.cause })
    this.name = 'InvalidKeyTypeError'
  }
}
/** A key that does not fit the topic's key type; the key is in `key`. */
export class InvalidKeyError extends TwainError {
  /** The key that was refused. */
  readonly key: unknown
  constructor(message: string, options: Opts & { key?: unknown } = {}) {
    super(message, { code: 'ERR_INVALID_KEY', cause: options.cause })
    this.name = 'InvalidKeyError'
    this.key = options.key
  }
}
/** `createTopic` of a name that exists. */
export class TopicExistsError extends TwainError {
  constructor(message: string, options: Opts = {}) {
    super(message, { code: 'ERR_TOPIC_EXISTS', cause: options.cause })
    this.name = 'TopicExistsError'
  }
}
/** An operation on a topic that does not exist. */
export class TopicNotFoundError extends TwainError {
  constructor(message: string, options: Opts = {}) {
    super(message, { code: 'ERR_TOPIC_NOT_FOUND', cause: options.cause })
    this.name = 'TopicNotFoundError'
  }
}
/** Key + headers + encoded value larger than the topic's `maxMessageBytes`; the sizes are in `size` and `limit`. */
export class MessageTooLargeError extends TwainError {
  /** Bytes of key + headers + encoded value. */
  readonly size: number
  /** The topic's `maxMessageBytes`. */
  readonly limit: number
  constructor(message: string, options: Opts & { size?: number; limit?: number } = {}) {
    super(message, { code: 'ERR_MESSAGE_TOO_LARGE', cause: options.cause })
    this.name = 'MessageTooLargeError'
    this.size = options.size ?? NaN
    this.limit = options.limit ?? NaN
  }
}
/** `registerType` of a name already registered. */
export class TypeAlreadyRegisteredError extends TwainError {
  constructor(message: string, options: Opts = {}) {
    super(message, { code: 'ERR_TYPE_ALREADY_REGISTERED', cause: options.cause })
    this.name = 'TypeAlreadyRegisteredError'
  }
}
/** A message type that is not registered (or not allowed on the topic). */
export class UnknownMessageTypeError extends TwainError {
  /** The unknown type id (a typed Python TwainMQ record read back), when that is what was refused. */
  typeId?: number
  /** The file of that record (Python TwainMQ topics), when known. */
  file?: string
  /** Its 1-based line in that file, when known. */
  line?: number
  constructor(message: string, options: Opts & { typeId?: number; file?: string; line?: number } = {}) {
    super(message, { code: 'ERR_UNKNOWN_MESSAGE_TYPE', cause: options.cause })
    this.name = 'UnknownMessageTypeError'
    for (const k of ['typeId', 'file', 'line'] as const)
      if (options[k] !== undefined) (this as Record<typeof k, unknown>)[k] = options[k]
  }
}
/** One problem a schema found, as Standard Schema reports it (`path`: keys from the root of the value). */
export interface ValidationIssue {
  readonly message: string
  readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }>
}

/** A value rejected by its registered type's schema; the schema's issues are in `issues`. */
export class ValidationError extends TwainError {
  /** What the schema reported (empty for a validator function that threw: see `cause`). */
  readonly issues: readonly ValidationIssue[]
  constructor(message: string, options: Opts & { issues?: readonly ValidationIssue[] } = {}) {
    super(message, { code: 'ERR_VALIDATION', cause: options.cause })
    this.name = 'ValidationError'
    this.issues = options.issues ?? []
  }
}
/** Where stored data is damaged (the fields a `TopicCorruptError` carries when known). */
export interface CorruptionSite {
  /** The damaged file. */
  file?: string
  /** Byte position of the damage in `file`. */
  position?: number
  /** The offset of the first record that cannot be read. */
  offset?: number
  /** Line number (Python TwainMQ chunk files). */
  line?: number
}

/**
 * Stored data that cannot be decoded (a damaged frame or segment, broken metadata). Carries where
 * the damage is (`file`, `position`, `offset`, …) when known.
 */
export class TopicCorruptError extends TwainError implements CorruptionSite {
  file?: string
  position?: number
  offset?: number
  line?: number
  constructor(message: string, options: Opts & CorruptionSite = {}) {
    super(message, { code: 'ERR_TOPIC_CORRUPT', retriable: false, cause: options.cause })
    this.name = 'TopicCorruptError'
    for (const k of ['file', 'position', 'offset', 'line'] as const)
      if (options[k] !== undefined) (this as CorruptionSite)[k] = options[k] as never
  }
}
/** An admin operation (`describeGroup`, `resetGroup`, `deleteGroup`) on a group that does not exist. */
export class GroupNotFoundError extends TwainError {
  constructor(message: string, options: Opts = {}) {
    super(message, { code: 'ERR_GROUP_NOT_FOUND', cause: options.cause })
    this.name = 'GroupNotFoundError'
  }
}
/** A commit by a group member that no longer owns the partition. */
export class FencedError extends TwainError {
  constructor(message: string, options: Opts = {}) {
    super(message, { code: 'ERR_FENCED', cause: options.cause })
    this.name = 'FencedError'
  }
}
/**
 * A partition's log moved back below offsets a reader or group had already seen (a failover to a
 * replica that lagged, a server restored from an older snapshot): the offsets `from`..`to` now hold
 * other records, which are delivered again. Reported once per rollback, not thrown; not retriable.
 */
export class LogRollbackError extends TwainError {
  readonly topic: string
  readonly partition: number
  /** First offset whose record changed (the log's end right after the rollback). */
  readonly from: number
  /** Last offset that had been seen before the rollback. */
  readonly to: number
  /** `seenBy`: who had seen the offsets, for the message (e.g. `'a tail'`, `'a producer, which was given them'`). */
  constructor(topic: string, partition: number, from: number, to: number, seenBy = 'a reader') {
    super(
      `Topic "${topic}" partition ${partition} rolled back: offsets ${from}..${to}, seen by ${seenBy}, are used again by other records (a failover to a replica that lagged, or a restore from an older snapshot); readers deliver the new ones`,
      { code: 'ERR_LOG_ROLLBACK', retriable: false },
    )
    this.name = 'LogRollbackError'
    this.topic = topic
    this.partition = partition
    this.from = from
    this.to = to
  }
}
/**
 * A consumer or processor has held `maxInFlight` messages, settling none, for `stallWarningMs`
 * while the application waited for more: nothing more can be fetched until some are acked or
 * termed. Reported as an `'error'` event (never thrown), once per stall; not retriable.
 */
export class StalledError extends TwainError {
  /** Messages the member holds (fetched, not acked or termed). */
  readonly held: number
  /** The member's `maxInFlight`. */
  readonly maxInFlight: number
  /** How long it has held them without settling any (ms): at least its `stallWarningMs`. */
  readonly stalledMs: number
  constructor(message: string, options: Opts & { held?: number; maxInFlight?: number; stalledMs?: number } = {}) {
    super(message, { code: 'ERR_STALLED', cause: options.cause })
    this.name = 'StalledError'
    this.held = options.held ?? NaN
    this.maxInFlight = options.maxInFlight ?? NaN
    this.stalledMs = options.stalledMs ?? NaN
  }
}
/** An option or argument out of its range. */
export class InvalidArgumentError extends TwainError {
  constructor(message: string, options: Opts = {}) {
    super(message, { code: 'ERR_INVALID_ARGUMENT', cause: options.cause })
    this.name = 'InvalidArgumentError'
  }
}
/**
 * The backend could not be reached, or refused who connected. Retriable, except when the server
 * refused the credentials or their rights (NOAUTH, WRONGPASS, NOPERM): retrying cannot help.
 */
export class ConnectionError extends TwainError {
  constructor(message: string, options: Opts & { retriable?: boolean } = {}) {
    super(message, { code: 'ERR_CONNECTION', retriable: options.retriable ?? true, cause: options.cause })
    this.name = 'ConnectionError'
  }
}
/**
 * The backend failed an operation (I/O error, Redis error). `code` is `ERR_DISK_FULL` when the disk
 * or quota is full (`ENOSPC`/`EDQUOT`, retriable: the same call succeeds once space returns), else
 * `ERR_BACKEND`; the errno is in `cause`.
 */
export class BackendError extends TwainError {
  constructor(message: string, options: Opts & { code?: string; retriable?: boolean } = {}) {
    super(message, { code: options.code ?? 'ERR_BACKEND', retriable: options.retriable ?? true, cause: options.cause })
    this.name = 'BackendError'
  }
}
/**
 * A compare-and-append (an append with `expectedEnd`) found the partition's end elsewhere: another
 * writer appended first. Nothing was written; `end` is the end found. The caller catches up and
 * decides again (the HTTP gateway's producer and closure checks use it).
 */
export class AppendConflictError extends TwainError {
  /** The partition's end offset when the append was refused. */
  readonly end: number
  constructor(message: string, options: Opts & { end?: number } = {}) {
    super(message, { code: 'ERR_APPEND_CONFLICT', cause: options.cause })
    this.name = 'AppendConflictError'
    this.end = options.end ?? -1
  }
}
/** An operation did not finish in time (e.g. a partition lock could not be taken). */
export class TimeoutError extends TwainError {
  constructor(message: string, options: Opts = {}) {
    super(message, { code: 'ERR_TIMEOUT', retriable: true, cause: options.cause })
    this.name = 'TimeoutError'
  }
}
/** Use of a closed `Twain`, producer, stream or consumer. */
export class ClosedError extends TwainError {
  constructor(message: string, options: Opts = {}) {
    super(message, { code: 'ERR_CLOSED', cause: options.cause })
    this.name = 'ClosedError'
  }
}
/** An `AbortSignal` fired. */
export class AbortError extends TwainError {
  constructor(message: string, options: Opts = {}) {
    super(message, { code: 'ERR_ABORTED', cause: options.cause })
    this.name = 'AbortError'
  }
}

/** The error to throw for an aborted signal: its reason when that is already an `AbortError`. */
export function abortErrorFrom(signal: AbortSignal): AbortError {
  const reason: unknown = signal.reason
  if (reason instanceof AbortError) return reason
  return new AbortError('The operation was aborted', { cause: reason })
}

/** errno codes that retrying cannot cure (permissions, read-only file systems, planted symlinks). */
const PERMANENT_ERRNO = new Set(['EACCES', 'EPERM', 'EROFS', 'ELOOP', 'ENOTDIR', 'EISDIR'])

/**
 * Wrap an unknown I/O failure as a `BackendError` naming what was being done: `ERR_DISK_FULL`
 * (retriable) for ENOSPC/EDQUOT, not retriable for permission, read-only and symlink errors,
 * retriable otherwise (EMFILE, EIO, …).
 */
export function backendError(what: string, cause: unknown): TwainError {
  if (cause instanceof TwainError) return cause
  const errno = (cause as NodeJS.ErrnoException | undefined)?.code
  const detail = cause instanceof Error ? cause.message : String(cause)
  if (errno === 'ENOSPC' || errno === 'EDQUOT') {
    return new BackendError(`${what}: the disk is full (${errno}); retry once space is freed`, {
      cause,
      code: 'ERR_DISK_FULL',
      retriable: true,
    })
  }
  if (errno === 'ELOOP')
    return new BackendError(`${what}: refusing to follow a symbolic link (${detail})`, { cause, retriable: false })
  return new BackendError(`${what}: ${detail}`, {
    cause,
    retriable: errno === undefined || !PERMANENT_ERRNO.has(errno),
  })
}

/**
 * An HTTP request (the browser client, `twainmq/browser`) was answered with an error status:
 * `status` is it (401: no or unknown token, 403: the token may not do this, 404: no such stream).
 * Retriable for 408, 429 and 5xx.
 */
export class HttpError extends TwainError {
  /** The HTTP status of the answer. */
  readonly status: number
  /** The URL that answered. */
  readonly url: string
  constructor(message: string, options: Opts & { status?: number; url?: string } = {}) {
    const status = options.status ?? 0
    super(message, {
      code: 'ERR_HTTP',
      retriable: status === 408 || status === 429 || status >= 500,
      cause: options.cause,
    })
    this.name = 'HttpError'
    this.status = status
    this.url = options.url ?? ''
  }
}
