import type { BackgroundFailure } from '../core/logger.js'
import { randomBytes } from 'node:crypto'
import { hostname } from 'node:os'
import type { Backend } from '../backends/backend.js'
import { FileBackend } from '../backends/file/file-backend.js'
import { isTwainmqRoot } from '../compat/twainmq/detect.js'
import { twainmqFormat } from '../compat/twainmq/twainmq-store.js'
import { InvalidArgumentError } from '../core/errors.js'
import { checkInt, checkKnownKeys } from '../core/names.js'
import { parseTarget } from './open-target.js'
import type { FileOpenOptions } from './twain-options.js'

const OPEN_KEYS = [
  'prefix',
  'fsync',
  'clientId',
  'format',
  'segmentBytes',
  'pollMs',
  'maxOpenFiles',
  'replicaAcks',
  'replicaAckTimeoutMs',
  'telemetry',
  'logger',
]
/** Options that only one kind of target takes: given to the other, they would do nothing. */
const ONLY: Record<'file' | 'redis', readonly string[]> = {
  file: ['fsync', 'format', 'segmentBytes', 'pollMs', 'maxOpenFiles'],
  redis: ['prefix', 'replicaAcks', 'replicaAckTimeoutMs'],
}

/** `InvalidArgumentError` naming the options of the other backend that were given (not undefined). */
function refuseOtherBackends(kind: 'file' | 'redis', options: FileOpenOptions): void {
  const other = kind === 'file' ? 'redis' : 'file'
  const given = ONLY[other].filter((k) => (options as Record<string, unknown>)[k] !== undefined)
  if (given.length === 0) return
  const shown = given.map((k) => `${k}: ${JSON.stringify((options as Record<string, unknown>)[k])}`).join(', ')
  throw new InvalidArgumentError(
    `open() of a ${kind === 'file' ? 'directory' : 'Redis'} target does not take ${given.length === 1 ? 'the option' : 'the options'} ${shown}: ${given.length === 1 ? 'it is' : 'they are'} for ${other === 'file' ? 'the file backend (a directory)' : 'Redis targets'}`,
  )
}

/**
 * What `open()` does before there is a `Twain`: check the options (unknown keys and bad values are
 * `InvalidArgumentError`s naming them), parse the target, and make the backend it names.
 */
export async function openBackend(
  target: string | undefined,
  options: FileOpenOptions,
  onBackgroundFailure?: BackgroundFailure,
): Promise<{ backend: Backend; clientId: string }> {
  checkKnownKeys('open()', options, OPEN_KEYS)
  const t = parseTarget(target)
  const clientId = options.clientId ?? `${hostname()}-${process.pid}-${randomBytes(4).toString('hex')}`
  if (typeof clientId !== 'string' || clientId.length === 0 || Buffer.byteLength(clientId) > 255) {
    throw new InvalidArgumentError(`clientId must be a string of 1-255 bytes, got ${JSON.stringify(clientId)}`)
  }
  const replicaAcks = checkInt('replicaAcks', options.replicaAcks ?? 0, 0, 64)
  const replicaAckTimeoutMs = checkInt('replicaAckTimeoutMs', options.replicaAckTimeoutMs ?? 2000, 1, 600_000)
  refuseOtherBackends(t.kind, options)
  if (t.kind === 'redis') {
    const prefix = options.prefix ?? 'twainmq:'
    // Loaded only for a Redis target: a file-backend app never loads ioredis.
    const { RedisBackend } = await import('../backends/redis/redis-backend.js')
    return {
      backend: await RedisBackend.connect(
        { url: t.url, cluster: t.cluster },
        { prefix, clientId, replicaAcks, replicaAckTimeoutMs, onBackgroundFailure },
      ),
      clientId,
    }
  }
  const fsync = options.fsync ?? 'never'
  if (!(
    fsync === 'never' ||
    fsync === 'batch' ||
    fsync === 'always' ||
    (typeof fsync === 'number' && fsync > 0 && Number.isFinite(fsync))
  )) {
    throw new InvalidArgumentError(
      `fsync must be 'never', 'batch', 'always' or an interval in ms, got ${JSON.stringify(fsync)}`,
    )
  }
  const segmentBytes = checkInt('segmentBytes', options.segmentBytes ?? 64 * 1024 * 1024, 1024, 2 ** 31)
  const pollMs = checkInt('pollMs', options.pollMs ?? 250, 1, 60_000)
  const maxOpenFiles = options.maxOpenFiles ?? 512
  if (typeof maxOpenFiles !== 'number' || !Number.isInteger(maxOpenFiles) || maxOpenFiles < 8) {
    throw new InvalidArgumentError(`maxOpenFiles must be an integer >= 8, got ${String(maxOpenFiles)}`)
  }
  const format = options.format ?? 'native'
  if (format !== 'native' && format !== 'twainmq-v1') {
    throw new InvalidArgumentError(`format must be 'native' or 'twainmq-v1', got ${JSON.stringify(options.format)}`)
  }
  // Python TwainMQ topics are served per topic when asked for or when the root has .twc configs.
  const twainmq = format === 'twainmq-v1' || isTwainmqRoot(t.root)
  const backend = new FileBackend(t.root, {
    fsync,
    segmentBytes,
    pollMs,
    maxOpenFiles,
    onBackgroundFailure,
    ...(twainmq
      ? {
          foreign: {
            create: (root, hub) => twainmqFormat(root, hub, { fsync }),
            createTopicsInIt: format === 'twainmq-v1',
          },
        }
      : {}),
  })
  await backend.init()
  return { backend, clientId }
}
