/**
 * Shares work among concurrent callers without ever answering a caller with work that started
 * before its call: while a run for a key is in flight, every new caller joins the one run queued
 * behind it (started when the first ends). So a burst of N callers (e.g. 1,000 SSE responses woken
 * by one append) costs at most two runs, and each caller still sees everything that happened before
 * it called.
 */
export function coalescing<T>(): (key: string, run: () => Promise<T>) => Promise<T> {
  const slots = new Map<string, { running: Promise<T>; queued: Promise<T> | undefined }>()
  const start = (key: string, run: () => Promise<T>): Promise<T> => {
    const p = run()
    const slot = { running: p, queued: undefined as Promise<T> | undefined }
    slots.set(key, slot)
    const done = () => {
      if (slots.get(key) === slot && slot.queued === undefined) slots.delete(key)
    }
    p.then(done, done)
    return p
  }
  return (key, run) => {
    const slot = slots.get(key)
    if (!slot) return start(key, run)
    if (slot.queued) return slot.queued
    const queued = slot.running
      .then(
        () => undefined,
        () => undefined,
      )
      .then(() => start(key, run))
    slot.queued = queued
    return queued
  }
}
