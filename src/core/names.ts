import { InvalidArgumentError, InvalidTopicNameError } from './errors.js'

const NAME_RE = /^[A-Za-z0-9_.-]{1,200}$/
const TOPIC_RE = /^[A-Za-z0-9_.+-]{1,200}$/

/**
 * Validate a topic name. The pattern has no `/`, `\` or NUL, and `.`/`..` are refused, so a name
 * can never escape the root directory. Names starting with `__` are reserved for internal topics.
 * `+` is allowed in topic names only: it stands for the `/` of a nested HTTP stream path (the
 * gateway's stream `events/x` is the topic `events+x`).
 */
export function checkTopicName(name: unknown, { internal = false } = {}): string {
  if (typeof name !== 'string' || !TOPIC_RE.test(name) || name === '.' || name === '..') {
    throw new InvalidTopicNameError(
      `Topic name ${JSON.stringify(name)} is invalid: use 1-200 of A-Z a-z 0-9 _ . - + (not "." or "..")`,
    )
  }
  if (!internal && name.startsWith('__')) {
    throw new InvalidTopicNameError(
      `Topic name ${JSON.stringify(name)} is invalid: names starting with "__" are reserved`,
    )
  }
  return name
}

/** Validate a group name with the same rules as topic names (it becomes a directory or key part). */
export function checkGroupName(name: unknown): string {
  if (typeof name !== 'string' || !NAME_RE.test(name) || name === '.' || name === '..') {
    throw new InvalidArgumentError(`Group name ${JSON.stringify(name)} is invalid: use 1-200 of A-Z a-z 0-9 _ . -`)
  }
  return name
}

/** Check an integer option against a range; throws `InvalidArgumentError` naming it and its value. */
export function checkInt(what: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new InvalidArgumentError(`${what} must be an integer ${min}..${max}, got ${String(value)}`)
  }
  return value
}

/** Check a non-negative finite number option. */
export function checkNonNegative(what: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new InvalidArgumentError(`${what} must be a non-negative number, got ${String(value)}`)
  }
  return value
}

/**
 * Refuse option keys that are not among `allowed` (a misspelt option would otherwise be ignored:
 * `createTopic('x', { partition: 3 })` made one partition). `InvalidArgumentError` names them.
 */
export function checkKnownKeys(what: string, options: unknown, allowed: readonly string[]): void {
  if (options === undefined || options === null || typeof options !== 'object') return
  const unknown = Object.keys(options).filter((k) => !allowed.includes(k))
  if (unknown.length > 0) {
    throw new InvalidArgumentError(
      `Unknown ${what} option${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => JSON.stringify(k)).join(', ')}: use ${allowed.join(', ')}`,
    )
  }
}
