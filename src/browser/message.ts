/**
 * One message of a browser tail or history read.
 *
 * On JSON streams (every Node topic, and `application/json` streams made over HTTP) a message is
 * one stored message and `value` its parsed JSON. On text and binary streams the protocol does not
 * keep message boundaries: a message is one chunk as the gateway delivered it (`value` a string for
 * `text/*`, else a `Uint8Array`), possibly several appends joined.
 */
export interface BrowserMessage<V = unknown> {
  /** The stream it was read from (the name given to `tail`/`history`). */
  readonly stream: string
  /** The message's position: passing it as `from` reads this message again, then the rest. */
  readonly offset: string
  /** Parsed JSON, a string (`text/*` streams) or a `Uint8Array` (other content types). */
  readonly value: V
  /** The token to pass as `from` to continue right after this message. */
  readonly resume: string
}
