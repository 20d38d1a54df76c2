import { readFileSync, readdirSync } from 'node:fs'
import type { Cluster, Redis } from 'ioredis'

/**
 * The Lua scripts of the Redis backend, one per file in `./scripts/<name>-<numKeys>.lua` (each opens
 * with a KEYS/ARGV comment; a line `-- #include <file>.lua` is replaced by that file of `./scripts/`,
 * code several scripts share, such as entry.lua's reading of an entry's fields). They are read once and defined on a client with ioredis
 * `defineCommand`, which sends EVALSHA and falls back to EVAL when the server lacks the script.
 * `npm run build` copies the .lua files next to the compiled module (scripts/copy-assets.mjs).
 */
export type ScriptName =
  | 'append'
  | 'read'
  | 'offset-for-time'
  | 'trim'
  | 'create-topic'
  | 'topic-ready'
  | 'member-join'
  | 'member-leave'
  | 'lease-acquire'
  | 'lease-release'
  | 'commit'
  // shared groups (shared-group.ts)
  | 'shared-join'
  | 'shared-recover'
  | 'shared-claim'
  | 'shared-touch'
  | 'shared-release'
  | 'shared-redeliver'
  | 'shared-ack'
  | 'shared-leave'
  | 'shared-read'
  | 'shared-member-join'

type Arg = string | Buffer | number

interface ScriptSource {
  numberOfKeys: number
  lua: string
}

let sources: Map<ScriptName, ScriptSource> | undefined

/** A script's file name: `<name>-<number of keys>.lua`; any other `.lua` file is an include. */
const SCRIPT_FILE = /^([a-z-]+)-(\d+)\.lua$/
/** An include line: replaced by the named file of `./scripts/` when the script is loaded. */
const INCLUDE = /^-- #include ([a-z-]+\.lua)[ \t]*$/gm

/** A script's text with its `-- #include <file>.lua` lines expanded (one level: includes include nothing). */
export function expandIncludes(lua: string, read: (file: string) => string): string {
  return lua.replace(INCLUDE, (_, file: string) => {
    if (SCRIPT_FILE.test(file)) throw new Error(`Lua include "${file}" names a script, not an include file`)
    return read(file).trimEnd()
  })
}

function load(): Map<ScriptName, ScriptSource> {
  if (sources) return sources
  const dir = new URL('./scripts/', import.meta.url)
  const read = (file: string) => readFileSync(new URL(file, dir), 'utf8')
  const found = new Map<ScriptName, ScriptSource>()
  for (const file of readdirSync(dir)) {
    const m = SCRIPT_FILE.exec(file)
    if (!m) continue
    found.set(m[1] as ScriptName, { numberOfKeys: Number(m[2]), lua: expandIncludes(read(file), read) })
  }
  sources = found
  return found
}

/** The method name a script gets on the client. */
const method = (name: ScriptName): string => `twainmq_${name.replace(/-/g, '_')}`

/** Run the backend's scripts on one client. */
export class Scripts {
  constructor(private readonly client: Redis | Cluster) {
    for (const [name, s] of load()) client.defineCommand(method(name), { numberOfKeys: s.numberOfKeys, lua: s.lua })
    for (const name of ['append', 'read', 'offset-for-time', 'trim', 'create-topic', 'topic-ready', 'member-join', 'member-leave', 'lease-acquire', 'lease-release', 'commit'] as const) {
      if (!load().has(name)) throw new Error(`Lua script "${name}" is missing from ${new URL('./scripts/', import.meta.url).pathname}`)
    }
  }

  /** Run a script; the reply as ioredis gives it (strings). */
  run(name: ScriptName, keys: readonly string[], args: readonly Arg[]): Promise<unknown> {
    const fn = (this.client as unknown as Record<string, (...a: Arg[]) => Promise<unknown>>)[method(name)] as (...a: Arg[]) => Promise<unknown>
    return fn.call(this.client, ...keys, ...args)
  }

  /** Run a script; bulk strings in the reply come back as Buffers. */
  runBuffer(name: ScriptName, keys: readonly string[], args: readonly Arg[]): Promise<unknown> {
    const fn = (this.client as unknown as Record<string, (...a: Arg[]) => Promise<unknown>>)[`${method(name)}Buffer`] as (...a: Arg[]) => Promise<unknown>
    return fn.call(this.client, ...keys, ...args)
  }
}
