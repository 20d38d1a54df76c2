import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { assignPartitions, type AssignMember, type TopicPartition } from '../../src/backends/assign.js'
import { partitionKey } from '../../src/core/partition-key.js'

/** Partitions 0..n-1 of each topic. */
function parts(spec: Record<string, number>): TopicPartition[] {
  return Object.entries(spec).flatMap(([topic, n]) =>
    Array.from({ length: n }, (_, partition) => ({ topic, partition })),
  )
}

function members(n: number, topics: string[] = ['t']): AssignMember[] {
  return Array.from({ length: n }, (_, i) => ({ id: `m${String(i).padStart(2, '0')}`, topics }))
}

/** Partition count per member id (members owning nothing included). */
function counts(result: Map<string, string>, ms: readonly AssignMember[]): Map<string, number> {
  const c = new Map(ms.map((m) => [m.id, 0]))
  for (const id of result.values()) c.set(id, (c.get(id) ?? 0) + 1)
  return c
}

function spread(result: Map<string, string>, ms: readonly AssignMember[]): number {
  const c = [...counts(result, ms).values()]
  return Math.max(...c) - Math.min(...c)
}

function shuffle<T>(xs: readonly T[], seed: number): T[] {
  const out = [...xs]
  let s = seed >>> 0 || 1
  for (let i = out.length - 1; i > 0; i--) {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0
    const j = s % (i + 1)
    ;[out[i], out[j]] = [out[j] as T, out[i] as T]
  }
  return out
}

/** How many partitions changed owner between two assignments (a partition that had no owner does not count). */
function moved(before: ReadonlyMap<string, string>, after: ReadonlyMap<string, string>): number {
  let n = 0
  for (const [k, id] of before) if (after.get(k) !== undefined && after.get(k) !== id) n++
  return n
}

describe('assignPartitions: balance', () => {
  it('assigns every partition exactly once with counts differing by at most 1 (1..12 members × 0..40 partitions)', () => {
    for (let m = 1; m <= 12; m++) {
      for (let p = 0; p <= 40; p++) {
        const ps = parts({ t: p })
        const ms = members(m)
        const r = assignPartitions(ps, ms, new Map())
        expect(r.size, `${m} members, ${p} partitions`).toBe(p)
        for (const tp of ps) expect(ms.map((x) => x.id)).toContain(r.get(partitionKey(tp.topic, tp.partition)))
        expect(spread(r, ms), `${m} members, ${p} partitions`).toBeLessThanOrEqual(1)
      }
    }
  })

  it('balances across several topics every member subscribes to', () => {
    const ps = parts({ a: 3, b: 5, c: 1 })
    for (let m = 1; m <= 10; m++) {
      const ms = members(m, ['a', 'b', 'c'])
      const r = assignPartitions(ps, ms, new Map())
      expect(r.size).toBe(9)
      expect(spread(r, ms)).toBeLessThanOrEqual(1)
    }
  })

  it('stays balanced from any arbitrary current ownership (including owners that left)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 0, max: 30 }),
        fc.array(fc.integer({ min: -1, max: 10 }), { maxLength: 30 }),
        (m, p, ownerIdx) => {
          const ps = parts({ t: p })
          const ms = members(m)
          const owners = new Map<string, string>()
          ps.forEach((tp, i) => {
            const o = ownerIdx[i]
            if (o !== undefined && o >= 0)
              owners.set(partitionKey(tp.topic, tp.partition), `m${String(o).padStart(2, '0')}`)
          })
          const r = assignPartitions(ps, ms, owners)
          expect(r.size).toBe(p)
          expect(spread(r, ms)).toBeLessThanOrEqual(1)
        },
      ),
      { numRuns: 300 },
    )
  })

  it('returns nothing without members', () => {
    expect(assignPartitions(parts({ t: 4 }), [], new Map()).size).toBe(0)
  })
})

describe('assignPartitions: stickiness', () => {
  it('keeps a balanced assignment as it is', () => {
    for (let m = 1; m <= 8; m++) {
      for (let p = 0; p <= 20; p++) {
        const ps = parts({ t: p })
        const ms = members(m)
        const first = assignPartitions(ps, ms, new Map())
        const again = assignPartitions(ps, ms, first)
        expect([...again].sort(), `${m}/${p}`).toEqual([...first].sort())
      }
    }
  })

  it('when a member joins, only the partitions the newcomer gets move (minimal movement), and the old members keep the rest', () => {
    for (let m = 1; m <= 8; m++) {
      for (let p = 0; p <= 24; p++) {
        const ps = parts({ t: p })
        const before = assignPartitions(ps, members(m), new Map())
        const ms = [...members(m), { id: 'zz-new', topics: ['t'] }]
        const after = assignPartitions(ps, ms, before)
        expect(spread(after, ms), `${m}+1 members, ${p} partitions`).toBeLessThanOrEqual(1)
        const newcomer = [...after.values()].filter((id) => id === 'zz-new').length
        expect(newcomer, `${m}+1/${p}`).toBe(Math.floor(p / (m + 1)))
        // every partition that moved went to the newcomer
        for (const [k, id] of before) if (after.get(k) !== id) expect(after.get(k)).toBe('zz-new')
        expect(moved(before, after)).toBe(newcomer)
      }
    }
  })

  it('a newcomer whose id sorts first also causes minimal movement', () => {
    for (let m = 1; m <= 6; m++) {
      for (let p = 1; p <= 20; p++) {
        const ps = parts({ t: p })
        const before = assignPartitions(ps, members(m), new Map())
        const ms = [{ id: 'a-first', topics: ['t'] }, ...members(m)]
        const after = assignPartitions(ps, ms, before)
        expect(spread(after, ms)).toBeLessThanOrEqual(1)
        expect(moved(before, after), `${m}+1/${p}`).toBe(Math.floor(p / (m + 1)))
      }
    }
  })

  it('when a member leaves, only its partitions move', () => {
    for (let m = 2; m <= 8; m++) {
      for (let p = 0; p <= 24; p++) {
        const ps = parts({ t: p })
        const all = members(m)
        const before = assignPartitions(ps, all, new Map())
        for (const leaver of all) {
          const ms = all.filter((x) => x !== leaver)
          const after = assignPartitions(ps, ms, before)
          expect(spread(after, ms), `${m}-1 members, ${p} partitions`).toBeLessThanOrEqual(1)
          for (const [k, id] of before) {
            if (id !== leaver.id) expect(after.get(k), `${m}-${leaver.id}/${p}: ${k}`).toBe(id)
            else expect(after.get(k)).not.toBe(leaver.id)
          }
        }
      }
    }
  })

  it('keeps as many partitions with their owners as balance allows, from any ownership', () => {
    // Independent bound: with quotas floor(P/M) (+1 for P%M members), the most that can stay is
    // Σ min(owned_i, base) + min(P%M, #members owning more than base).
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 7 }),
        fc.integer({ min: 0, max: 25 }),
        fc.array(fc.integer({ min: -1, max: 8 }), { maxLength: 25 }),
        (m, p, ownerIdx) => {
          const ps = parts({ t: p })
          const ms = members(m)
          const ids = new Set(ms.map((x) => x.id))
          const owners = new Map<string, string>()
          ps.forEach((tp, i) => {
            const o = ownerIdx[i]
            if (o !== undefined && o >= 0)
              owners.set(partitionKey(tp.topic, tp.partition), `m${String(o).padStart(2, '0')}`)
          })
          const owned = new Map<string, number>()
          for (const id of owners.values()) if (ids.has(id)) owned.set(id, (owned.get(id) ?? 0) + 1)
          const base = Math.floor(p / m)
          const extra = p % m
          let best = 0
          let over = 0
          for (const n of owned.values()) {
            best += Math.min(n, base)
            if (n > base) over++
          }
          best += Math.min(extra, over)
          const r = assignPartitions(ps, ms, owners)
          let kept = 0
          for (const [k, id] of owners) if (r.get(k) === id) kept++
          expect(kept).toBe(best)
        },
      ),
      { numRuns: 300 },
    )
  })
})

describe('assignPartitions: determinism', () => {
  it('gives the same result whatever the order of members, partitions and owners', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.record({ a: fc.integer({ min: 0, max: 9 }), b: fc.integer({ min: 0, max: 9 }) }),
        fc.array(fc.integer({ min: -1, max: 9 }), { maxLength: 18 }),
        fc.array(fc.constantFrom('a', 'b', 'ab'), { minLength: 8, maxLength: 8 }),
        fc.integer({ min: 1, max: 1_000_000 }),
        (m, spec, ownerIdx, subsel, seed) => {
          const ps = parts(spec)
          const ms: AssignMember[] = Array.from({ length: m }, (_, i) => ({
            id: `m${i}`,
            topics: (subsel[i] ?? 'ab').split(''),
          }))
          const owners = new Map<string, string>()
          ps.forEach((tp, i) => {
            const o = ownerIdx[i]
            if (o !== undefined && o >= 0) owners.set(partitionKey(tp.topic, tp.partition), `m${o}`)
          })
          const r1 = assignPartitions(ps, ms, owners)
          const r2 = assignPartitions(shuffle(ps, seed), shuffle(ms, seed + 1), new Map(shuffle([...owners], seed + 2)))
          expect([...r2].sort()).toEqual([...r1].sort())
        },
      ),
      { numRuns: 300 },
    )
  })
})

describe('assignPartitions: eligibility by subscription', () => {
  it('gives a partition only to a member subscribed to its topic, and every subscribed partition to someone', () => {
    fc.assert(
      fc.property(
        fc.record({
          a: fc.integer({ min: 0, max: 8 }),
          b: fc.integer({ min: 0, max: 8 }),
          c: fc.integer({ min: 0, max: 4 }),
        }),
        fc.array(fc.subarray(['a', 'b', 'c'], { minLength: 1 }), { minLength: 1, maxLength: 6 }),
        fc.array(fc.integer({ min: -1, max: 6 }), { maxLength: 20 }),
        (spec, subs, ownerIdx) => {
          const ps = parts(spec)
          const ms = subs.map((topics, i) => ({ id: `m${i}`, topics }))
          const owners = new Map<string, string>()
          ps.forEach((tp, i) => {
            const o = ownerIdx[i]
            if (o !== undefined && o >= 0) owners.set(partitionKey(tp.topic, tp.partition), `m${o}`)
          })
          const r = assignPartitions(ps, ms, owners)
          const subscribed = new Set(subs.flat())
          for (const tp of ps) {
            const id = r.get(partitionKey(tp.topic, tp.partition))
            if (!subscribed.has(tp.topic)) expect(id).toBeUndefined()
            else {
              expect(id).toBeDefined()
              expect(ms.find((x) => x.id === id)?.topics).toContain(tp.topic)
            }
          }
        },
      ),
      { numRuns: 300 },
    )
  })

  it('balances each topic among its own subscribers when groups of members subscribe to disjoint topics', () => {
    const ps = parts({ a: 6, b: 2 })
    const ms = [
      { id: 'x1', topics: ['a'] },
      { id: 'x2', topics: ['a'] },
      { id: 'x3', topics: ['a'] },
      { id: 'y1', topics: ['b'] },
    ]
    const r = assignPartitions(ps, ms, new Map())
    const c = counts(r, ms)
    expect(c.get('y1')).toBe(2)
    expect([c.get('x1'), c.get('x2'), c.get('x3')]).toEqual([2, 2, 2])
  })

  it('moves a partition away from an owner that no longer subscribes to its topic', () => {
    const ps = parts({ a: 2, b: 2 })
    const owners = new Map([
      [partitionKey('a', 0), 'm0'],
      [partitionKey('a', 1), 'm0'],
      [partitionKey('b', 0), 'm0'],
      [partitionKey('b', 1), 'm1'],
    ])
    const r = assignPartitions(
      ps,
      [
        { id: 'm0', topics: ['b'] },
        { id: 'm1', topics: ['a', 'b'] },
      ],
      owners,
    )
    expect(r.get(partitionKey('a', 0))).toBe('m1')
    expect(r.get(partitionKey('a', 1))).toBe('m1')
  })
})

describe('assignPartitions: mixed subscriptions', () => {
  it('reaches counts differing by ≤ 1 when such an assignment exists (a member with an extra topic)', () => {
    // x1 reads a; y1 reads a and b. a has 6 partitions, b 2: x1 = a0..a3, y1 = a4, a5, b0, b1 is 4/4.
    const ps = parts({ a: 6, b: 2 })
    const ms = [
      { id: 'x1', topics: ['a'] },
      { id: 'y1', topics: ['a', 'b'] },
    ]
    const r = assignPartitions(ps, ms, new Map())
    expect(r.size).toBe(8)
    expect(spread(r, ms)).toBeLessThanOrEqual(1)
  })
})

describe('assignPartitions: mixed subscriptions (exhaustive check on small cases)', () => {
  /** Smallest max-min spread of any assignment giving each partition to a subscriber (brute force). */
  function bestSpread(ps: TopicPartition[], ms: AssignMember[]): number {
    const options = ps.map((tp) => ms.map((m, i) => (m.topics.includes(tp.topic) ? i : -1)).filter((i) => i >= 0))
    let best = Infinity
    const c = new Array<number>(ms.length).fill(0)
    const go = (k: number) => {
      if (k === ps.length) {
        best = Math.min(best, Math.max(...c) - Math.min(...c))
        return
      }
      for (const i of options[k]!) {
        c[i]!++
        go(k + 1)
        c[i]!--
      }
    }
    go(0)
    return best
  }

  it('reaches counts differing by ≤ 1 whenever some assignment does', () => {
    fc.assert(
      fc.property(
        fc.record({
          a: fc.integer({ min: 0, max: 4 }),
          b: fc.integer({ min: 0, max: 3 }),
          c: fc.integer({ min: 0, max: 2 }),
        }),
        fc.array(fc.subarray(['a', 'b', 'c'], { minLength: 1 }), { minLength: 1, maxLength: 3 }),
        fc.array(fc.integer({ min: -1, max: 2 }), { maxLength: 9 }),
        (spec, subs, ownerIdx) => {
          const ps = parts(spec)
          const ms = subs.map((topics, i) => ({ id: `m${i}`, topics }))
          const owners = new Map<string, string>()
          ps.forEach((tp, i) => {
            const o = ownerIdx[i]
            if (o !== undefined && o >= 0) owners.set(partitionKey(tp.topic, tp.partition), `m${o}`)
          })
          const subscribed = new Set(subs.flat())
          const assignable = ps.filter((tp) => subscribed.has(tp.topic))
          if (bestSpread(assignable, ms) > 1) return
          const r = assignPartitions(ps, ms, owners)
          expect(spread(r, ms), JSON.stringify({ spec, subs, owners: [...owners] })).toBeLessThanOrEqual(1)
        },
      ),
      { numRuns: 400 },
    )
  })
})
