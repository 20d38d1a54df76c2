import { InvalidArgumentError } from './errors.js'

/**
 * Where twainmq tells what happens out of the application's sight (`open(target, { logger })`):
 * any object with these four methods, called with structured fields first and a message, as pino
 * takes them (`console` works too: it prints both).
 */
export interface Logger {
  debug(fields: Record<string, unknown>, message: string): void
  info(fields: Record<string, unknown>, message: string): void
  warn(fields: Record<string, unknown>, message: string): void
  error(fields: Record<string, unknown>, message: string): void
}

/** A background failure the store met and got over by itself (a compaction pass that failed, say). */
export type BackgroundFailure = (fields: Record<string, unknown>, message: string, error: unknown) => void

const LEVELS = ['debug', 'info', 'warn', 'error'] as const

/** `logger` as given to `open()`: undefined, or an object with the four methods; else `InvalidArgumentError`. */
export function checkLogger(logger: unknown): Logger | undefined {
  if (logger === undefined) return undefined
  const missing =
    typeof logger === 'object' && logger !== null
      ? LEVELS.filter((l) => typeof (logger as Record<string, unknown>)[l] !== 'function')
      : LEVELS
  if (missing.length > 0) {
    throw new InvalidArgumentError(
      `open() option logger must have the methods debug, info, warn and error (pino, console), got ${
        typeof logger === 'object' && logger !== null ? `an object without ${missing.join(', ')}` : String(logger)
      }`,
    )
  }
  return logger as Logger
}

/** Calls `logger` safely: a logger that throws never breaks what reported to it. */
export function logTo(
  logger: Logger,
  level: (typeof LEVELS)[number],
  fields: Record<string, unknown>,
  message: string,
): void {
  try {
    logger[level](fields, message)
  } catch {
    /* the logger's failure is its own */
  }
}

/** The fields of an error, for a log line. */
export function errorFields(e: unknown): Record<string, unknown> {
  if (!(e instanceof Error)) return { err: String(e) }
  const code = (e as { code?: unknown }).code
  return { err: { name: e.name, message: e.message, ...(code === undefined ? {} : { code }) } }
}

/** Background failures of a store, told to `logger` (`warn`: the store gets over them by itself). */
export function backgroundLog(logger: Logger): BackgroundFailure {
  return (fields, message, error) => logTo(logger, 'warn', { ...fields, ...errorFields(error) }, message)
}

/** A log rollback a tail or table read past (its records are read again), told to `logger`, else a process warning. */
export function rollbackLog(logger: Logger | undefined): (e: Error) => void {
  return (e) => {
    if (!logger) return process.emitWarning(e)
    logTo(logger, 'warn', { event: 'rollback', ...errorFields(e) }, e.message)
  }
}
