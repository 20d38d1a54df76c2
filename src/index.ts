/**
 * twainmq: a partitioned, keyed message log with an embedded file backend, producers, tails and
 * history as AsyncIterables and RxJS Observables. See README.md and docs/.
 */
export { Twain, open } from './facade/twain.js'
export type { TailOptions, HistoryOptions, FileOpenOptions, GroupDescription } from './facade/twain.js'
export type { ResetTarget } from './facade/group-commands.js'
export type { ResetOptions } from './facade/state-reset.js'
export { Consumer } from './consumer/partitioned/consumer.js'
export { SharedConsumer } from './consumer/shared/shared-consumer.js'
export { Processor, type ProcessorOptions } from './consumer/partitioned/processor.js'
export type { ProcessorMessage } from './consumer/partitioned/processor-message.js'
export type { StateStore } from './consumer/partitioned/state/state-store.js'
export { windowed } from './consumer/partitioned/windows/windowed.js'
export type { WindowOptions, WindowResult } from './consumer/partitioned/windows/window-options.js'
export { joinStreams, type JoinResult } from './consumer/partitioned/joins/join-streams.js'
export type { JoinOptions, JoinProcessorOptions } from './consumer/partitioned/joins/join-options.js'
export {
  tumbling,
  hopping,
  session,
  type WindowSpec,
  type FixedWindowSpec,
  type SessionWindowSpec,
} from './consumer/partitioned/windows/window-spec.js'
export type { OutputMetadata, OutputOptions } from './consumer/partitioned/output-record.js'
export type { ConsumerOptions } from './consumer/options.js'
export type { GroupMessage } from './consumer/group-message.js'
export type { ConsumerEventMap } from './consumer/events.js'
export type { TopicPartition } from './backends/assign.js'
export { Producer } from './producer/producer.js'
export type { ProducerOptions, SendOptions } from './producer/producer.js'
export { MessageStream } from './stream/message-stream.js'
export { Table, type TableOptions } from './stream/table.js'
export type { Logger } from './core/logger.js'
export type { TableChange } from './stream/table-changes.js'
export type { TailFrom } from './stream/tail-source.js'
export { hash64 } from './core/hash64.js'
export { importTwainmqTopic } from './compat/twainmq/import.js'
export { microsOf } from './compat/twainmq/line-time.js'
export type { ImportOptions, ImportResult } from './compat/twainmq/import.js'
export { parseTarget } from './facade/open-target.js'
export type { Target } from './facade/open-target.js'
export type { Partitioner } from './core/hash64.js'
export type { StandardSchemaV1, TypeValidator } from './core/message-types.js'
export type {
  CreateTopicOptions,
  FsyncPolicy,
  Key,
  KeyOf,
  KeyType,
  Message,
  OpenOptions,
  RecordMetadata,
  Retention,
  TelemetryOptions,
  TopicCompaction,
  TopicInfo,
} from './core/types.js'
export {
  AbortError,
  AppendConflictError,
  BackendError,
  ClosedError,
  ConnectionError,
  FencedError,
  GroupNotFoundError,
  HttpError,
  InvalidArgumentError,
  InvalidKeyError,
  InvalidKeyTypeError,
  InvalidTopicNameError,
  LogRollbackError,
  MessageTooLargeError,
  StalledError,
  TimeoutError,
  TopicCorruptError,
  TopicExistsError,
  TopicNotFoundError,
  TwainError,
  TypeAlreadyRegisteredError,
  UnknownMessageTypeError,
  ValidationError,
} from './core/errors.js'
export type { CorruptionSite, ValidationIssue } from './core/errors.js'
