/**
 * Whether a Redis failure says a shared group's Redis consumer group, or the stream under it, does
 * not exist: `NOGROUP` (XREADGROUP, XACK, XPENDING, XAUTOCLAIM … on a stream without the group,
 * e.g. after a Redis restart without persistence or a deleted stream), and the errors XGROUP SETID
 * and DESTROY give on a missing stream ("requires the key to exist", "no such key"). Reads re-create
 * the group on it; admin calls take it as nothing to describe, reset or delete there.
 */
export const isNoGroup = (e: unknown): boolean =>
  e instanceof Error && /NOGROUP|requires the key to exist|no such key/i.test(e.message)
