import { createHash } from 'node:crypto'
import { readFileSync, readdirSync } from 'node:fs'
import { Command, type Cluster, type Redis } from 'ioredis'
import { BackendError } from '../../core/errors.js'
import {
  BUFFER_REPLY,
  SCRIPT_KEYS,
  type ScriptArgs,
  type ScriptKeys,
  type ScriptName,
  type ScriptReply,
} from './script-specs.js'

/**
 * The Lua scripts of the Redis backend, one per file in `./scripts/<name>-<numKeys>.lua` (each opens
 * with a KEYS/ARGV comment). A line `-- #include <file>.lua` is replaced by that file of
 * `./scripts/` (code several scripts share, such as entry.lua's reading of an entry's fields). They
 * are read once and defined on a client with ioredis `defineCommand`, which sends EVALSHA and falls
 * back to EVAL when the server lacks the script. `npm run build` copies the .lua files next to the
 * compiled module (scripts/copy-assets.mjs). What each script takes and returns is declared in
 * `script-specs.ts`; {@link Scripts.call} is typed by it.
 */
type Arg = string | Buffer | number

interface ScriptSource {
  numberOfKeys: number
  lua: string
}

let sources: Map<string, ScriptSource> | undefined

/** A script's file name: `<name>-<number of keys>.lua`; any other `.lua` file is an include. */
const SCRIPT_FILE = /^([a-z-]+)-(\d+)\.lua$/
/** An include line: replaced by the named file of `./scripts/` when the script is loaded. */
const INCLUDE = /^-- #include (\S+)[ \t]*$/gm

/** A script's text with its `-- #include <file>.lua` lines expanded (one level: includes include nothing). */
export function expandIncludes(lua: string, read: (file: string) => string): string {
  return lua.replace(INCLUDE, (_, file: string) => {
    if (SCRIPT_FILE.test(file))
      throw new BackendError(`Lua include "${file}" names a script, not an include file`, { retriable: false })
    return read(file).trimEnd()
  })
}

function load(): Map<string, ScriptSource> {
  if (sources) return sources
  const dir = new URL('./scripts/', import.meta.url)
  const read = (file: string) => readFileSync(new URL(file, dir), 'utf8')
  const found = new Map<string, ScriptSource>()
  for (const file of readdirSync(dir)) {
    const m = SCRIPT_FILE.exec(file)
    if (!m) continue
    found.set(m[1] as string, { numberOfKeys: Number(m[2]), lua: expandIncludes(read(file), read) })
  }
  sources = found
  return found
}

/** The method name a script gets on the client. */
const method = (name: string): string => `twainmq_${name.replace(/-/g, '_')}`

/** A script as `call` sends it: EVALSHA of its SHA-1. */
interface Loaded {
  sha: string
  numberOfKeys: number
}

const isNoScript = (e: unknown): boolean => e instanceof Error && e.message.startsWith('NOSCRIPT')

/** Run the backend's scripts on one client. */
export class Scripts {
  private readonly loaded = new Map<string, Loaded>()

  constructor(private readonly client: Redis | Cluster) {
    const found = load()
    for (const name of Object.keys(SCRIPT_KEYS) as ScriptName[]) {
      const s = found.get(name)
      if (!s)
        throw new BackendError(
          `Lua script "${name}" is missing from ${new URL('./scripts/', import.meta.url).pathname} (a broken install)`,
          { retriable: false },
        )
      if (s.numberOfKeys !== SCRIPT_KEYS[name])
        throw new BackendError(
          `Lua script "${name}" takes ${s.numberOfKeys} keys by its file name, script-specs.ts says ${SCRIPT_KEYS[name]}`,
          { retriable: false },
        )
    }
    for (const [name, s] of found) {
      client.defineCommand(method(name), { numberOfKeys: s.numberOfKeys, lua: s.lua })
      this.loaded.set(name, { sha: createHash('sha1').update(s.lua).digest('hex'), numberOfKeys: s.numberOfKeys })
    }
  }

  /**
   * Run a script with the keys, arguments and reply `script-specs.ts` declares for it: one EVALSHA
   * command handed to the client as it is (decision 174); a server without the script (restarted,
   * failed over, flushed) answers NOSCRIPT, and the call goes again through the command defined
   * on the client, which sends the script's text with EVAL.
   */
  call<N extends ScriptName>(name: N, keys: ScriptKeys<N>, args: ScriptArgs<N>): Promise<ScriptReply<N>> {
    const { sha, numberOfKeys } = this.loaded.get(name) as Loaded
    const buffers = BUFFER_REPLY.has(name)
    const k = keys as unknown as readonly string[]
    const a = args as readonly Arg[]
    const cmd = new Command('evalsha', [sha, numberOfKeys, ...k, ...a], { replyEncoding: buffers ? null : 'utf8' })
    const sent = this.client.sendCommand(cmd) as Promise<unknown>
    const run = sent.catch((e: unknown) =>
      isNoScript(e) ? (buffers ? this.runBuffer(name, k, a) : this.run(name, k, a)) : Promise.reject(e),
    )
    return run as Promise<ScriptReply<N>>
  }

  /** A script's Lua text (for an EVAL inside a pipeline: a defined command's NOSCRIPT fallback would leave it). */
  static source(name: ScriptName): string {
    return (load().get(name) as ScriptSource).lua
  }

  /** Run a script unchecked; the reply as ioredis gives it (strings). For tests that call a script with what it should refuse. */
  run(name: string, keys: readonly string[], args: readonly Arg[]): Promise<unknown> {
    const fn = (this.client as unknown as Record<string, (...a: Arg[]) => Promise<unknown>>)[method(name)] as (
      ...a: Arg[]
    ) => Promise<unknown>
    return fn.call(this.client, ...keys, ...args)
  }

  /** Run a script unchecked; bulk strings in the reply come back as Buffers. */
  private runBuffer(name: string, keys: readonly string[], args: readonly Arg[]): Promise<unknown> {
    const fn = (this.client as unknown as Record<string, (...a: Arg[]) => Promise<unknown>>)[
      `${method(name)}Buffer`
    ] as (...a: Arg[]) => Promise<unknown>
    return fn.call(this.client, ...keys, ...args)
  }
}

/** The scripts and include files the loader found in `./scripts/`, by file name (for the unit test). */
export function scriptFiles(): { scripts: Map<string, { numberOfKeys: number; lua: string }>; dir: URL } {
  return { scripts: load(), dir: new URL('./scripts/', import.meta.url) }
}
