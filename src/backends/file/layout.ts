import { join } from 'node:path'

/**
 * Where things live under a file-backend root (docs/format.md):
 *   <root>/<topic>/topic.json
 *   <root>/<topic>/accessed                               empty; its mtime is the topic's last access (markAccess)
 *   <root>/<topic>/<partition>/<baseOffset 20 digits>.seg   (+ .idx sparse index, .tix time index)
 *   <root>/<topic>/<partition>/start   logical start offset after a trim
 *   <root>/<topic>/<partition>/sources.json   checkpoint of a processor's outputs' sources (source-appends.ts)
 *   <root>/<topic>/<partition>/compaction.json   a compacted topic's last pass over the partition (compactor.ts)
 *   <root>/<topic>/<partition>.lock    append lock (pid, token, time); outside the partition
 *                                      directory so taking it does not wake that directory's watchers
 *   <root>/__groups/<group>/…          consumer-group state
 */
export const TOPIC_FILE = 'topic.json'
export const SEGMENT_EXT = '.seg'
export const INDEX_EXT = '.idx'
export const TIME_INDEX_EXT = '.tix'

export const topicDir = (root: string, topic: string) => join(root, topic)
export const topicFile = (root: string, topic: string) => join(root, topic, TOPIC_FILE)
export const accessFile = (root: string, topic: string) => join(root, topic, 'accessed')
export const partitionDir = (root: string, topic: string, p: number) => join(root, topic, String(p))
/** The append lock of a partition directory (a sibling file, see above). */
export const lockFile = (dir: string) => `${dir}.lock`
export const startFile = (dir: string) => join(dir, 'start')

export function segmentName(base: number): string {
  return String(base).padStart(20, '0') + SEGMENT_EXT
}
export const segmentPath = (dir: string, base: number) => join(dir, segmentName(base))
export const indexPath = (dir: string, base: number) => join(dir, String(base).padStart(20, '0') + INDEX_EXT)
export const timeIndexPath = (dir: string, base: number) => join(dir, String(base).padStart(20, '0') + TIME_INDEX_EXT)

/** Base offset of a segment file name, or undefined for any other file. */
export function segmentBase(name: string): number | undefined {
  if (name.length !== 20 + SEGMENT_EXT.length || !name.endsWith(SEGMENT_EXT)) return undefined
  const n = Number(name.slice(0, 20))
  return Number.isSafeInteger(n) ? n : undefined
}
