import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { readFile, rename, rm, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { TopicCorruptError, TopicNotFoundError, backendError } from '../../core/errors.js'
import { ensureAscii, parseJson } from './json64.js'

/** Extension of a TwainMQ topic config: `<root>/<topic>.twc`. */
export const TWC_EXT = '.twc'
/** Prefix of TwainMQ's consumer-group topics (`--group--<group>`); `list_topics` hides them. */
export const GROUP_TOPIC_PREFIX = '--group--'

/** A TwainMQ topic config (`<root>/<topic>.twc`). */
export interface TwcConfig {
  /** 1, 2, 4, 8 (unsigned integer keys) or -N (charN). */
  keyWidth: number
  partitions: number
  /** `message_types`: name → id. */
  messageTypes: Map<string, number>
  /** Largest message twainmq accepts (`max_message_bytes`; written only when not the default). */
  maxMessageBytes?: number | undefined
}

export const twcPath = (root: string, topic: string) => join(root, topic + TWC_EXT)

const str = (s: string) => ensureAscii(JSON.stringify(s))

/**
 * The config text exactly as Python's `json.dump(config, f, indent=0)` writes it: one member per
 * line, no indentation, `": "` after keys, no trailing newline; an empty type map is `{}`.
 */
export function formatTwc(c: TwcConfig): string {
  const types = [...c.messageTypes].map(([name, id]) => `${str(name)}: ${id}`)
  const lines = [
    `"key_width": ${c.keyWidth}`,
    `"partitions": ${c.partitions}`,
    `"message_types": ${types.length ? `{\n${types.join(',\n')}\n}` : '{}'}`,
  ]
  if (c.maxMessageBytes !== undefined) lines.push(`"max_message_bytes": ${c.maxMessageBytes}`)
  return `{\n${lines.join(',\n')}\n}`
}

/** Parse a config as Python's `json.load` + TwainMQ read it (`partitions` through `int()`). */
export function parseTwc(text: string, where: string): TwcConfig {
  const bad = (what: string, cause?: unknown): never => {
    throw new TopicCorruptError(`TwainMQ config ${where} is invalid: ${what}`, cause === undefined ? {} : { cause })
  }
  let j: unknown
  try {
    j = parseJson(text)
  } catch (e) {
    return bad(`not JSON (${(e as Error).message})`, e)
  }
  if (j === null || typeof j !== 'object' || Array.isArray(j)) return bad('not a JSON object')
  const o = j as Record<string, unknown>
  const keyWidth = o.key_width
  if (
    typeof keyWidth !== 'number' ||
    !Number.isSafeInteger(keyWidth) ||
    !(keyWidth < 0 || [1, 2, 4, 8].includes(keyWidth))
  ) {
    return bad(`key_width ${JSON.stringify(keyWidth)} is not 1, 2, 4, 8 or -N`)
  }
  const p = o.partitions
  const partitions =
    typeof p === 'number'
      ? Math.trunc(p)
      : typeof p === 'string' && /^\s*[+]?[0-9_]+\s*$/.test(p)
        ? Number(p.replace(/_/g, ''))
        : Number.NaN
  if (!Number.isSafeInteger(partitions) || partitions < 1 || partitions > 10_000)
    return bad(`partitions ${JSON.stringify(p)} is not an integer 1..10000`)
  const types = o.message_types ?? {}
  if (types === null || typeof types !== 'object' || Array.isArray(types)) return bad('message_types is not an object')
  const messageTypes = new Map<string, number>()
  for (const [name, id] of Object.entries(types as Record<string, unknown>)) {
    if (typeof id !== 'number' || !Number.isInteger(id) || id < 0 || id > 0xffff)
      return bad(`message type ${JSON.stringify(name)} has id ${String(id)}, not a u16`)
    messageTypes.set(name, id)
  }
  const m = o.max_message_bytes
  const maxMessageBytes = typeof m === 'number' && Number.isSafeInteger(m) && m > 0 ? m : undefined
  return { keyWidth, partitions, messageTypes, maxMessageBytes }
}

/** Read a topic's config; `TopicNotFoundError` when it has none. */
export async function readTwc(root: string, topic: string): Promise<{ config: TwcConfig; mtimeMs: number }> {
  const path = twcPath(root, topic)
  let text: string
  let mtimeMs: number
  try {
    const [t, st] = await Promise.all([readFile(path, 'utf8'), stat(path)])
    text = t
    mtimeMs = st.mtimeMs
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT')
      throw new TopicNotFoundError(`Topic "${topic}" does not exist in ${root} (no ${path})`)
    throw backendError(`Cannot read ${path}`, e)
  }
  return { config: parseTwc(text, path), mtimeMs }
}

/** The partition count in a topic's config right now, synchronously; undefined when unreadable. */
export function readTwcPartitionsSync(root: string, topic: string): number | undefined {
  try {
    return parseTwc(readFileSync(twcPath(root, topic), 'utf8'), topic).partitions
  } catch {
    return undefined
  }
}

/** Write a config atomically (temporary file + rename), so readers never see half of it. */
export async function writeTwc(root: string, topic: string, config: TwcConfig): Promise<void> {
  // The temporary name does not end in .twc, so neither Python's list_topics nor detection sees it.
  const tmp = join(root, `.${topic}.twc-${randomBytes(6).toString('hex')}`)
  try {
    await writeFile(tmp, formatTwc(config), 'utf8')
    await rename(tmp, twcPath(root, topic))
  } catch (e) {
    await rm(tmp, { force: true }).catch(() => undefined)
    throw backendError(`Cannot write ${twcPath(root, topic)}`, e)
  }
}
