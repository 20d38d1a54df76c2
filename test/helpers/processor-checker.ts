// The processor-chaos test's mapping (what processor-child.ts sends for each input) and its checker:
// every expected output stored exactly once, nothing of a filtered input, outputs in input order per
// (input partition, output partition), and each output's source header naming its input.
import { SOURCE_HEADER } from '../../src/backends/source-header.js'
import type { Twain } from '../../src/index.js'

/** Output topics and their partition counts. */
export const OUTPUT_TOPICS = { 'out-a': 3, 'out-b': 5 } as const

export interface ExpectedOutput {
  topic: keyof typeof OUTPUT_TOPICS
  key: string
  /** `<input id>.<j>`: the output's unique id. */
  value: string
  /** Its index among its input's outputs (= its sequence number: the child sends them in this order). */
  j: number
}

/** The outputs of input `id`, in send order: 0 (id % 3 == 0), 1 (== 1) or 3 (== 2; two to out-a, one to out-b). */
export function outputsOf(id: number): ExpectedOutput[] {
  const n = [0, 1, 3][id % 3] as number
  return Array.from({ length: n }, (_, j) => ({
    topic: j === 2 ? 'out-b' : 'out-a',
    key: `o${id}-${j}`,
    value: `${id}.${j}`,
    j,
  }))
}

/** Where an input is stored. */
export interface InputAt {
  partition: number
  offset: number
}

/** An output as read back. */
export interface StoredOutput {
  topic: string
  partition: number
  offset: number
  value: unknown
  source: string | undefined
}

/** Every record of the output topics, in partition then offset order. */
export async function readOutputs(twain: Twain): Promise<StoredOutput[]> {
  const out: StoredOutput[] = []
  for (const topic of Object.keys(OUTPUT_TOPICS))
    for await (const m of twain.history(topic))
      out.push({
        topic,
        partition: m.partition,
        offset: m.offset,
        value: m.value,
        source: m.headers[SOURCE_HEADER],
      })
  return out
}

export interface OutputCounts {
  /** Distinct expected outputs stored. */
  stored: number
  /** Records beyond the first of an output id. */
  duplicates: number
  /** Expected outputs not stored. */
  gaps: number
  /** Records of a filtered input, an unknown input or an output index its input does not have. */
  unexpected: number
  /** Records on a topic other than their output's. */
  misplaced: number
  /** Records whose source header does not name their input (group, topic, partition, offset, seq). */
  badSource: number
  /** Records that come before an earlier one of the same (input partition, output partition) in input order. */
  outOfOrder: number
}

export const EXACTLY_ONCE = { duplicates: 0, gaps: 0, unexpected: 0, misplaced: 0, badSource: 0, outOfOrder: 0 }

/**
 * Check the outputs read back against the inputs (id → where it is stored). `counts` without
 * `stored` compare equal to `EXACTLY_ONCE` when all is well; `text` describes counts and examples.
 */
export function checkOutputs(
  inputs: ReadonlyMap<number, InputAt>,
  outputs: readonly StoredOutput[],
): { counts: Omit<OutputCounts, 'stored'>; stored: number; expected: number; text: string } {
  const seen = new Map<string, number>()
  const examples: Record<string, string[]> = {}
  const note = (kind: string, what: string) => {
    const list = (examples[kind] ??= [])
    if (list.length < 5) list.push(what)
  }
  let duplicates = 0
  let unexpected = 0
  let misplaced = 0
  let badSource = 0
  let outOfOrder = 0
  // Last (input offset, j) per (input partition, output topic/partition), in output offset order.
  const last = new Map<string, { offset: number; j: number; at: string }>()
  for (const o of outputs) {
    const at = `${o.topic}/${o.partition}@${o.offset}`
    const m = typeof o.value === 'string' ? /^(\d+)\.(\d+)$/.exec(o.value) : null
    const id = m ? Number(m[1]) : NaN
    const j = m ? Number(m[2]) : NaN
    const input = inputs.get(id)
    const want = input ? outputsOf(id)[j] : undefined
    if (!input || !want) {
      unexpected++
      note('unexpected', `${JSON.stringify(o.value)} at ${at}`)
      continue
    }
    const n = (seen.get(o.value as string) ?? 0) + 1
    seen.set(o.value as string, n)
    if (n > 1) {
      // Counted once, as a duplicate (not also as out of order).
      duplicates++
      note('duplicates', `${o.value as string} (input ${input.partition}@${input.offset}) again at ${at}`)
      continue
    }
    if (want.topic !== o.topic) {
      misplaced++
      note('misplaced', `${o.value as string} at ${at}`)
    }
    const src = o.source?.split(' ')
    if (
      !src ||
      src[0] !== 'enrich' ||
      !/^in@\d+$/.test(src[1] ?? '') ||
      Number(src[2]) !== input.partition ||
      Number(src[3]) !== input.offset ||
      Number(src[4]) !== j
    ) {
      badSource++
      note('badSource', `${o.value as string} at ${at}: ${JSON.stringify(o.source)}`)
    }
    const lane = `${input.partition}>${o.topic}/${o.partition}`
    const prev = last.get(lane)
    if (prev && (input.offset < prev.offset || (input.offset === prev.offset && j <= prev.j))) {
      outOfOrder++
      note('outOfOrder', `${o.value as string} (input ${input.partition}@${input.offset}) at ${at} after ${prev.at}`)
    }
    if (!prev || input.offset > prev.offset || (input.offset === prev.offset && j > prev.j))
      last.set(lane, { offset: input.offset, j, at: `${at} (input @${input.offset}.${j})` })
  }
  let expected = 0
  let gaps = 0
  for (const [id, input] of inputs) {
    for (const want of outputsOf(id)) {
      expected++
      if (!seen.has(want.value)) {
        gaps++
        note('gaps', `${want.value} (input ${input.partition}@${input.offset})`)
      }
    }
  }
  const counts = { duplicates, gaps, unexpected, misplaced, badSource, outOfOrder }
  const text =
    `${inputs.size} inputs, ${expected} expected outputs, ${outputs.length} records read, ${seen.size} distinct stored; ` +
    Object.entries(counts)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ') +
    Object.entries(examples)
      .map(([k, list]) => `\n  ${k}: ${list.join('; ')}`)
      .join('')
  return { counts, stored: seen.size, expected, text }
}
