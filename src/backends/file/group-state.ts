import { TopicCorruptError } from '../../core/errors.js'
import type { MemberProcess } from '../member-liveness.js'

export interface StoredMember extends MemberProcess {
  leaving?: boolean
  name: string
  topics: string[]
  pid: number
  host: string
  lastSeen: number
  sessionTimeoutMs: number
  /** A processor's member (absent for a consumer's). */
  processor?: boolean
}

/** `<root>/__groups/<group>/state.json`, rewritten atomically under `<root>/__groups/<group>.lock`. */
export interface GroupState {
  version: 1
  /** Fencing-token counter: every new lease takes the next value. */
  epoch: number
  members: Record<string, StoredMember>
  owners: Record<string, { member: string; epoch: number }>
  commits: Record<string, { offset: number; epoch: number; at: number }>
  topics: string[]
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const isCount = (v: unknown) => Number.isSafeInteger(v) && (v as number) >= 0

/**
 * Parse a group's state and check its shape: damage is a `TopicCorruptError` naming the file and
 * what is wrong, never a `TypeError` later and never a silent reset (which would lose commits).
 */
export function parseGroupState(text: string, file: string): GroupState {
  const bad = (what: string, cause?: unknown) =>
    new TopicCorruptError(`Group state ${file} is damaged: ${what}`, { file, cause })
  let s: unknown
  try {
    s = JSON.parse(text)
  } catch (cause) {
    throw bad('not valid JSON', cause)
  }
  if (!isObject(s) || s.version !== 1 || !isCount(s.epoch)) throw bad('not a version 1 state object with an epoch')
  if (!isObject(s.members) || !isObject(s.owners) || !isObject(s.commits))
    throw bad('members, owners or commits missing')
  if (!Array.isArray(s.topics) || !s.topics.every((t) => typeof t === 'string'))
    throw bad('"topics" is not a list of names')
  for (const [id, m] of Object.entries(s.members)) {
    const ok =
      isObject(m) &&
      typeof m.name === 'string' &&
      Array.isArray(m.topics) &&
      isCount(m.pid) &&
      typeof m.host === 'string'
    if (!ok || typeof m.lastSeen !== 'number' || typeof m.sessionTimeoutMs !== 'number')
      throw bad(`member ${JSON.stringify(id)} is malformed`)
    // The process identity beyond pid and host is absent from members an older twainmq recorded.
    if (!['boot', 'ns', 'start'].every((k) => m[k] === undefined || typeof m[k] === 'string'))
      throw bad(`member ${JSON.stringify(id)} has a malformed process identity`)
  }
  for (const [key, o] of Object.entries(s.owners)) {
    if (!isObject(o) || typeof o.member !== 'string' || !isCount(o.epoch))
      throw bad(`lease of ${JSON.stringify(key)} is malformed`)
  }
  for (const [key, c] of Object.entries(s.commits)) {
    if (!isObject(c) || !isCount(c.offset) || !isCount(c.epoch))
      throw bad(`commit of ${JSON.stringify(key)} is malformed`)
  }
  return s as unknown as GroupState
}
