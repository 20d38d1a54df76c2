import type { GatewayOperation } from './auth-tokens.js'

/** What an `authorize` hook sees of a request. */
export interface AuthorizeRequest {
  readonly method: string
  readonly url: URL
  /** A request header (name in lower case), or undefined. */
  header(name: string): string | undefined
}

/**
 * A custom access check (`createGateway({ authorize })`), run after the token check if there is
 * one: resolve true to let the request through, false to answer 403.
 */
export type AuthorizeHook = (
  request: AuthorizeRequest,
  stream: string,
  operation: GatewayOperation,
) => boolean | Promise<boolean>
