import type { Backend, TopicMeta } from '../backends/backend.js'
import { InvalidArgumentError, TopicExistsError, TopicNotFoundError } from '../core/errors.js'
import type { CreateTopicOptions, Retention } from '../core/types.js'
import { TOPIC_OPTIONS, topicMetaFrom } from './topic-options.js'

/** The options `ensureTopic` compares, in the order it reports them: every option of `createTopic`. */
const FIELDS = TOPIC_OPTIONS

/** Retention as compared: limits that are set, `consumed` only when true. */
function retentionKey(r: Retention): string {
  const out: Record<string, unknown> = {}
  for (const k of ['maxMessages', 'maxAgeMs', 'maxBytes'] as const) if (r[k] !== undefined) out[k] = r[k]
  if (r.consumed) out.consumed = true
  return JSON.stringify(out)
}

/** Attributes as compared: sorted by name, `{}` when none. */
function attributesKey(m: TopicMeta): string {
  return JSON.stringify(
    Object.fromEntries(Object.entries(m.attributes ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
  )
}

function sameField(field: (typeof FIELDS)[number], existing: TopicMeta, wanted: TopicMeta): boolean {
  switch (field) {
    case 'messageTypes': // a set: type names are resolved by name, whatever their order
      return (
        existing.messageTypes.length === wanted.messageTypes.length &&
        wanted.messageTypes.every((t) => existing.messageTypes.includes(t))
      )
    case 'retention':
      return retentionKey(existing.retention) === retentionKey(wanted.retention)
    case 'attributes':
      return attributesKey(existing) === attributesKey(wanted)
    case 'compact':
      return (existing.compact === true) === (wanted.compact === true)
    default:
      return existing[field] === wanted[field]
  }
}

/** The first option given in `options` that the existing topic does not have, as an error. */
function mismatch(
  existing: TopicMeta,
  wanted: TopicMeta,
  options: CreateTopicOptions,
): InvalidArgumentError | undefined {
  for (const field of FIELDS) {
    if (options[field] === undefined || sameField(field, existing, wanted)) continue
    const show = (m: TopicMeta) =>
      field === 'retention'
        ? retentionKey(m.retention)
        : field === 'attributes'
          ? attributesKey(m)
          : field === 'compact'
            ? String(m.compact === true)
            : JSON.stringify(m[field])
    return new InvalidArgumentError(
      `Topic "${wanted.name}" exists with ${field} ${show(existing)}, not ${show(wanted)} as requested: ensureTopic never changes a topic (delete and re-create it, or ask for what it has)`,
    )
  }
  return undefined
}

/** How long to wait for a topic another creator is still setting up (a dead creator's claim expires after 30 s on Redis). */
const SETUP_WAIT_MS = 40_000

/**
 * Create the topic, or check that the existing one has every option given (omitted options are not
 * compared). Options are validated first, whether or not the topic exists; an existing topic is
 * only read, so this works on a store the caller cannot write. A topic that someone else creates at
 * the same time is waited for (it exists for readers only once it is set up) and then checked.
 */
export async function ensureTopic(store: Backend, name: string, options: CreateTopicOptions = {}): Promise<void> {
  const wanted = topicMetaFrom(name, options)
  const deadline = Date.now() + SETUP_WAIT_MS
  for (let wait = 10; ; wait = Math.min(wait * 2, 500)) {
    let existing: TopicMeta | undefined
    try {
      existing = await store.getTopic(wanted.name)
    } catch (e) {
      if (!(e instanceof TopicNotFoundError)) throw e
    }
    if (existing) {
      const e = mismatch(existing, wanted, options)
      if (e) throw e
      return
    }
    try {
      return await store.createTopic(wanted)
    } catch (e) {
      // Another creator claimed the name and has not finished: look again shortly.
      if (!(e instanceof TopicExistsError) || Date.now() > deadline) throw e
    }
    await new Promise((resolve) => setTimeout(resolve, wait))
  }
}
