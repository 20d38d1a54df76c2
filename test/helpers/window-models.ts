// Models of the windows the window chaos tests check (window-chaos, window-idle-chaos): what each
// window of each user holds, computed from the clicks that went into windows.

/** `user start` → `[end, count]`: the windows of some clicks. */
export type WindowCounts = Map<string, [number, number]>

/** Session windows of `gap` ms: per user, the event times in order, split where two are `gap` or more apart; a session is `[first, last + 1)`. */
export function sessionCounts(byUser: ReadonlyMap<string, number[]>, gap: number): WindowCounts {
  const out: WindowCounts = new Map()
  for (const [user, times] of byUser) {
    let start = -Infinity
    let last = -Infinity
    for (const t of [...times].sort((a, b) => a - b)) {
      if (t - last >= gap) start = t
      out.set(`${user} ${start}`, [t + 1, (out.get(`${user} ${start}`)?.[1] ?? 0) + 1])
      last = t
    }
  }
  return out
}
