import {
  createHash,
  createHmac,
  generateKeyPairSync,
  randomBytes,
  sign,
  timingSafeEqual,
  type KeyObject,
} from 'node:crypto'

/** A public signing key as a JWK (RFC 8037, Ed25519). */
export interface Ed25519Jwk {
  kty: 'OKP'
  crv: 'Ed25519'
  x: string
  kid: string
  use: 'sig'
  alg: 'EdDSA'
}

/** What a callback token says: whose wake it is for, its generation, until when (s since the epoch). */
interface TokenClaims {
  sub: string
  gen: number
  exp: number
  jti: string
}

/** How long a wake's bearer token is accepted; the lease fences it much sooner. */
const TOKEN_SECONDS = 3600

export type TokenCheck = { ok: true; generation: number } | { ok: false; code: 'TOKEN_INVALID' | 'TOKEN_EXPIRED' }

/**
 * The gateway's subscription secrets, made when it starts: an Ed25519 key pair that signs webhook
 * deliveries (the public half served as a JWK set, its id `ds_<sha-256 thumbprint>`), and an HMAC
 * key for the bearer tokens of wakes (`<claims>.<mac>`, base64url). A restarted gateway has new
 * ones: receivers fetch the key set again for the new `kid`, and tokens of wakes in flight are
 * refused (their wakes are sent again).
 */
export class SubscriptionKeys {
  private readonly privateKey: KeyObject
  readonly jwk: Ed25519Jwk
  private readonly mac = randomBytes(32)

  constructor() {
    const pair = generateKeyPairSync('ed25519')
    this.privateKey = pair.privateKey
    const pub = pair.publicKey.export({ format: 'jwk' }) as { x?: string }
    if (pub.x === undefined) throw new Error('Ed25519 public key export gave no "x"')
    const thumb = createHash('sha256')
      .update(JSON.stringify({ crv: 'Ed25519', kty: 'OKP', x: pub.x }))
      .digest('base64url')
    this.jwk = { kty: 'OKP', crv: 'Ed25519', x: pub.x, kid: `ds_${thumb}`, use: 'sig', alg: 'EdDSA' }
  }

  /** The `Webhook-Signature` header of `body`: `t=<unix s>,kid=<kid>,ed25519=<base64url signature of "<t>.<body>">`. */
  signature(body: string, now = Date.now()): string {
    const t = Math.floor(now / 1000)
    const sig = sign(null, Buffer.from(`${t}.${body}`), this.privateKey).toString('base64url')
    return `t=${t},kid=${this.jwk.kid},ed25519=${sig}`
  }

  /** A bearer token for the wake of `subject` at `generation`. */
  token(subject: string, generation: number, now = Date.now()): string {
    const claims: TokenClaims = {
      sub: subject,
      gen: generation,
      exp: Math.floor(now / 1000) + TOKEN_SECONDS,
      jti: randomBytes(8).toString('hex'),
    }
    const body = Buffer.from(JSON.stringify(claims)).toString('base64url')
    return `${body}.${this.macOf(body)}`
  }

  /** Check a bearer token for `subject`: its generation, or why it is refused. */
  check(token: string, subject: string, now = Date.now()): TokenCheck {
    const dot = token.indexOf('.')
    if (dot <= 0 || token.indexOf('.', dot + 1) >= 0) return { ok: false, code: 'TOKEN_INVALID' }
    const body = token.slice(0, dot)
    const given = Buffer.from(token.slice(dot + 1))
    const want = Buffer.from(this.macOf(body))
    if (given.length !== want.length || !timingSafeEqual(given, want)) return { ok: false, code: 'TOKEN_INVALID' }
    let claims: Partial<TokenClaims>
    try {
      claims = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Partial<TokenClaims>
    } catch {
      return { ok: false, code: 'TOKEN_INVALID' }
    }
    if (claims.sub !== subject || typeof claims.gen !== 'number') return { ok: false, code: 'TOKEN_INVALID' }
    if (typeof claims.exp !== 'number' || Math.floor(now / 1000) > claims.exp)
      return { ok: false, code: 'TOKEN_EXPIRED' }
    return { ok: true, generation: claims.gen }
  }

  private macOf(body: string): string {
    return createHmac('sha256', this.mac).update(body).digest('base64url')
  }
}
