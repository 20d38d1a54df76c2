import { fstatSync, statSync, type BigIntStats } from 'node:fs'
import { startFile } from './layout.js'
import { readStartOffsetSync } from './segment-list.js'

/** A file's identity: inode and birth time (ext4 hands a deleted file's inode to the next file at once). */
const identity = (st: BigIntStats): string => `${st.ino}:${st.birthtimeNs}`

/** The identity of an open file. */
export const fdIdentity = (fd: number): string => identity(fstatSync(fd, { bigint: true }))

/** The size of `path` when it is still the file `id` names; -1 when it is another file or gone. */
export function sizeIfSame(path: string, id: string): number {
  const st = statSync(path, { bigint: true, throwIfNoEntry: false })
  return st !== undefined && identity(st) === id ? Number(st.size) : -1
}

/**
 * What a partition reader remembers to notice its partition changing under it: the directory
 * replaced (the topic deleted and created again) and the trim mark rewritten (a trim by anyone).
 */
export class PartitionChanges {
  private dirId = ''
  private startId = ''
  /** The trim mark's path (joined once: every read of a reader stats it). */
  private readonly start: string

  constructor(private readonly dir: string) {
    this.start = startFile(dir)
  }

  /** `'gone'` without a directory, `'new'` when it was created again since the last call, else `'same'`. */
  directory(): 'gone' | 'new' | 'same' {
    const st = statSync(this.dir, { bigint: true, throwIfNoEntry: false })
    if (st === undefined) return 'gone'
    const id = identity(st)
    const before = this.dirId
    this.dirId = id
    return before !== '' && id !== before ? 'new' : 'same'
  }

  /** The partition's start when the trim mark changed since the last call (one stat otherwise). */
  trimmedTo(): number | undefined {
    const st = statSync(this.start, { throwIfNoEntry: false })
    const id = st === undefined ? '' : `${st.ino}:${st.mtimeMs}`
    if (id === this.startId) return undefined
    this.startId = id
    return id === '' ? undefined : readStartOffsetSync(this.dir)
  }
}
