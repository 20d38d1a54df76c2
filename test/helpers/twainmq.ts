/**
 * Shared helpers of the Python TwainMQ compatibility tests: the checked-in fixtures made by
 * test/fixtures/twainmq/make-fixtures.py (Python stdlib, the documented TwainMQ 0.1.9 rules) and a
 * way to run that script at test time.
 */
import { spawnSync } from 'node:child_process'
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'twainmq')
export const SCRIPT = join(FIXTURES, 'make-fixtures.py')
export const FIXTURE_ROOT = join(FIXTURES, 'root')

export type ValueSpec =
  | { kind: 'text'; text: string }
  | { kind: 'bytes'; hex: string }
  | { kind: 'typed'; json: string; type_id: number; type?: string }

export interface ExpectedMessage {
  offset: number
  key: number | string
  us: number
  seconds: number
  line: string
  kind: ValueSpec['kind']
  text?: string
  hex?: string
  json?: string
  type_id?: number
  type?: string
}

export interface ExpectedTopic {
  key_width: number
  partitions: number
  message_types: Record<string, number>
  messages: ExpectedMessage[][]
  ends: number[]
  files: string[]
}

export interface Golden {
  b85: Array<{ hex: string; b85: string }>
  b85_decodes: Array<{ text: string; ok?: string; error?: string }>
  keys: Array<{ width: number; key: string; b85: string; chars: number }>
  timestamps: Array<{ us: number; seconds: number; b85: string }>
  lines: Array<{ width: number; key: number | string; seconds: number; value: ValueSpec; line: string }>
  hash64: Array<{ key: string; string: boolean; partitions: number; partition: number }>
  twc: Array<{ key_width: number; partitions: number; message_types: string[]; text: string }>
  deflate: Array<{ seed: number; n: number; symbols: number; length: number; sha256: string; hex: string | null }>
}

export const golden = (): Golden => JSON.parse(readFileSync(join(FIXTURES, 'golden.json'), 'utf8')) as Golden
export const expected = (): Record<string, ExpectedTopic> =>
  JSON.parse(readFileSync(join(FIXTURES, 'expected.json'), 'utf8')) as Record<string, ExpectedTopic>

let hasPython: boolean | undefined
/** Whether `python3` (3.8+) can run here. */
export function pythonAvailable(): boolean {
  hasPython ??=
    spawnSync('python3', ['-c', 'import sys; sys.exit(0 if sys.version_info >= (3, 8) else 1)']).status === 0
  return hasPython
}

/** Run make-fixtures.py with `args` (and `input` on stdin); returns stdout, throws on failure. */
export function runScript(args: string[], input?: string): string {
  const r = spawnSync('python3', [SCRIPT, ...args], { input, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 })
  if (r.error) throw r.error
  if (r.status !== 0) throw new Error(`make-fixtures.py ${args[0]} failed (${r.status}): ${r.stderr}`)
  return r.stdout
}

/** Every message of a topic as the Python reader rules decode it (make-fixtures.py decode). */
export function pythonDecode(root: string, topic: string): Array<Record<string, unknown>> {
  return runScript(['decode', root, topic])
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>)
}

/** A writable copy of the fixture root (or an empty directory) in the OS temp dir. */
export function tempRoot(copyFixture = true): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'twainmq-compat-'))
  if (copyFixture) cpSync(FIXTURE_ROOT, dir, { recursive: true })
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) }
}
