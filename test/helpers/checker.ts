// Shared consistency checker of the fault tests.
//
// Every record a fault test writes carries a unique id: its value is a string `<id>` or
// `<id> <padding>`. `readBack` reads a topic with the public API (describeTopic + history) and
// `check` compares what was acknowledged with what is stored:
//   lost        an acknowledged id that is not at its acknowledged partition+offset (or not stored)
//   duplicated  an id stored at two (or more) offsets
//   reused      two acknowledged sends given the same partition+offset
//   unreadable  history threw before the end, a message carried an error, or a partition's
//               offsets are not dense start..end-1 (end as describeTopic reports it)
import type { Twain } from '../../src/index.js'

export interface Acked {
  id: string
  partition: number
  offset: number
}

export interface Stored {
  id: string
  partition: number
  offset: number
}

export interface ReadBack {
  records: Stored[]
  /** Per partition: start and end as describeTopic reported them before the read. */
  offsets: Array<{ partition: number; start: number; end: number }>
  /** Problems met while reading (history threw, message.error). */
  errors: string[]
}

export interface Report {
  lost: string[]
  duplicated: string[]
  reused: string[]
  unreadable: string[]
  counts: { lost: number; duplicated: number; reused: number; unreadable: number }
  /** Human-readable summary (first few of each kind), for assertion messages. */
  text: string
}

/** The id carried by a stored value. */
export function idOf(value: unknown): string {
  if (typeof value === 'string') return value.split(' ')[0] ?? value
  if (value && typeof value === 'object' && 'id' in value) return String((value as { id: unknown }).id)
  return JSON.stringify(value)
}

const describeError = (e: unknown) =>
  e instanceof Error
    ? `${e.name}${(e as { code?: string }).code ? ` [${(e as { code?: string }).code}]` : ''}: ${e.message}`
    : String(e)

/** Read a whole topic back (the caller makes sure nobody writes meanwhile). */
export async function readBack(twain: Twain, topic: string): Promise<ReadBack> {
  const errors: string[] = []
  let offsets: ReadBack['offsets'] = []
  try {
    offsets = (await twain.describeTopic(topic)).offsets.map((o) => ({
      partition: o.partition,
      start: o.start,
      end: o.end,
    }))
  } catch (e) {
    errors.push(`describeTopic threw ${describeError(e)}`)
  }
  const records: Stored[] = []
  try {
    for await (const m of twain.history<unknown>(topic)) {
      const err = (m as { error?: unknown }).error
      if (err !== undefined) errors.push(`message ${m.partition}@${m.offset} carries ${describeError(err)}`)
      records.push({ id: idOf(m.value), partition: m.partition, offset: m.offset })
    }
  } catch (e) {
    errors.push(`history threw after ${records.length} messages: ${describeError(e)}`)
  }
  return { records, offsets, errors }
}

/** Compare acknowledged sends with what was read back. */
export function check(acked: readonly Acked[], back: ReadBack): Report {
  const lost: string[] = []
  const duplicated: string[] = []
  const reused: string[] = []
  const unreadable: string[] = [...back.errors]

  const at = new Map<string, string>() // "p@o" → id stored there
  const where = new Map<string, string[]>() // id → ["p@o", …]
  for (const r of back.records) {
    const k = `${r.partition}@${r.offset}`
    if (at.has(k)) unreadable.push(`offset ${k} delivered twice (ids ${at.get(k)} and ${r.id})`)
    at.set(k, r.id)
    const w = where.get(r.id)
    if (w) w.push(k)
    else where.set(r.id, [k])
  }
  for (const [id, ks] of where) if (ks.length > 1) duplicated.push(`id ${id} stored at ${ks.join(', ')}`)

  const ackedAt = new Map<string, string>()
  for (const a of acked) {
    const k = `${a.partition}@${a.offset}`
    const prev = ackedAt.get(k)
    if (prev !== undefined && prev !== a.id) reused.push(`offset ${k} acknowledged to ${prev} and to ${a.id}`)
    else ackedAt.set(k, a.id)
    const stored = at.get(k)
    if (stored !== a.id) {
      const elsewhere = where.get(a.id)
      lost.push(
        `id ${a.id} acked at ${k}: ${stored === undefined ? 'nothing stored there' : `${stored} stored there`}${elsewhere ? ` (id found at ${elsewhere.join(', ')})` : ' (id not stored)'}`,
      )
    }
  }

  // Density: per partition, exactly start..end-1 in order.
  const byPartition = new Map<number, number[]>()
  for (const r of back.records) {
    const l = byPartition.get(r.partition)
    if (l) l.push(r.offset)
    else byPartition.set(r.partition, [r.offset])
  }
  for (const o of back.offsets) {
    const got = byPartition.get(o.partition) ?? []
    const expected = o.end - o.start
    let firstGap: string | undefined
    for (let i = 0; i < got.length; i++) {
      if (got[i] !== o.start + i) {
        firstGap = `expected offset ${o.start + i} at position ${i}, got ${got[i]}`
        break
      }
    }
    if (firstGap || got.length !== expected) {
      unreadable.push(
        `partition ${o.partition}: describeTopic says [${o.start}, ${o.end}) but history read ${got.length} messages${firstGap ? `; ${firstGap}` : ''}`,
      )
    }
  }
  for (const p of byPartition.keys())
    if (!back.offsets.some((o) => o.partition === p) && back.offsets.length > 0)
      unreadable.push(`history returned partition ${p} that describeTopic does not list`)

  const counts = {
    lost: lost.length,
    duplicated: duplicated.length,
    reused: reused.length,
    unreadable: unreadable.length,
  }
  const head = (name: string, l: string[]) =>
    l.length
      ? `\n  ${name} (${l.length}):\n    ${l.slice(0, 8).join('\n    ')}${l.length > 8 ? `\n    … ${l.length - 8} more` : ''}`
      : ''
  const text =
    `checker: ${acked.length} acked, ${back.records.length} stored; lost ${counts.lost}, duplicated ${counts.duplicated}, reused ${counts.reused}, unreadable ${counts.unreadable}` +
    head('lost', lost) +
    head('duplicated', duplicated) +
    head('reused', reused) +
    head('unreadable', unreadable)
  return { lost, duplicated, reused, unreadable, counts, text }
}

export const CLEAN = { lost: 0, duplicated: 0, reused: 0, unreadable: 0 }
