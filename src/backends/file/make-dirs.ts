import { mkdirSync, statSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { BackendError, backendError } from '../../core/errors.js'

/*
 * `mkdir -p` without Node's `{ recursive: true }`: on Node 20 a recursive mkdir under a directory
 * that refuses new entries with ENOENT (`/proc`, `/sys`) retries forever at full CPU. Here every
 * missing ancestor is created once, top down, and any failure is a `BackendError` naming the path.
 */

const errno = (e: unknown): string | undefined => (e as NodeJS.ErrnoException | undefined)?.code

function notADirectory(path: string, what: string): BackendError {
  return new BackendError(`Cannot use ${path} as ${what}: it exists and is not a directory`, {
    retriable: false,
    cause: Object.assign(new Error(`ENOTDIR: not a directory, '${path}'`), { code: 'ENOTDIR' }),
  })
}

/**
 * Create `path` and its missing ancestors (synchronously: it runs once per open or topic creation);
 * `what` names it in errors ("the store directory").
 */
export function makeDirs(path: string, what: string): void {
  const missing: string[] = []
  for (let p = resolve(path); ; p = dirname(p)) {
    try {
      if (!statSync(p).isDirectory()) throw notADirectory(p, p === resolve(path) ? what : `a parent of ${path}`)
      break
    } catch (e) {
      if (errno(e) !== 'ENOENT') throw e instanceof BackendError ? e : backendError(`Cannot use ${path} as ${what}`, e)
      missing.push(p)
      if (dirname(p) === p) break
    }
  }
  for (const dir of missing.reverse()) {
    try {
      mkdirSync(dir)
    } catch (e) {
      if (errno(e) === 'EEXIST' && statSync(dir).isDirectory()) continue
      // The parent exists (just checked or just made): ENOENT means its file system takes no new entries.
      if (errno(e) === 'ENOENT')
        throw new BackendError(`Cannot create ${what} ${path}: ${dirname(dir)} does not accept new directories`, {
          cause: e,
          retriable: false,
        })
      throw backendError(`Cannot create ${what} ${path} (at ${dir})`, e)
    }
  }
}
