import { decodeStateKey, encodeStateKey } from '../state/state-key.js'
import type { ClosedWindow, Placement, WindowState, Windowing } from './windowing.js'
import type { WindowIndex } from './window-index.js'
import type { SessionWindowSpec } from './window-spec.js'

/** One session: first and last event time, aggregate, events (absent in a state written before it was kept: counted from 0). */
interface Session<A> {
  s: number
  e: number
  a: A
  n?: number
}

/** A key's open sessions in the state: `s:<encoded key>` → `{ l: sessions by start, m: the watermark when last written }`. */
interface Sessions<A> {
  l: Array<Session<A>>
  m?: number
}

/**
 * Session windows: an event joins every open session of its key it is less than `gapMs` from
 * (merging them with `merge`, earlier first), or starts one. A session closes once the watermark
 * reaches its last event time + `gapMs`. An event behind the watermark is late: a session it might
 * have joined may have been sent already.
 */
export class SessionWindows<A> implements Windowing<A> {
  private readonly gap: number

  constructor(
    spec: SessionWindowSpec,
    private readonly merge: (a: A, b: A) => A,
  ) {
    this.gap = spec.gapMs
  }

  place({ st, index, key, t, wm, mark, add, touched }: Placement<A>): boolean {
    if (t < wm) return false
    const k = `s:${encodeStateKey(key)}`
    const list = st.get<Sessions<A>>(k)?.l ?? []
    const joined = list.filter((x) => t > x.s - this.gap && t < x.e + this.gap)
    let next: Session<A>
    if (joined.length === 0) next = { s: t, e: t, a: add(undefined), n: 1 }
    else {
      for (const x of joined) index.remove(x.e + this.gap, k)
      const first = joined[0] as Session<A>
      const a = joined.slice(1).reduce((acc, x) => this.merge(acc, x.a), first.a)
      const n = joined.reduce((sum, x) => sum + (x.n ?? 0), 1)
      next = { s: Math.min(t, first.s), e: Math.max(t, (joined[joined.length - 1] as Session<A>).e), a: add(a), n }
    }
    const l = list.filter((x) => !joined.includes(x))
    let at = 0
    while (at < l.length && (l[at] as Session<A>).s < next.s) at++
    l.splice(at, 0, next)
    st.set(k, { l, m: mark })
    index.add(next.e + this.gap, k)
    touched?.({ start: next.s, end: next.e + 1, value: next.a, n: next.n as number })
    return true
  }

  close(st: WindowState, index: WindowIndex, wm: number, limit: number): ReadonlyArray<ClosedWindow<A>> {
    const out: Array<ClosedWindow<A>> = []
    const left = new Map<string, Array<Session<A>>>()
    for (const { end, key } of index.takeUpTo(wm, limit)) {
      const stored = left.has(key) ? undefined : st.get<Sessions<A>>(key)?.l
      const l = left.get(key) ?? (stored === undefined ? undefined : [...stored]) // never the stored array itself
      if (l === undefined) continue
      const i = l.findIndex((x) => x.e + this.gap === end)
      if (i < 0) continue
      const [x] = l.splice(i, 1) as [Session<A>]
      left.set(key, l)
      out.push({ start: x.s, end: x.e + 1, key: decodeStateKey(key.slice(2)), value: x.a })
    }
    // The caller writes the watermark with any close: a session's `m` may stay as it was.
    for (const [key, l] of left) {
      if (l.length === 0) st.delete(key)
      else {
        const m = st.get<Sessions<A>>(key)?.m
        st.set(key, m === undefined ? { l } : { l, m })
      }
    }
    return out
  }

  reindex(index: WindowIndex, stateKey: string, value: unknown): number | undefined {
    if (!stateKey.startsWith('s:')) return undefined
    for (const x of (value as Sessions<A>).l) index.add(x.e + this.gap, stateKey)
    return (value as Sessions<A>).m
  }
}
