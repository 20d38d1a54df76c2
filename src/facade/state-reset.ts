import type { Backend } from '../backends/backend.js'
import { parseSourceHeader, SOURCE_HEADER } from '../backends/source-header.js'
import { BackendError, InvalidArgumentError, TopicNotFoundError, TwainError } from '../core/errors.js'
import { checkKnownKeys, checkTopicName } from '../core/names.js'
import { changelogTopic } from '../consumer/partitioned/state/processor-state.js'

/*
 * `resetGroup(…, { state })`: a reset of a processor group that also clears its state store
 * (README "State stores", decision 212). A partition's state is what the inputs before its
 * position left, and the restore goes on after the last input the changelog names; a reset back
 * with the state kept would replay nothing. Clearing deletes the changelog (the next member
 * creates it again, empty), which also drops what its exactly-once tables remember (a trimmed
 * changelog would take the replay's writes of the last inputs before the stop as repeats). The
 * store is named by the caller: a topic named like a changelog may be a group's own output.
 */

/** Options of `Twain.resetGroup`. */
export interface ResetOptions {
  /**
   * The group's state store (`ProcessorOptions.state`) to clear with the reset: its changelog
   * `<group>-<state>-changelog` is deleted, and the next member starts with an empty state, so a
   * replay from the start rebuilds it. The reset must then set every partition (the state goes for
   * all of them). No member may start while the reset runs.
   * @default undefined: the state is kept (a member goes on after the last input its changelog names)
   */
  state?: string
}

/**
 * The changelog to clear for `options.state` (undefined: none), checked: it exists, its records
 * name `group` and `topic` as their source, and `target` sets every partition.
 * @throws InvalidArgumentError naming the bad value.
 */
export async function checkStateReset(
  store: Backend,
  group: string,
  topic: string,
  partitions: readonly number[],
  target: ReadonlyMap<number, number>,
  options: ResetOptions | undefined,
): Promise<string | undefined> {
  if (options === undefined) return undefined
  if (options === null || typeof options !== 'object')
    throw new InvalidArgumentError(`resetGroup() options must be an object, got ${JSON.stringify(options)}`)
  checkKnownKeys('resetGroup()', options, ['state'])
  if (options.state === undefined) return undefined
  if (typeof options.state !== 'string' || options.state.length === 0)
    throw new InvalidArgumentError(
      `resetGroup() option state must be a store name, got ${JSON.stringify(options.state)}`,
    )
  const changelog = checkTopicName(changelogTopic(group, options.state))
  let partitionsOf: number
  try {
    partitionsOf = (await store.getTopic(changelog)).partitions
  } catch (e) {
    if (!(e instanceof TopicNotFoundError)) throw e
    throw new InvalidArgumentError(
      `Group "${group}" has no state store "${options.state}": its changelog "${changelog}" does not exist`,
    )
  }
  const other = await otherSource(store, changelog, partitionsOf, `${group} ${topic}@`)
  if (other !== undefined)
    throw new InvalidArgumentError(
      `"${changelog}" is not the changelog of group "${group}" over topic "${topic}": its records come from ${JSON.stringify(other)}`,
    )
  const missing = partitions.filter((p) => !target.has(p))
  if (missing.length > 0)
    throw new InvalidArgumentError(
      `resetGroup("${group}", "${topic}") with state "${options.state}" must set every partition (the state is cleared for all of them); partition(s) ${missing.join(', ')} not given`,
    )
  return changelog
}

/** The source of the first record of `name`'s partitions whose source does not start with `source` (undefined: none). */
async function otherSource(
  store: Backend,
  name: string,
  partitions: number,
  source: string,
): Promise<string | undefined> {
  for (let p = 0; p < partitions; p++) {
    const reader = await store.openReader(name, p, 0)
    try {
      const [first] = await reader.read(1)
      if (first === undefined) continue
      const h = first.headers[SOURCE_HEADER]
      const s = h === undefined ? undefined : parseSourceHeader(h)
      if (s === undefined || !s.key.startsWith(source)) return s?.key ?? `a record without ${SOURCE_HEADER}`
    } finally {
      await reader.close()
    }
  }
  return undefined
}

/** After the group's positions were reset: its state store's changelog is deleted. */
export async function clearState(store: Backend, group: string, changelog: string | undefined): Promise<void> {
  if (changelog === undefined) return
  try {
    await store.deleteTopic(changelog)
  } catch (e) {
    if (e instanceof TopicNotFoundError) return
    if (!(e instanceof Error)) throw e
    throw new BackendError(
      `Group "${group}" was reset, but its state store changelog "${changelog}" could not be deleted (${e.message}): reset it again with the same options before a member starts, or the member restores the old state and replays nothing`,
      {
        cause: e,
        retriable: e instanceof TwainError && e.retriable,
        code: e instanceof TwainError ? e.code : undefined,
      },
    )
  }
}
