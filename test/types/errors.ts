// Error classes (compiled by tsc: `npx tsc --noEmit -p .` and test/unit/type-tests.test.ts): each is a
// class extending TwainError, and each documented field (docs/errors.md) is on the class that has it.
import {
  TopicCorruptError,
  TopicNotFoundError,
  UnknownMessageTypeError,
  type ClosedError,
  type TwainError,
} from 'twainmq'

export function errors(e: unknown): string | number | undefined {
  if (e instanceof UnknownMessageTypeError) {
    const base: TwainError = e
    const id: number | undefined = e.typeId
    const where: string | undefined = e.file
    return id ?? where ?? e.line ?? base.code
  }
  if (e instanceof TopicCorruptError) return e.offset ?? e.position ?? e.line ?? e.file
  // @ts-expect-error typeId is UnknownMessageTypeError's, not TopicCorruptError's
  if (e instanceof TopicCorruptError) return e.typeId
  const closed: ClosedError | undefined = e instanceof TopicNotFoundError ? undefined : (e as ClosedError)
  return closed?.retriable === true ? 'retry' : undefined
}
