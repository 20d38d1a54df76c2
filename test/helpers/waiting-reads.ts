// Observable signs that a read is waiting for new data, so a test can wait for "blocked in a read"
// instead of sleeping: a Redis client blocked in XREAD/XREADGROUP, or a file-backend directory watch.

/** What `CLIENT LIST` can be asked through (an ioredis client, or anything with `call`). */
export interface RedisAdmin {
  call(command: string, ...args: string[]): Promise<unknown>
}

/** Clients of this server blocked in a command right now (`flags` contains `b`), optionally only those running `cmd`. */
export async function blockedClients(admin: RedisAdmin, cmd?: 'xread' | 'xreadgroup'): Promise<number> {
  const list = String(await admin.call('CLIENT', 'LIST'))
  return list.split('\n').filter((l) => /\bflags=\w*b/.test(l) && (cmd === undefined || l.includes(` cmd=${cmd} `)))
    .length
}

/** Raw directory watches (`fs.watch`, FSEventWrap) open in this process: a waiting file-backend read holds one per partition directory. */
export function directoryWatches(): number {
  return process.getActiveResourcesInfo().filter((r) => r === 'FSEventWrap').length
}
