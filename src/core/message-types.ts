import {
  InvalidArgumentError,
  TypeAlreadyRegisteredError,
  UnknownMessageTypeError,
  ValidationError,
  type ValidationIssue,
} from './errors.js'

/** The Standard Schema v1 interface (zod, valibot, arktype implement it); only what we use. */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly '~standard': {
    readonly version: 1
    readonly vendor: string
    readonly validate: (value: unknown) => StandardResult<Output> | Promise<StandardResult<Output>>
    readonly types?: { readonly input: Input; readonly output: Output } | undefined
  }
}
type StandardResult<O> =
  { readonly value: O; readonly issues?: undefined } | { readonly issues: readonly ValidationIssue[] }

/**
 * A Standard Schema, checked before "a function": some validators (arktype's types) are both, and
 * called as a plain function they return their errors instead of throwing.
 */
function isStandard(v: TypeValidator): v is StandardSchemaV1 {
  return typeof (v as Partial<StandardSchemaV1>)['~standard']?.validate === 'function'
}

/** `path.to.field: message; …` (path segments may be keys or `{ key }` objects, as valibot gives them); a message that starts with its path is not given it twice. */
function describeIssues(issues: readonly ValidationIssue[]): string {
  const seg = (p: ValidationIssue['path'] extends ReadonlyArray<infer S> | undefined ? S : never) =>
    String(typeof p === 'object' && p !== null ? p.key : p)
  return issues
    .map((i) => {
      const path = i.path?.length ? i.path.map(seg).join('.') : ''
      // Some libraries (arktype) start the message with the path already: "id must be an integer".
      return path === '' || i.message.startsWith(`${path} `) ? i.message : `${path}: ${i.message}`
    })
    .join('; ')
}

/** A validator: a Standard Schema, or a function that returns the (possibly transformed) value or throws. */
export type TypeValidator<T = unknown> = StandardSchemaV1<unknown, T> | ((value: unknown) => T)

const TYPE_NAME_RE = /^[A-Za-z0-9_.~-]{1,255}$/

/** Registered message types of a `Twain` instance (TwainMQ's registered dataclasses). */
export class TypeRegistry {
  private readonly types = new Map<string, TypeValidator | undefined>()

  register(name: string, validator?: TypeValidator): void {
    if (typeof name !== 'string' || !TYPE_NAME_RE.test(name)) {
      throw new InvalidArgumentError(
        `Message type name ${JSON.stringify(name)} is invalid: use 1-255 of A-Z a-z 0-9 _ . ~ -`,
      )
    }
    if (this.types.has(name)) throw new TypeAlreadyRegisteredError(`Message type "${name}" is already registered`)
    if (validator !== undefined && typeof validator !== 'function' && !isStandard(validator)) {
      throw new InvalidArgumentError(`The validator of message type "${name}" must be a Standard Schema or a function`)
    }
    this.types.set(name, validator)
  }

  has(name: string): boolean {
    return this.types.has(name)
  }

  /**
   * Validate a message read back whose `type` is registered: its `value` becomes the validated value,
   * or its `error` is set (the stream is not stopped). Synchronous unless the validator is async.
   */
  checkRead<
    M extends {
      type?: string | undefined
      value: unknown
      topic: string
      partition: number
      offset: number
      error?: Error
    },
  >(m: M): M | Promise<M> {
    const v = m.type === undefined ? undefined : this.types.get(m.type)
    if (v === undefined) return m
    const where = `${m.topic}/${m.partition}@${m.offset}`
    if (!isStandard(v)) {
      try {
        m.value = v(m.value)
      } catch (cause) {
        m.error = new ValidationError(
          `Value of message type "${m.type}" at ${where} is invalid: ${(cause as Error)?.message ?? String(cause)}`,
          { cause },
        )
      }
      return m
    }
    const apply = (r: StandardResult<unknown>): M => {
      if (r.issues)
        m.error = new ValidationError(
          `Value of message type "${m.type}" at ${where} is invalid: ${describeIssues(r.issues)}`,
          { issues: r.issues },
        )
      else m.value = r.value
      return m
    }
    const r = v['~standard'].validate(m.value)
    return r instanceof Promise ? r.then(apply) : apply(r)
  }

  /** Whether any type has a validator (else reading needs no checks at all). */
  get validates(): boolean {
    for (const v of this.types.values()) if (v !== undefined) return true
    return false
  }

  /** Validate `value` as type `name`; resolves with the validated (possibly transformed) value. */
  async validate(name: string, value: unknown, where: string): Promise<unknown> {
    if (!this.types.has(name)) {
      throw new UnknownMessageTypeError(
        `Message type "${name}" is not registered (${where}): call twain.registerType("${name}", schema) first`,
      )
    }
    const v = this.types.get(name)
    if (v === undefined) return value
    if (!isStandard(v)) {
      try {
        return v(value)
      } catch (cause) {
        throw new ValidationError(
          `Value of message type "${name}" is invalid (${where}): ${(cause as Error)?.message ?? String(cause)}`,
          { cause },
        )
      }
    }
    const r = await v['~standard'].validate(value)
    if (r.issues)
      throw new ValidationError(`Value of message type "${name}" is invalid (${where}): ${describeIssues(r.issues)}`, {
        issues: r.issues,
      })
    return r.value
  }
}
