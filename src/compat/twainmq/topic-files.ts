import { randomBytes } from 'node:crypto'
import { closeSync, existsSync, openSync, readFileSync, type Stats } from 'node:fs'
import { mkdir, readdir, rename, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { InvalidArgumentError, TopicExistsError, TopicNotFoundError, backendError } from '../../core/errors.js'
import type { TopicMeta } from '../../backends/backend.js'
import { makeDirs } from '../../backends/file/make-dirs.js'
import { chunkName, utcDay } from './chunks.js'
import { keyTypeOfWidth, keyWidthOf } from './line-keys.js'
import { GROUP_TOPIC_PREFIX, TWC_EXT, parseTwc, twcPath, writeTwc, type TwcConfig } from './twc-config.js'

/** twainmq's default `maxMessageBytes` (not written to the config). */
export const DEFAULT_MAX_MESSAGE_BYTES = 1024 * 1024
const NAME_RE = /^[A-Za-z0-9_.-]{1,200}$/

/**
 * Create a TwainMQ topic: claim `<root>/<topic>/` (as Python's `create_topic` checks that directory),
 * write `<topic>.twc` atomically, and create today's empty chunk of every partition, as a Python
 * producer does on start — so a Python consumer started before the first message reads from
 * offset 0 (its bug 4). `TopicExistsError` when a topic of either format has the name.
 */
export async function createTopicFiles(root: string, meta: TopicMeta): Promise<void> {
  const keyWidth = keyWidthOf(meta.keyType)
  if (Object.values(meta.retention).some((v) => v !== undefined && v !== false)) {
    throw new InvalidArgumentError(
      `Retention is not supported by the twainmq-v1 format (topic "${meta.name}" asked for ${JSON.stringify(meta.retention)})`,
    )
  }
  if (meta.attributes && Object.keys(meta.attributes).length > 0) {
    throw new InvalidArgumentError(
      `Topic attributes are not supported by the twainmq-v1 format (topic "${meta.name}" asked for ${JSON.stringify(meta.attributes)})`,
    )
  }
  if (meta.compact === true) {
    throw new InvalidArgumentError(
      `Compacted topics (compact: true) are not supported by the twainmq-v1 format (topic "${meta.name}"): TwainMQ keeps every record`,
    )
  }
  const dir = join(root, meta.name)
  makeDirs(root, 'the store directory')
  try {
    await mkdir(dir)
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST')
      throw new TopicExistsError(`Topic "${meta.name}" already exists in ${root}`)
    throw backendError(`Cannot create topic "${meta.name}"`, e)
  }
  const config: TwcConfig = {
    keyWidth,
    partitions: meta.partitions,
    messageTypes: new Map(meta.messageTypes.map((name, i) => [name, i])),
    maxMessageBytes: meta.maxMessageBytes === DEFAULT_MAX_MESSAGE_BYTES ? undefined : meta.maxMessageBytes,
  }
  try {
    await writeTwc(root, meta.name, config)
    const today = utcDay()
    for (let p = 0; p < meta.partitions; p++) closeSync(openSync(join(dir, chunkName(p, today, 0)), 'a'))
  } catch (e) {
    await rm(dir, { recursive: true, force: true }).catch(() => undefined)
    throw backendError(`Cannot create topic "${meta.name}"`, e)
  }
}

/** Delete a topic's directory (renamed out of sight first) and, unlike Python's delete_topic, its config. */
export async function deleteTopicFiles(root: string, name: string): Promise<void> {
  const gone = join(root, `~deleting-${name}-${randomBytes(6).toString('hex')}`)
  try {
    await rename(join(root, name), gone)
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT')
      throw new TopicNotFoundError(`Topic "${name}" does not exist in ${root}`)
    throw backendError(`Cannot delete topic "${name}"`, e)
  }
  await rm(twcPath(root, name), { force: true })
  await rm(gone, { recursive: true, force: true })
}

/**
 * Names of the TwainMQ topics of `root` (as Python's `list_topics`: `.twc` stems without group
 * topics), leaving out configs whose directory Python's delete_topic removed, names twainmq cannot
 * use, and names `isOurs` rejects (native topics).
 */
export async function listTopicNames(root: string, isOurs: (topic: string) => boolean): Promise<string[]> {
  let names: string[]
  try {
    names = await readdir(root)
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw backendError(`Cannot list ${root}`, e)
  }
  const out: string[] = []
  for (const n of names) {
    if (!n.endsWith(TWC_EXT)) continue
    const topic = n.slice(0, -TWC_EXT.length)
    if (
      topic.startsWith(GROUP_TOPIC_PREFIX) ||
      topic.startsWith('__') ||
      !NAME_RE.test(topic) ||
      topic === '.' ||
      topic === '..'
    )
      continue
    if (existsSync(join(root, topic)) && isOurs(topic)) out.push(topic)
  }
  return out.sort()
}

/** A topic's config as a `TopicMeta` (`st`: the config file's stats). */
export function readTopicConfig(root: string, name: string, st: Stats): { meta: TopicMeta; config: TwcConfig } {
  const path = twcPath(root, name)
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT')
      throw new TopicNotFoundError(`Topic "${name}" does not exist in ${root}`)
    throw backendError(`Cannot read ${path}`, e)
  }
  const config = parseTwc(text, path)
  const meta: TopicMeta = {
    name,
    partitions: config.partitions,
    keyType: keyTypeOfWidth(config.keyWidth),
    messageTypes: [...config.messageTypes].sort((a, b) => a[1] - b[1]).map(([n]) => n),
    retention: {},
    maxMessageBytes: config.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
    createdAt: st.birthtimeMs || st.mtimeMs,
  }
  return { meta, config }
}
