import { HttpStatusError } from '../transport/http.js'

/**
 * Stream names. An HTTP stream `<name>` is the twainmq topic `<name>` (partition 0); partition `p`
 * of a multi-partition topic is the read-only stream `<topic>~<p>` (`~` is not allowed in topic
 * names, so the two never collide). A name is a path of one or more segments of topic-name
 * characters joined by `/` (`events/orders/eu`); the topic of a nested path joins its segments
 * with `+` (`events+orders+eu`), a character a segment cannot hold, so each path has one topic and
 * each such topic one path. No `%`-escapes of `/`, `\` or NUL, no empty, `.` or `..` segments, and
 * paths whose first segment starts with `__` (internal topics, the `__ds` control routes) are
 * never streams.
 */
export interface StreamTarget {
  /** The stream name as addressed (its path, with `~<p>` if given). */
  name: string
  topic: string
  partition: number
  /** Addressed as `<topic>~<p>`. */
  perPartition: boolean
}

const SEGMENT_RE = /^[A-Za-z0-9_.-]{1,200}$/
const LAST_RE = /^([A-Za-z0-9_.-]{1,200})(?:~(0|[1-9][0-9]{0,4}))?$/
/** Longest topic name (core/names.ts): a nested path's segments and separators count together. */
const MAX_TOPIC = 200

/** Whether `s` can be a segment of a stream path (and of its topic's name). */
const segmentOk = (s: string): boolean => SEGMENT_RE.test(s) && s !== '.' && s !== '..'

const invalid = (name: string): HttpStatusError =>
  new HttpStatusError(
    400,
    `Stream name ${JSON.stringify(name)} is invalid: use segments of A-Z a-z 0-9 _ . - joined by "/", 200 characters in all (optionally ~<partition>)`,
  )

/** Parse the path after the base path; 400 for a malformed name, 404 for an internal one. */
export function parseStreamName(rawPath: string): StreamTarget {
  if (/%(2f|5c|00)/i.test(rawPath))
    throw new HttpStatusError(400, `Stream name ${JSON.stringify(rawPath)} contains an encoded separator`)
  const segments: string[] = []
  for (const raw of rawPath.split('/')) {
    try {
      segments.push(decodeURIComponent(raw))
    } catch {
      throw new HttpStatusError(400, `Stream name ${JSON.stringify(rawPath)} is not valid percent-encoding`)
    }
  }
  const name = segments.join('/')
  const last = LAST_RE.exec(segments[segments.length - 1] as string)
  if (last === null) throw invalid(name)
  const bases = [...segments.slice(0, -1), last[1] as string]
  if (!bases.every(segmentOk)) throw invalid(name)
  const topic = bases.join('+')
  if (topic.length > MAX_TOPIC) throw invalid(name)
  if (name.startsWith('__'))
    throw new HttpStatusError(
      404,
      `Stream ${JSON.stringify(name)} does not exist (names starting with "__" are internal)`,
    )
  return {
    name,
    topic,
    partition: last[2] === undefined ? 0 : Number(last[2]),
    perPartition: last[2] !== undefined,
  }
}

/** The stream path of a topic (`events+x` → `events/x`), or undefined when no path names it. */
export function streamPathOf(topic: string): string | undefined {
  if (topic.startsWith('__')) return undefined
  const segments = topic.split('+')
  return segments.every(segmentOk) ? segments.join('/') : undefined
}
