import { randomBytes } from 'node:crypto'
import { mkdir, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { TopicCorruptError, TopicExistsError, TopicNotFoundError, backendError } from '../../core/errors.js'
import type { TopicMeta } from '../backend.js'
import { keyCodec } from '../../core/keys.js'
import { TOPIC_FILE, indexPath, segmentPath, topicDir, topicFile } from './layout.js'
import { makeDirs } from './make-dirs.js'
import { isRealDir, syncDirSync } from './safe-fs.js'

const rand = () => randomBytes(6).toString('hex')

/**
 * Create a topic atomically: build it in a hidden temporary directory (config and every partition
 * with an empty first segment), then rename it into place. Readers never see a half-made topic,
 * and of two concurrent creators exactly one wins (the other gets `TopicExistsError`).
 */
export async function createTopicDir(root: string, meta: TopicMeta, durable: boolean): Promise<void> {
  const tmp = join(root, `~creating-${meta.name}-${rand()}`)
  try {
    makeDirs(root, 'the store directory')
    await mkdir(tmp)
    await writeFile(
      join(tmp, TOPIC_FILE),
      JSON.stringify({ format: 'twainmq-native', version: 1, ...meta }, null, 2) + '\n',
    )
    for (let p = 0; p < meta.partitions; p++) {
      const dir = join(tmp, String(p))
      await mkdir(dir)
      await writeFile(segmentPath(dir, 0), '')
      await writeFile(indexPath(dir, 0), '')
    }
    try {
      await rename(tmp, topicDir(root, meta.name))
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code
      if (code === 'ENOTEMPTY' || code === 'EEXIST' || code === 'EISDIR' || code === 'ENOTDIR') {
        throw new TopicExistsError(`Topic "${meta.name}" already exists in ${root}`)
      }
      throw backendError(`Cannot create topic "${meta.name}"`, e)
    }
    if (durable) syncDirSync(root)
  } catch (e) {
    throw backendError(`Cannot create topic "${meta.name}" in ${root}`, e)
  } finally {
    await rm(tmp, { recursive: true, force: true }).catch(() => undefined)
  }
}

/** Delete a topic: rename it out of sight first (atomic), then remove the files. */
export async function deleteTopicDir(root: string, name: string): Promise<void> {
  const gone = join(root, `~deleting-${name}-${rand()}`)
  try {
    await readFile(topicFile(root, name))
    await rename(topicDir(root, name), gone)
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT')
      throw new TopicNotFoundError(`Topic "${name}" does not exist in ${root}`)
    throw backendError(`Cannot delete topic "${name}"`, e)
  }
  await rm(gone, { recursive: true, force: true })
}

export async function readTopicMeta(root: string, name: string): Promise<TopicMeta> {
  const file = topicFile(root, name)
  let text: string
  try {
    if (!isRealDir(topicDir(root, name), 'topic directory'))
      throw new TopicNotFoundError(`Topic "${name}" does not exist in ${root}`)
    text = await readFile(file, 'utf8')
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT')
      throw new TopicNotFoundError(`Topic "${name}" does not exist in ${root}`)
    throw backendError(`Cannot read topic "${name}"`, e)
  }
  return parseTopicMeta(text, file, name)
}

/**
 * Check a stored configuration field by field: a damaged topic.json is reported as
 * `TopicCorruptError` naming the file and the field, never turned into a `TypeError` later (or a
 * send that never settles) and never silently replaced by defaults.
 */
export function parseTopicMeta(text: string, file: string, name: string): TopicMeta {
  const bad = (what: string, cause?: unknown) =>
    new TopicCorruptError(`Config ${file} of topic "${name}" is damaged: ${what}`, { file, cause })
  let j: Record<string, unknown>
  try {
    j = JSON.parse(text) as Record<string, unknown>
  } catch (cause) {
    throw bad('not valid JSON', cause)
  }
  if (typeof j !== 'object' || j === null || Array.isArray(j)) throw bad('not a JSON object')
  if (j.name !== name) throw bad(`"name" is ${JSON.stringify(j.name)}`)
  if (!Number.isInteger(j.partitions) || (j.partitions as number) < 1 || (j.partitions as number) > 10_000)
    throw bad(`"partitions" is ${JSON.stringify(j.partitions)}`)
  try {
    keyCodec(j.keyType)
  } catch (cause) {
    throw bad(`"keyType" is ${JSON.stringify(j.keyType)}`, cause)
  }
  const types = j.messageTypes ?? []
  if (!Array.isArray(types) || !types.every((t) => typeof t === 'string'))
    throw bad(`"messageTypes" is ${JSON.stringify(types)}`)
  const retention = j.retention ?? {}
  if (typeof retention !== 'object' || retention === null || Array.isArray(retention))
    throw bad(`"retention" is ${JSON.stringify(retention)}`)
  if (!Number.isInteger(j.maxMessageBytes) || (j.maxMessageBytes as number) < 1)
    throw bad(`"maxMessageBytes" is ${JSON.stringify(j.maxMessageBytes)}`)
  if (typeof j.createdAt !== 'number') throw bad(`"createdAt" is ${JSON.stringify(j.createdAt)}`)
  const attributes = j.attributes
  if (
    attributes !== undefined &&
    (typeof attributes !== 'object' ||
      attributes === null ||
      Array.isArray(attributes) ||
      !Object.values(attributes).every((v) => typeof v === 'string'))
  ) {
    throw bad(`"attributes" is ${JSON.stringify(attributes)}`)
  }
  if (j.compact !== undefined && typeof j.compact !== 'boolean') throw bad(`"compact" is ${JSON.stringify(j.compact)}`)
  const tombstones = j.tombstoneRetentionMs
  if (tombstones !== undefined && (!Number.isSafeInteger(tombstones) || (tombstones as number) < 0))
    throw bad(`"tombstoneRetentionMs" is ${JSON.stringify(tombstones)}`)
  return {
    name,
    partitions: j.partitions as number,
    keyType: j.keyType as TopicMeta['keyType'],
    messageTypes: types as string[],
    retention: retention as TopicMeta['retention'],
    maxMessageBytes: j.maxMessageBytes as number,
    createdAt: j.createdAt,
    ...(attributes === undefined ? {} : { attributes: attributes as Record<string, string> }),
    ...(j.compact === true ? { compact: true } : {}),
    ...(tombstones === undefined ? {} : { tombstoneRetentionMs: tombstones as number }),
  }
}

/** Names of topics under `root` (directories with a topic.json), without temporary or internal ones. */
export async function listTopicDirs(root: string): Promise<string[]> {
  let entries
  try {
    entries = await readdir(root, { withFileTypes: true })
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw backendError(`Cannot list ${root}`, e)
  }
  const names: string[] = []
  for (const d of entries) {
    // Temporary directories start with '~', which topic names cannot contain.
    if (!d.isDirectory() || d.name.startsWith('~') || d.name.startsWith('__')) continue
    try {
      await readFile(topicFile(root, d.name))
      names.push(d.name)
    } catch {
      /* not a topic */
    }
  }
  return names.sort()
}
