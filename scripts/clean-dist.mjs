// Build step before tsc: start from an empty dist/, so a file whose source was removed or renamed
// (and its map, pointing at a source no longer shipped) never reaches a packed tarball.
import { rmSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

rmSync(join(dirname(fileURLToPath(import.meta.url)), '..', 'dist'), { recursive: true, force: true })
