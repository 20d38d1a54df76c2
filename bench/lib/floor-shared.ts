/**
 * The floor of a Redis shared group (competing consumers on `XREADGROUP`, a pending entry per
 * message, `XACK` per message: DESIGN §3.6 and §6) read through ioredis (DESIGN §2): raw loops
 * with no twainmq code, the fastest shapes of the protocol a client can use, over entries laid out
 * as twainmq writes them (ID `<offset>-1`, fields r and p).
 *
 *   serial   `XREADGROUP … COUNT 1000` (string or Buffer replies), then the batch's `XACK` in the
 *            pipeline of the next read: one round trip per 1,000 messages
 *   ahead    two reads in flight (the next is written before this one's reply is taken apart), so
 *            the server reads while the client decodes; each batch's `XACK` is sent on its own
 *   server   redis-server's own time for those commands (`INFO commandstats`), per message: the
 *            rate one fully busy server core allows, whatever the client
 */
import type { Redis } from 'ioredis'

/** Entries per read, as the shared member's reads (READ_MAX). */
export const FLOOR_COUNT = 1000

type Entries = Array<[string | Buffer, Array<string | Buffer>]>
type Reply = Array<[unknown, Entries]> | null

/** Write `n` entries of `value` to stream `key` as twainmq's append script lays them out. */
export async function fillStream(redis: Redis, key: string, n: number, value: string): Promise<void> {
  for (let i = 0; i < n; i += FLOOR_COUNT) {
    const p = redis.pipeline()
    for (let j = i; j < Math.min(n, i + FLOOR_COUNT); j++) p.xadd(key, `${j}-1`, 'r', value, 'p', 'producer-1')
    await p.exec()
  }
}

/** The ids of a reply's entries (touching each record, as a consumer would). */
function take(reply: Reply, seen: { bytes: number }): Array<string | Buffer> {
  const entries = reply?.[0]?.[1] ?? []
  const ids: Array<string | Buffer> = new Array(entries.length)
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i] as [string | Buffer, Array<string | Buffer>]
    ids[i] = e[0]
    seen.bytes += (e[1][1] as string | Buffer).length
  }
  return ids
}

/** Consume and ack all `n` entries of `key` as a new group, one read at a time: msgs/s from the first reply to the last ack. */
export async function serialConsume(
  redis: Redis,
  key: string,
  group: string,
  n: number,
  buffers: boolean,
): Promise<number> {
  await redis.xgroup('CREATE', key, group, '0')
  const read = (p: Redis | ReturnType<Redis['pipeline']>) =>
    buffers
      ? p.xreadgroupBuffer('GROUP', group, 'c1', 'COUNT', FLOOR_COUNT, 'STREAMS', key, '>')
      : p.xreadgroup('GROUP', group, 'c1', 'COUNT', FLOOR_COUNT, 'STREAMS', key, '>')
  const seen = { bytes: 0 }
  let got = 0
  let reply = (await read(redis)) as Reply
  const t0 = performance.now()
  for (;;) {
    const ids = take(reply, seen)
    got += ids.length
    const p = redis.pipeline()
    if (ids.length > 0) p.xack(key, group, ...ids)
    if (got >= n || ids.length === 0) {
      await p.exec()
      break
    }
    void read(p)
    const res = (await p.exec()) ?? []
    reply = res[res.length - 1]?.[1] as Reply
  }
  const seconds = (performance.now() - t0) / 1000
  if (got !== n || seen.bytes <= 0) throw new Error(`serial consume read ${got} of ${n} entries`)
  return n / seconds
}

/** As `serialConsume` (string replies) with `depth` reads in flight. */
export async function aheadConsume(
  redis: Redis,
  key: string,
  group: string,
  n: number,
  depth: number,
): Promise<number> {
  await redis.xgroup('CREATE', key, group, '0')
  const read = () => redis.xreadgroup('GROUP', group, 'c1', 'COUNT', FLOOR_COUNT, 'STREAMS', key, '>') as Promise<Reply>
  const inFlight: Array<Promise<Reply>> = []
  for (let i = 0; i < depth; i++) inFlight.push(read())
  const seen = { bytes: 0 }
  let got = 0
  let t0 = 0
  let acks: Promise<unknown> = Promise.resolve()
  while (got < n) {
    const reply = await (inFlight.shift() as Promise<Reply>)
    if (t0 === 0) t0 = performance.now()
    const ids = take(reply, seen)
    if (ids.length === 0) break
    got += ids.length
    acks = redis.xack(key, group, ...ids)
    if (got < n) inFlight.push(read())
  }
  await acks
  const seconds = (performance.now() - t0) / 1000
  await Promise.all(inFlight)
  if (got !== n || seen.bytes <= 0) throw new Error(`consume with reads ahead read ${got} of ${n} entries`)
  return n / seconds
}

/** Server µs in `XREADGROUP` and `XACK` since the last `CONFIG RESETSTAT`. */
export async function serverMicros(redis: Redis): Promise<number> {
  const stats = await redis.info('commandstats')
  const usec = (cmd: string) => Number(new RegExp(`cmdstat_${cmd}:calls=\\d+,usec=(\\d+)`).exec(stats)?.[1] ?? 0)
  return usec('xreadgroup') + usec('xack')
}
