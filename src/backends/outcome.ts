import type { IdempotentOutcome, IdempotentResult } from './backend.js'

/** The `IdempotentResult`s of an outcome (one object per record). */
export function outcomeResults(o: IdempotentOutcome): IdempotentResult[] {
  const out = new Array<IdempotentResult>(o.slots.length)
  for (let i = 0; i < out.length; i++) {
    const s = o.slots[i] as number
    out[i] = s < 0 ? { offset: o.base + ~s, duplicate: o.repeats?.has(i) === true } : { offset: s, duplicate: true }
  }
  return out
}
