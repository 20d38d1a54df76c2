/**
 * `work`, or `late()` thrown once the clock reaches `at` (ms since the epoch) if `work` has not
 * settled by then. A send that waits for replicas (`replicaAcks`) settles by its deadline whatever
 * its commands are doing: one queued behind another partition's `WAIT` on the writer's connection
 * to a promoted master, or sent to a master that no longer answers, is left to fail on its own (its
 * outcome is ignored; the batch numbers make a later send of the same records recognisable).
 */
export async function byDeadline<T>(work: Promise<T>, at: number, late: () => Error): Promise<T> {
  work.catch(() => undefined) // settled after the deadline: nobody listens any more
  let timer: NodeJS.Timeout | undefined
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(late()), Math.max(0, at - Date.now()))
  })
  try {
    return await Promise.race([work, expired])
  } finally {
    clearTimeout(timer)
  }
}
