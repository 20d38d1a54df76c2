import { HttpStatusError } from '../transport/http.js'

/**
 * Stream names. An HTTP stream `<name>` is the twainmq topic `<name>` (partition 0); partition `p`
 * of a multi-partition topic is the read-only stream `<topic>~<p>` (`~` is not allowed in topic
 * names, so the two never collide). A name is one path segment of topic-name characters: no `/`
 * (also not encoded), no `%`-escapes other than of those characters, not `.`/`..`, and names
 * starting with `__` (internal topics) are never addressable.
 */
export interface StreamTarget {
  /** The stream name as addressed. */
  name: string
  topic: string
  partition: number
  /** Addressed as `<topic>~<p>`. */
  perPartition: boolean
}

const NAME_RE = /^([A-Za-z0-9_.-]{1,200})(?:~(0|[1-9][0-9]{0,4}))?$/

/** Parse the path segment after the base path; 400 for a malformed name, 404 for an internal one. */
export function parseStreamName(rawSegment: string): StreamTarget {
  if (/%(2f|5c|00)/i.test(rawSegment))
    throw new HttpStatusError(400, `Stream name ${JSON.stringify(rawSegment)} contains an encoded separator`)
  let name: string
  try {
    name = decodeURIComponent(rawSegment)
  } catch {
    throw new HttpStatusError(400, `Stream name ${JSON.stringify(rawSegment)} is not valid percent-encoding`)
  }
  const m = NAME_RE.exec(name)
  if (!m || m[1] === '.' || m[1] === '..') {
    throw new HttpStatusError(
      400,
      `Stream name ${JSON.stringify(name)} is invalid: use 1-200 of A-Z a-z 0-9 _ . - (optionally ~<partition>)`,
    )
  }
  if (name.startsWith('__'))
    throw new HttpStatusError(
      404,
      `Stream ${JSON.stringify(name)} does not exist (names starting with "__" are internal)`,
    )
  return {
    name,
    topic: m[1] as string,
    partition: m[2] === undefined ? 0 : Number(m[2]),
    perPartition: m[2] !== undefined,
  }
}
