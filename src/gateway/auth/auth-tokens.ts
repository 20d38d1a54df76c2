import { createHash, timingSafeEqual } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { InvalidArgumentError } from '../../core/errors.js'
import { checkKnownKeys } from '../../core/names.js'
import { compilePattern, type NamePattern } from './name-pattern.js'

/** What a request does to a stream: `read` needs a read grant; `append`, `create` and `delete` a write grant. */
export type GatewayOperation = 'read' | 'append' | 'create' | 'delete'

/** One entry of an auth file (docs/gateway.md, "Auth file"). */
export interface TokenEntry {
  /** Who the token stands for (logs, `authorize`). @default 'token <n>' (its position, from 1) */
  name?: string
  /** The bearer token itself, at least 16 characters. Give this or `sha256`. */
  token?: string
  /** The SHA-256 of the token, 64 hex digits, so the file holds no secret. Give this or `token`. */
  sha256?: string
  /** Stream-name patterns this token may read. @default [] */
  read?: NamePattern[]
  /** Stream-name patterns this token may append to, create and delete. @default [] */
  write?: NamePattern[]
}

/** The auth file: `{ "tokens": [ … ] }`. */
export interface AuthFile {
  tokens: TokenEntry[]
}

/** The outcome of a check: allowed (with who), or the status to answer and why. */
export type AuthDecision = { allowed: true; principal: string } | { allowed: false; status: 401 | 403; reason: string }

interface Grant {
  name: string
  digest: Buffer
  read: Array<(s: string) => boolean>
  write: Array<(s: string) => boolean>
  /** Whether `read` has the pattern `*` (every stream, also ones not yet made). */
  readsAll: boolean
}

const MIN_TOKEN_CHARS = 16
const digestOf = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest()

/**
 * Bearer tokens with read and write grants on stream-name patterns (the gateway's `auth` option and
 * `twainmq serve --auth <file>`). Tokens are compared as SHA-256 digests with `timingSafeEqual`
 * against every entry, so neither a token's length nor which entry matched shows in the time taken.
 */
export class TokenAuth {
  private constructor(private readonly grants: readonly Grant[]) {}

  /** Read and validate an auth file; `InvalidArgumentError` names the file, the entry and what is wrong. */
  static async load(path: string): Promise<TokenAuth> {
    let text: string
    try {
      text = await readFile(path, 'utf8')
    } catch (e) {
      throw new InvalidArgumentError(`Cannot read the auth file ${path}: ${(e as Error).message}`, { cause: e })
    }
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch (e) {
      throw new InvalidArgumentError(`The auth file ${path} is not valid JSON: ${(e as Error).message}`, { cause: e })
    }
    return TokenAuth.from(json, path)
  }

  /** Validate an auth file's content (`source` names it in errors). */
  static from(json: unknown, source = 'auth'): TokenAuth {
    if (json === null || typeof json !== 'object' || Array.isArray(json))
      throw new InvalidArgumentError(`${source}: expected an object { "tokens": [ … ] }, got ${JSON.stringify(json)}`)
    checkKnownKeys(source, json as Record<string, unknown>, ['tokens'])
    const tokens = (json as { tokens?: unknown }).tokens
    if (!Array.isArray(tokens) || tokens.length === 0)
      throw new InvalidArgumentError(`${source}: "tokens" must be a non-empty array, got ${JSON.stringify(tokens)}`)
    const seen = new Set<string>()
    const grants = tokens.map((entry: unknown, i) => {
      const where = `${source}: tokens[${i}]`
      if (entry === null || typeof entry !== 'object' || Array.isArray(entry))
        throw new InvalidArgumentError(`${where} must be an object, got ${JSON.stringify(entry)}`)
      const e = entry as TokenEntry
      checkKnownKeys(where, e as Record<string, unknown>, ['name', 'token', 'sha256', 'read', 'write'])
      if ((e.token === undefined) === (e.sha256 === undefined))
        throw new InvalidArgumentError(`${where} needs exactly one of "token" and "sha256"`)
      if (
        e.token !== undefined &&
        (typeof e.token !== 'string' || e.token.length < MIN_TOKEN_CHARS || /\s/.test(e.token))
      ) {
        throw new InvalidArgumentError(
          `${where}: "token" must be a string of at least ${MIN_TOKEN_CHARS} characters without spaces`,
        )
      }
      if (e.sha256 !== undefined && (typeof e.sha256 !== 'string' || !/^[0-9a-fA-F]{64}$/.test(e.sha256))) {
        throw new InvalidArgumentError(`${where}: "sha256" must be 64 hex digits, got ${JSON.stringify(e.sha256)}`)
      }
      if (e.name !== undefined && (typeof e.name !== 'string' || e.name === ''))
        throw new InvalidArgumentError(`${where}: "name" must be a non-empty string, got ${JSON.stringify(e.name)}`)
      const digest = e.token !== undefined ? digestOf(e.token) : Buffer.from(e.sha256 as string, 'hex')
      const key = digest.toString('hex')
      if (seen.has(key)) throw new InvalidArgumentError(`${where}: the same token as an earlier entry`)
      seen.add(key)
      const patterns = (field: 'read' | 'write') => {
        const list = e[field] ?? []
        if (!Array.isArray(list))
          throw new InvalidArgumentError(
            `${where}: "${field}" must be an array of stream-name patterns, got ${JSON.stringify(list)}`,
          )
        return list.map((p, k) => compilePattern(p, `${where}.${field}[${k}]`))
      }
      const grant: Grant = {
        name: e.name ?? `token ${i + 1}`,
        digest,
        read: patterns('read'),
        write: patterns('write'),
        readsAll: (e.read ?? []).includes('*'),
      }
      if (grant.read.length + grant.write.length === 0)
        throw new InvalidArgumentError(`${where} grants nothing: give "read" or "write" patterns`)
      return grant
    })
    return new TokenAuth(grants)
  }

  /**
   * Check a request's `Authorization` header for a token that may `op` some stream (the gateway's
   * JSON endpoints, which then show only what it may read): 401 without a valid token, 403 when its
   * entry has no pattern for `op`.
   */
  checkAny(authorization: string | null | undefined, op: GatewayOperation): AuthDecision {
    const found = this.find(authorization)
    if (!found.allowed) return found
    const g = found.grant
    if ((op === 'read' ? g.read : g.write).length === 0)
      return { allowed: false, status: 403, reason: `${g.name} may not ${op === 'read' ? 'read' : 'write'} any stream` }
    return { allowed: true, principal: g.name }
  }

  /**
   * Check a request's `Authorization` header for a token that may read every stream (the read
   * pattern `*`): what `GET /metrics` needs, whose figures name every topic and group.
   */
  checkReadsAll(authorization: string | null | undefined): AuthDecision {
    const found = this.find(authorization)
    if (!found.allowed) return found
    const g = found.grant
    if (!g.readsAll) return { allowed: false, status: 403, reason: `${g.name} may not read every stream (read "*")` }
    return { allowed: true, principal: g.name }
  }

  /** Check a request's `Authorization` header for `op` on stream `stream`. */
  check(authorization: string | null | undefined, stream: string, op: GatewayOperation): AuthDecision {
    const found = this.find(authorization)
    if (!found.allowed) return found
    const g = found.grant
    const tests = op === 'read' ? g.read : g.write
    if (!tests.some((t) => t(stream)))
      return {
        allowed: false,
        status: 403,
        reason: `${g.name} may not ${op === 'read' ? 'read' : 'write'} stream "${stream}"`,
      }
    return { allowed: true, principal: g.name }
  }

  /** The entry of a `Bearer` token (compared with every entry), or the 401 to answer. */
  private find(
    authorization: string | null | undefined,
  ): { allowed: true; grant: Grant } | { allowed: false; status: 401; reason: string } {
    const m = authorization ? /^Bearer[ ]+(\S+)[ ]*$/i.exec(authorization) : null
    if (!m)
      return {
        allowed: false,
        status: 401,
        reason: authorization ? 'the Authorization header is not "Bearer <token>"' : 'a bearer token is required',
      }
    const presented = digestOf(m[1] as string)
    let found: Grant | undefined
    for (const g of this.grants) if (timingSafeEqual(g.digest, presented)) found ??= g
    if (!found) return { allowed: false, status: 401, reason: 'the token is not valid' }
    return { allowed: true, grant: found }
  }
}
