import { statSync, utimesSync, writeFileSync } from 'node:fs'
import { accessFile, topicFile } from './layout.js'

const code = (e: unknown): string | undefined => (e as NodeJS.ErrnoException).code

/**
 * A topic's last access, shared by every process of a root: the mtime of `<topic>/accessed` (set
 * with `utimes`, created on first use). Synchronous: a stat or utimes from the inode cache costs
 * less than a thread-pool round trip. A topic that does not exist is ignored.
 */
export function markAccessSync(root: string, topic: string, at: number): void {
  const file = accessFile(root, topic)
  const seconds = at / 1000
  try {
    utimesSync(file, seconds, seconds)
  } catch (e) {
    if (code(e) !== 'ENOENT') throw e
    try {
      statSync(topicFile(root, topic))
    } catch {
      return // no such topic
    }
    writeFileSync(file, '')
    utimesSync(file, seconds, seconds)
  }
}

/** The time last given to {@link markAccessSync}, or undefined. */
export function lastAccessSync(root: string, topic: string): number | undefined {
  try {
    return statSync(accessFile(root, topic)).mtimeMs
  } catch (e) {
    if (code(e) === 'ENOENT' || code(e) === 'ENOTDIR') return undefined
    throw e
  }
}
