import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const made = new Set<string>()
let hooked = false

function cleanupAll(): void {
  for (const d of made) rmSync(d, { recursive: true, force: true })
  made.clear()
}

/** A fresh temp directory, removed by `removeTempDir` or, at the latest, when the process exits. */
export function makeTempDir(prefix: string): string {
  if (!hooked) {
    hooked = true
    process.on('exit', cleanupAll)
    for (const sig of ['SIGINT', 'SIGTERM'] as const) {
      process.once(sig, () => {
        cleanupAll()
        process.exit(130)
      })
    }
  }
  const d = mkdtempSync(join(tmpdir(), `twainmq-bench-${prefix}-`))
  made.add(d)
  return d
}

export function removeTempDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true })
  made.delete(dir)
}
