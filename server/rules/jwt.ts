// The server's JWTs: HS256 only, signed and verified here. This replaces @elysiajs/jwt (and jose under it), whose
// import cost ~7-10 ms of every start (bench/README.md, cold start) for the two calls Quarry made.
// The tokens are the same: header {"alg":"HS256","typ":"JWT"}, the claims given plus `iat`. Verification takes
// nothing but HS256 (no "none", no other algorithm, whatever the header says), compares the signature in constant
// time, and refuses a token that has expired, is not yet valid, or whose claims are not a JSON object. Bun's HMAC
// and crypto.timingSafeEqual rather than node:crypto's, whose import alone costs ~8 ms (or more on a loaded host).

export type JwtPayload = Record<string, unknown>

const HEADER = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url')
/** base64url without padding, as JWS compact serialisation writes it. */
const B64URL = /^[A-Za-z0-9_-]*$/

export class Hs256 {
  private readonly key: Buffer

  constructor(secret: string) {
    if (!secret) throw new Error('the JWT signing key is empty')
    this.key = Buffer.from(secret, 'utf8')
  }

  /** A signed token of `claims` with `iat` (seconds) added. */
  sign(claims: JwtPayload, now = Date.now()): string {
    const payload = Buffer.from(JSON.stringify({ ...claims, iat: Math.floor(now / 1000) })).toString('base64url')
    return `${HEADER}.${payload}.${this.mac(`${HEADER}.${payload}`)}`
  }

  /** The claims of a token this key signed with HS256 and that is valid now; undefined for anything else. */
  verify(token: string, now = Date.now()): JwtPayload | undefined {
    const parts = token.split('.')
    if (parts.length !== 3) return undefined
    const [header, payload, signature] = parts as [string, string, string]
    if (!B64URL.test(header) || !B64URL.test(payload) || !B64URL.test(signature)) return undefined
    // The signature first, in constant time: nothing of an unsigned token is looked at further.
    const expected = Buffer.from(this.mac(`${header}.${payload}`))
    const given = Buffer.from(signature)
    if (given.length !== expected.length || !crypto.timingSafeEqual(given, expected)) return undefined
    const h = parseObject(header)
    // Pinned: a token signed with this key under another name (or with critical extensions) is not ours.
    if (!h || h.alg !== 'HS256' || h.crit !== undefined || (h.b64 !== undefined && h.b64 !== true)) return undefined
    const claims = parseObject(payload)
    if (!claims) return undefined
    const seconds = Math.floor(now / 1000)
    for (const name of ['exp', 'nbf', 'iat'] as const) if (claims[name] !== undefined && !Number.isFinite(claims[name])) return undefined
    if (claims.exp !== undefined && (claims.exp as number) <= seconds) return undefined
    if (claims.nbf !== undefined && (claims.nbf as number) > seconds) return undefined
    return claims
  }

  private mac(input: string): string {
    return new Bun.CryptoHasher('sha256', this.key).update(input).digest('base64url')
  }
}

function parseObject(part: string): JwtPayload | undefined {
  try {
    const v: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'))
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as JwtPayload) : undefined
  } catch {
    return undefined
  }
}
