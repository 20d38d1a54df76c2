/**
 * Best-effort commits when the process is about to exit by itself. A consumer keeps the process
 * alive only while something iterates it, so a script that forgets `close()` exits once its work is
 * done: Node then emits `'beforeExit'` (the event loop ran empty), and every live consumer commits
 * what was acked (shared mode: sends its waiting acknowledgements) once, which keeps the loop
 * alive until the commit is written. `process.exit()`, signals and crashes emit no `'beforeExit'`:
 * what was acked since the last commit is delivered again (at-least-once).
 */
const commits = new Set<() => Promise<void>>()

function onBeforeExit(): void {
  const run = [...commits]
  commits.clear()
  process.off('beforeExit', onBeforeExit)
  for (const commit of run) void commit().catch(() => undefined)
}

/** Run `commit` once if the process reaches `'beforeExit'`; the returned function cancels it (on `close()`). */
export function commitBeforeExit(commit: () => Promise<void>): () => void {
  if (commits.size === 0) process.on('beforeExit', onBeforeExit)
  commits.add(commit)
  return () => {
    if (commits.delete(commit) && commits.size === 0) process.off('beforeExit', onBeforeExit)
  }
}
