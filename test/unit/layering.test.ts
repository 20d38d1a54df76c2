// The layering of src/ (docs/architecture.md) holds, and the checker that enforces it catches a
// backend import from a stream module, a package in the wrong layer, a gateway room importing a
// room above it, an import cycle and a consumer mode reaching into the other one.
import { spawnSync } from 'node:child_process'
import { cpSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { repoRoot } from '../helpers/spawn.js'
import { tempDir } from '../helpers/tmp.js'

const check = (src: string) =>
  spawnSync(process.execPath, [join(repoRoot, 'scripts', 'check-deps.mjs'), src], { encoding: 'utf8' })

describe('layering', () => {
  it('src/ respects the layering and has no import cycles', () => {
    const r = check(join(repoRoot, 'src'))
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
  })

  it('the checker reports a wrong-way import, a misplaced package, an eager Redis import, a gateway room importing upward, a file at the root besides index.ts and a cycle', () => {
    const tmp = tempDir()
    try {
      const src = join(tmp.dir, 'src')
      cpSync(join(repoRoot, 'src'), src, { recursive: true })
      writeFileSync(
        join(src, 'stream', 'bad.ts'),
        "import { FileBackend } from '../backends/file/file-backend.js'\nexport const x = FileBackend\n",
      )
      writeFileSync(join(src, 'core', 'uses-redis.ts'), "import 'ioredis'\nexport const y = 1\n")
      writeFileSync(join(src, 'core', 'cycle-a.ts'), "import { b } from './cycle-b.js'\nexport const a = () => b\n")
      writeFileSync(join(src, 'core', 'cycle-b.ts'), "import { a } from './cycle-a.js'\nexport const b = () => a\n")
      writeFileSync(
        join(src, 'facade', 'eager-redis.ts'),
        "import { RedisBackend } from '../backends/redis/redis-backend.js'\nexport const z = RedisBackend\n",
      )
      writeFileSync(join(src, 'stray.ts'), 'export const s = 1\n')
      writeFileSync(
        join(src, 'gateway', 'stream', 'up.ts'),
        "import { readFrom } from '../reads/read.js'\nexport const w = readFrom\n",
      )
      const r = check(src)
      expect(r.status).toBe(1)
      expect(r.stderr).toMatch(
        /eager-redis\.ts: layer "facade" may load "backends\/redis" only with a dynamic import\(\)/,
      )
      expect(r.stderr).toMatch(/stream\/bad\.ts: layer "stream" may not import "backends\/file"/)
      expect(r.stderr).toMatch(/core\/uses-redis\.ts: layer "core" may not import the package "ioredis"/)
      expect(r.stderr).toMatch(/import cycle: core\/cycle-a\.ts -> core\/cycle-b\.ts -> core\/cycle-a\.ts/)
      expect(r.stderr).toMatch(/gateway\/stream\/up\.ts: gateway room "stream" may not import room "reads"/)
      expect(r.stderr).toMatch(/stray\.ts: layer "root \(only index\.ts belongs here\)" is not in the layering table/)
      expect(r.stderr).toMatch(/6 violations/)
    } finally {
      tmp.remove()
    }
  })

  it('the checker reports a static import of @opentelemetry/api (an optional peer dependency), and the package outside src/telemetry', () => {
    const tmp = tempDir()
    try {
      const src = join(tmp.dir, 'src')
      cpSync(join(repoRoot, 'src'), src, { recursive: true })
      writeFileSync(
        join(src, 'telemetry', 'eager.ts'),
        "import { trace } from '@opentelemetry/api'\nexport const t = trace\n",
      )
      writeFileSync(
        join(src, 'telemetry', 'types-only.ts'),
        "import type { Span } from '@opentelemetry/api'\nexport type S = Span\nexport const lazy = () => import('@opentelemetry/api')\n",
      )
      writeFileSync(
        join(src, 'producer', 'otel.ts'),
        "import type { Span } from '@opentelemetry/api'\nexport type S = Span\n",
      )
      const r = check(src)
      expect(r.status).toBe(1)
      expect(r.stderr).toMatch(
        /telemetry\/eager\.ts: layer "telemetry" may load the package "@opentelemetry\/api" only with a dynamic import\(\)/,
      )
      expect(r.stderr).toMatch(/producer\/otel\.ts: layer "producer" may not import the package "@opentelemetry\/api"/)
      expect(r.stderr).not.toMatch(/types-only/)
      expect(r.stderr).toMatch(/2 violations/)
    } finally {
      tmp.remove()
    }
  })

  it('the checker reports a consumer mode importing the other mode, and the member core importing a mode', () => {
    const tmp = tempDir()
    try {
      const src = join(tmp.dir, 'src')
      cpSync(join(repoRoot, 'src'), src, { recursive: true })
      writeFileSync(
        join(src, 'consumer', 'partitioned', 'uses-shared.ts'),
        "import { SharedLedger } from '../shared/ledger.js'\nexport const x = SharedLedger\n",
      )
      writeFileSync(
        join(src, 'consumer', 'core-uses-mode.ts'),
        "import { PartitionedLedger } from './partitioned/ledger.js'\nexport const y = PartitionedLedger\n",
      )
      mkdirSync(join(src, 'consumer', 'batching'))
      writeFileSync(join(src, 'consumer', 'batching', 'z.ts'), 'export const z = 1\n')
      const r = check(src)
      expect(r.status).toBe(1)
      expect(r.stderr).toMatch(
        /consumer\/partitioned\/uses-shared\.ts: the consumer mode "partitioned" may not import the mode "shared"/,
      )
      expect(r.stderr).toMatch(
        /consumer\/core-uses-mode\.ts: the member core \(consumer\/\) may not import the mode "partitioned"/,
      )
      expect(r.stderr).toMatch(/consumer\/batching\/z\.ts: "consumer\/batching" is not a group mode's folder/)
      expect(r.stderr).toMatch(/3 violations/)
    } finally {
      tmp.remove()
    }
  })
})
