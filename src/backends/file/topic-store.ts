import { randomBytes } from 'node:crypto'
import { mkdir, readFile, readdir, rename, rm, writeFile, open as openFile } from 'node:fs/promises'
import { join } from 'node:path'
import { TopicCorruptError, TopicExistsError, TopicNotFoundError, backendError } from '../../core/errors.js'
import type { TopicMeta } from '../backend.js'
import { TOPIC_FILE, indexPath, segmentPath, topicDir, topicFile } from './layout.js'

const rand = () => randomBytes(6).toString('hex')

/** Fsync a directory so a rename or create in it survives a power cut. */
export async function syncDir(dir: string): Promise<void> {
  const fh = await openFile(dir, 'r')
  try {
    await fh.sync()
  } finally {
    await fh.close()
  }
}

/**
 * Create a topic atomically: build it in a hidden temporary directory (config and every partition
 * with an empty first segment), then rename it into place. Readers never see a half-made topic,
 * and of two concurrent creators exactly one wins (the other gets `TopicExistsError`).
 */
export async function createTopicDir(root: string, meta: TopicMeta, durable: boolean): Promise<void> {
  await mkdir(root, { recursive: true })
  const tmp = join(root, `~creating-${meta.name}-${rand()}`)
  try {
    await mkdir(tmp)
    await writeFile(join(tmp, TOPIC_FILE), JSON.stringify({ format: 'twainmq-native', version: 1, ...meta }, null, 2) + '\n')
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
    if (durable) await syncDir(root)
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
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new TopicNotFoundError(`Topic "${name}" does not exist in ${root}`)
    throw backendError(`Cannot delete topic "${name}"`, e)
  }
  await rm(gone, { recursive: true, force: true })
}

export async function readTopicMeta(root: string, name: string): Promise<TopicMeta> {
  let text: string
  try {
    text = await readFile(topicFile(root, name), 'utf8')
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new TopicNotFoundError(`Topic "${name}" does not exist in ${root}`)
    throw backendError(`Cannot read topic "${name}"`, e)
  }
  try {
    const j = JSON.parse(text) as TopicMeta & { format?: string; version?: number }
    return {
      name: j.name,
      partitions: j.partitions,
      keyType: j.keyType,
      messageTypes: j.messageTypes ?? [],
      retention: j.retention ?? {},
      maxMessageBytes: j.maxMessageBytes,
      createdAt: j.createdAt,
    }
  } catch (cause) {
    throw new TopicCorruptError(`Config ${topicFile(root, name)} of topic "${name}" is not valid JSON`, { cause })
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
