/**
 * Damaged topics for the damage tests: a topic of one-record frames over several small segments,
 * the true records read before any damage, and byte-level damage (flips, truncations) located by
 * frame. Frames are found by their length field (bytes 4–7), which every frame version has.
 */
import fc from 'fast-check'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { open, type Message, type MessageStream } from '../../src/index.js'

export const TOPIC = 't'
export const value = (i: number) => `value-${i}-${'x'.repeat(40 + (i % 7))}`

export interface Damaged {
  root: string
  /** The partition directory. */
  dir: string
  /** Segment files in offset order. */
  segs: string[]
  /** Every record, read before any damage. */
  truth: Message[]
}

/** A topic of `n` records, one frame each, in segments of about 4 KiB (so there are several). */
export async function makeTopic(n = 120, segmentBytes = 4096): Promise<Damaged> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'twainmq-damage-'))
  // A fixed clientId: frame sizes (and so where segments roll) must not depend on the pid's digits.
  const twain = await open(root, { segmentBytes, clientId: 'damage-test-writer' })
  await twain.createTopic(TOPIC, { partitions: 1 })
  const p = twain.producer<string>(TOPIC)
  for (let i = 0; i < n; i++) await p.send(i % 500, value(i))
  const truth: Message[] = []
  for await (const m of twain.history(TOPIC)) truth.push(m)
  await twain.close()
  const dir = path.join(root, TOPIC, '0')
  const segs = fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.seg'))
    .sort()
    .map((f) => path.join(dir, f))
  return { root, dir, segs, truth }
}

export interface Frame {
  pos: number
  len: number
  base: number
}

/** The frames of a segment file (positions, lengths, base offsets). */
export function frames(file: string): Frame[] {
  const b = fs.readFileSync(file)
  const out: Frame[] = []
  for (let pos = 0; pos + 8 <= b.length;) {
    const len = b.readUInt32LE(pos + 4)
    out.push({ pos, len, base: b.readDoubleLE(pos + 16) })
    pos += len
  }
  return out
}

/** XOR the byte at `pos` of `file` with `mask`. */
export function flip(file: string, pos: number, mask = 0xff): void {
  const b = fs.readFileSync(file)
  b[pos] = (b[pos] as number) ^ mask
  fs.writeFileSync(file, b)
}

export function cut(file: string, size: number): void {
  fs.truncateSync(file, size)
}

/** What a stream yielded before it ended, and the error it ended with (undefined: it completed, or `ms` passed). */
export async function drain(
  stream: MessageStream<Message>,
  ms = 5000,
): Promise<{ msgs: Message[]; error: unknown; timedOut: boolean }> {
  const msgs: Message[] = []
  const it = stream[Symbol.asyncIterator]()
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), ms)))
  try {
    for (;;) {
      const r = await Promise.race([it.next(), timeout])
      if (r === 'timeout') return { msgs, error: undefined, timedOut: true }
      if (r.done) return { msgs, error: undefined, timedOut: false }
      msgs.push(r.value)
    }
  } catch (error) {
    return { msgs, error, timedOut: false }
  } finally {
    clearTimeout(timer)
    await it.return?.()
  }
}

/** The fields that must survive damage and repair unchanged. */
export const essence = (m: Message) => ({
  offset: m.offset,
  key: m.key,
  value: m.value,
  timestamp: m.timestamp,
  producerId: m.producerId,
  headers: m.headers,
})

export { runCli as cli, type CliResult } from './cli.js'

/** A single byte flip, or a cut, somewhere in one of a topic's segments. */
export const damageArb = fc.record({
  kind: fc.constantFrom('flip' as const, 'cut' as const),
  segment: fc.nat(),
  /** Position as a fraction of the segment's size. */
  at: fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
  mask: fc.integer({ min: 1, max: 255 }),
})

export type DamageSpec = typeof damageArb extends fc.Arbitrary<infer T> ? T : never

/** A copy of the pristine topic with `dmg` applied to one of its non-empty segments. */
export function damagedCopy(pristine: Damaged, dmg: DamageSpec) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'twainmq-damage-prop-'))
  fs.cpSync(pristine.root, root, { recursive: true })
  const segs = pristine.segs.map((s) => path.join(root, path.relative(pristine.root, s)))
  const candidates = segs.map((s, i) => [i, fs.statSync(s).size] as const).filter(([, size]) => size > 0)
  const [i, size] = candidates[dmg.segment % candidates.length] as readonly [number, number]
  const file = segs[i] as string
  const at = Math.floor(dmg.at * size)
  const whole = frames(file).filter((f) => f.pos + f.len <= at) // frames wholly before a cut
  if (dmg.kind === 'flip') flip(file, at, dmg.mask)
  else cut(file, at)
  return { root, segs, i, whole, dir: path.join(root, TOPIC, '0') }
}
