// Login, sessions and the per-request authentication every route goes through.
// A JWT is only a pointer to a session row: a request is authenticated while that row exists, has not
// passed its lifetime and has not been idle too long, so logout, logout-all and locking act at once.
import type { Config } from '../../server/runtime/config'
import { type ClusterEvent, type ClusterEvents, localEvents } from '../../server/runtime/events'
import { Errors } from '../../server/http/errors'
import { Hs256 } from '../../server/rules/jwt'
import type { Logger } from '../../server/runtime/log'
import { type AccessSpec, userHolds } from '../../server/rules/permissions'
import type { TokensRepo } from '../tokens/repo'
import type { UsersRepo } from '../users/repo'
import type { UserRow } from '../users/repo'
import type { TokenRow } from '../tokens/repo'
import type { LoginReservation, SessionRow, SessionsRepo } from './repo'
import { hashSecret, hashesEqual } from '../tokens/secret'
import { type Maybe, then } from '../../server/store/maybe'

/** Who is making a request, as the guard established it: by a login session or by an API token. */
export interface Caller {
  uid: number
  user: UserRow
  /** Admin rights in effect for this request (an admin's token has none, docs/api.md "API tokens"). */
  admin: boolean
  session?: { id: string; expires: number; temp: boolean }
  /** `expires`: when the token stops working, 0 for never. */
  token?: { id: string; capabilities: readonly string[]; expires: number }
}

export type LoginResult =
  | { ok: true; jwt: string; user: UserRow }
  | { ok: false; status: 422 | 423; reason: string }
  | { ok: false; status: 429; reason: string; retryAfterMs: number }

/** Sessions are written back at most this often, so a busy client does not turn every read into a write. */
export const TOUCH_INTERVAL_MS = 1000
/** GET /api/login/tmptoken: a session usable only for downloads, for this long. */
export const DOWNLOAD_SESSION_MS = 3000
/** UID 1's attempts are limited per this window (config.adminLoginRate per minute). */
const PRIMARY_ADMIN_WINDOW_MS = 60_000
const INVALID_CREDENTIALS = 'Invalid username or password'
const THROTTLED = 'Too many failed logins; try again later'
/** Verified JWTs remembered at once; the oldest is forgotten first. */
const VERIFIED_JWT_CACHE_SIZE = 10_000

interface JwtClaims {
  sub: string
  jti: string
  /** Expiry, seconds since the epoch. */
  exp: number
}

export interface AuthDeps {
  config: Config
  repos: { users: UsersRepo; sessions: SessionsRepo; tokens: TokensRepo }
  /** Whether the repositories answer synchronously (SQLite): authenticate then never returns a promise. */
  synchronous: boolean
  log: Logger
  clock: () => number
  signingKey: string
  /**
   * How the other replicas learn that sessions and tokens ended (server/runtime/events.ts): what they hold open for them
   * (sockets, search attachments) ends at once there too. Default: one process, nobody to tell.
   */
  events?: ClusterEvents
  /**
   * Whether the request came straight from a trusted reverse proxy (QUARRY_TRUSTED_PROXIES), whose X-Forwarded-Host
   * and X-Forwarded-Proto then name the origin the browser saw. Default: never.
   */
  fromTrustedProxy?: (request: Request) => boolean
}

export class AuthService {
  /**
   * Whether authenticate answers at once, never with a promise: on a synchronous store (SQLite). The guard is then a
   * plain function, which Elysia calls without an await (plugins/auth/guard.ts).
   */
  readonly answersAtOnce: boolean
  private readonly signer: Hs256
  private dummyHash: Promise<string> | undefined
  private readonly verified = new Map<string, JwtClaims>()
  private readonly endListeners: ((sessionIds: readonly string[]) => void)[] = []
  private readonly replaceListeners: ((oldId: string, newId: string) => void)[] = []
  private readonly tokenEndListeners: ((tokenIds: readonly string[]) => void)[] = []
  private readonly tokenExpiryListeners: ((tokenId: string, expires: number) => void)[] = []

  /**
   * Settled once the first admin exists (or never had to be made). The server creates it only after it listens
   * (a start that fails leaves no account behind), so a login arriving in between waits for it instead of being
   * told the password is wrong.
   */
  private firstAdmin: Promise<unknown> = Promise.resolve()

  private readonly events: ClusterEvents

  constructor(private readonly deps: AuthDeps) {
    this.answersAtOnce = deps.synchronous
    this.signer = new Hs256(deps.signingKey)
    this.events = deps.events ?? localEvents()
    this.events.subscribe((e) => this.deliver(e))
  }

  /** An event of this replica: its own listeners now, then every other replica's. */
  private emit(event: ClusterEvent): void {
    this.deliver(event)
    this.events.publish(event)
  }

  private deliver(event: ClusterEvent): void {
    switch (event.kind) {
      case 'sessions-ended':
        for (const listener of this.endListeners) listener(event.ids)
        break
      case 'tokens-ended':
        for (const listener of this.tokenEndListeners) listener(event.ids)
        break
      case 'session-replaced':
        for (const listener of this.replaceListeners) listener(event.from, event.to)
        break
      case 'token-expiry':
        for (const listener of this.tokenExpiryListeners) listener(event.id, event.expires)
        break
    }
  }

  /** Logins wait for `created` (settled either way) before they look the account up. */
  loginsWaitFor(created: Promise<unknown>): void {
    this.firstAdmin = created.catch(() => undefined)
  }

  hashPassword(password: string): Promise<string> {
    return Bun.password.hash(password, { algorithm: 'argon2id', ...this.deps.config.passwordHash })
  }

  verifyPassword(password: string, hash: string): Promise<boolean> {
    return Bun.password.verify(password, hash)
  }

  async login(username: string, password: string, origin: string): Promise<LoginResult> {
    await this.firstAdmin
    const { repos, clock } = this.deps
    const now = clock()
    const user = await repos.users.getByName(username)
    const subject = throttleSubject(user, username)
    // The attempt is counted before the password is checked, so no number of parallel guesses gets more than the
    // limit verified; a refused attempt costs no hashing. Unknown names take the same path with their own row.
    const reservation = await this.reserveAttempt(user?.uid, subject, now)
    if (!reservation.reserved) return { ok: false, status: 429, reason: THROTTLED, retryAfterMs: Math.max(0, reservation.until - now) }
    // An unknown name costs as much as a wrong password, so timing does not tell which it was.
    const matches = user
      ? await this.verifyPassword(password, user.passwordHash)
      : (await this.verifyPassword(password, await this.getDummyHash()), false)
    if (!user || !matches) {
      this.deps.log.info('login failed', { user: username, origin })
      return { ok: false, status: 422, reason: INVALID_CREDENTIALS }
    }
    if (user.locked) return { ok: false, status: 423, reason: 'Account is locked' }
    // The session is made only if the account still has the password just checked and is still unlocked: a change,
    // lock or deletion during the check wins over it.
    const session = await this.createSession(user.uid, origin, false, undefined, user.passwordHash)
    if (!session) {
      const current = await repos.users.get(user.uid)
      if (current?.locked) return { ok: false, status: 423, reason: 'Account is locked' }
      return { ok: false, status: 422, reason: INVALID_CREDENTIALS }
    }
    await repos.sessions.clearLoginAttempts(subject)
    await repos.users.touch(user.uid, now)
    return { ok: true, jwt: session.jwt, user }
  }

  /**
   * Checks a user's current password where an API asks for it again (OrigPass). Guesses count against the same
   * throttle as logins, so a stolen session cannot be used to guess the password.
   */
  async confirmPassword(user: UserRow, password: string | undefined): Promise<void> {
    const subject = throttleSubject(user, user.username)
    if (!(await this.reserveAttempt(user.uid, subject, this.deps.clock())).reserved)
      throw Errors.tooManyRequests('too many wrong passwords; try again later')
    if (!password || !(await this.verifyPassword(password, user.passwordHash)))
      throw Errors.forbidden('OrigPass does not match the current password')
    await this.deps.repos.sessions.clearLoginAttempts(subject)
  }

  /**
   * Reserves one password check. Every account and unknown name: loginMaxFailures per loginFailureWindowMs. UID 1,
   * which strangers must not be able to lock out (docs/api.md "Logging in and sessions"): adminLoginRate per minute, so
   * a lockout by strangers lasts at most a minute after they stop, and guessing stays as slow as for everyone else. It
   * is exempt from the row bound, having one row of its own.
   */
  private reserveAttempt(uid: number | undefined, subject: string, now: number): Promise<LoginReservation> {
    const { config, repos } = this.deps
    return uid === 1
      ? repos.sessions.reserveLoginAttempt(subject, now, PRIMARY_ADMIN_WINDOW_MS, config.adminLoginRate, Number.MAX_SAFE_INTEGER)
      : repos.sessions.reserveLoginAttempt(subject, now, config.loginFailureWindowMs, config.loginMaxFailures, config.loginThrottleEntries)
  }

  /** Creates a session row and answers the JWT that points to it; 401 when the account was locked or deleted meanwhile. */
  async openSession(uid: number, origin: string, temp: boolean, expires?: number): Promise<string> {
    const session = await this.createSession(uid, origin, temp, expires)
    if (!session) throw Errors.unauthenticated('session has ended')
    return session.jwt
  }

  /** Undefined when the store refused it (see SessionsRepo.create). */
  private async createSession(
    uid: number, origin: string, temp: boolean, expires?: number, passwordHash?: string,
  ): Promise<{ id: string; jwt: string } | undefined> {
    const now = this.deps.clock()
    const session: SessionRow = {
      id: crypto.randomUUID(),
      uid,
      created: now,
      lastHit: now,
      expires: expires ?? now + (temp ? DOWNLOAD_SESSION_MS : this.deps.config.sessionLifetimeMs),
      origin,
      temp,
    }
    if (!(await this.deps.repos.sessions.create(session, passwordHash))) return undefined
    return { id: session.id, jwt: this.signer.sign({ sub: String(uid), jti: session.id, exp: Math.ceil(session.expires / 1000) }) }
  }

  /**
   * Calls `listener` with the ids of sessions whenever they end: logout, logout-all, lock, deletion, password
   * change, expiry noticed on use or by the sweep. (Searches detach the clients they had attached this way.)
   */
  onSessionsEnded(listener: (sessionIds: readonly string[]) => void): void {
    this.endListeners.push(listener)
  }

  private ended(ids: readonly string[]): void {
    if (ids.length === 0) return
    this.emit({ kind: 'sessions-ended', ids: [...ids] })
  }

  closeSession(id: string): Maybe<void> {
    return then(this.deps.repos.sessions.delete(id), (deleted) => {
      if (deleted) this.ended([id])
    })
  }

  /**
   * Runs a store change that ends every session and API token of the user itself (locking or deleting an account),
   * and reports the sessions and tokens the user had before it as ended once it succeeded. `ends` false: the change
   * ends nothing and nothing is reported. (A locked owner's tokens stop working; unlocking does not bring back what
   * they were attached to.)
   */
  async endingAccessOf(uid: number, change: () => Promise<void>, ends = true): Promise<void> {
    const ids = ends ? (await this.deps.repos.sessions.listForUser(uid)).map((s) => s.id) : []
    const tokenIds = ends ? (await this.deps.repos.tokens.listForUser(uid)).map((t) => t.id) : []
    await change()
    this.ended(ids)
    this.tokensEnded(tokenIds)
  }

  /**
   * Calls `listener` with the ids of API tokens whenever they end: deleted, or their owner locked or deleted.
   * (Expiry is a time, not an event: see onTokenExpiryChanged.) Searches detach the tokens they had attached.
   */
  onTokensEnded(listener: (tokenIds: readonly string[]) => void): void {
    this.tokenEndListeners.push(listener)
  }

  /** Reports API tokens as ended (the tokens API calls it once a token is deleted). */
  tokensEnded(ids: readonly string[]): void {
    if (ids.length === 0) return
    this.emit({ kind: 'tokens-ended', ids: [...ids] })
  }

  /** Calls `listener` when an API token gets a new expiry (changed or refreshed; 0: never): same token, new end. */
  onTokenExpiryChanged(listener: (tokenId: string, expires: number) => void): void {
    this.tokenExpiryListeners.push(listener)
  }

  /** Reports a token's new expiry (the tokens API calls it once the change is stored). */
  tokenExpiryChanged(id: string, expires: number): void {
    this.emit({ kind: 'token-expiry', id, expires })
  }

  /** Deletes the sessions past their lifetime or idle timeout (run periodically by the server). */
  async sweepExpiredSessions(): Promise<void> {
    const now = this.deps.clock()
    this.ended(await this.deps.repos.sessions.deleteExpired(now, this.deps.config.sessionIdleMs))
    await this.deps.repos.sessions.sweepLoginAttempts(now)
  }

  /**
   * Replaces the caller's session with a new one and answers its JWT. The new session ends when the old
   * one would have: refreshing renews the JWT, it does not stretch the absolute session lifetime.
   */
  async refreshSession(caller: Caller, origin: string): Promise<string> {
    const session = sessionOf(caller)
    const next = await this.createSession(caller.uid, origin, false, session.expires)
    if (!next) throw Errors.unauthenticated('session has ended')
    if (await this.deps.repos.sessions.delete(session.id)) this.emit({ kind: 'session-replaced', from: session.id, to: next.id })
    return next.jwt
  }

  /** Calls `listener` when a session is replaced by a new one (JWT refresh): what was attached to it moves along. */
  onSessionReplaced(listener: (oldId: string, newId: string) => void): void {
    this.replaceListeners.push(listener)
  }

  /** Ends every session of a user, or every one but `keep`. */
  async closeAllSessions(uid: number, keep?: string): Promise<void> {
    this.ended(await this.deps.repos.sessions.deleteForUser(uid, keep))
  }

  /**
   * Establishes the caller of a request and checks that the route's access rule admits them.
   * Throws 401 when no valid credential is present, 403 when the caller lacks the right.
   */
  async authorize(request: Request, spec: AccessSpec): Promise<Caller> {
    const caller = await this.authenticate(request, spec)
    this.admit(caller, spec)
    return caller
  }

  /**
   * Throws when the route's access rule does not admit the caller: 401 for a download session on another
   * route; 403 when the right is missing. An API token is an overlay on its owner's rights (docs/api.md "API tokens"):
   * it passes only where it lists the route's permission and the owner may do the same now, and it never
   * reaches admin-level or session-only routes.
   */
  admit(caller: Caller, spec: AccessSpec): void {
    if (caller.session?.temp && !spec.download) throw Errors.unauthenticated('a download token is valid only for downloads')
    const key = spec.key
    if (caller.token) {
      if (key === 'admin') throw Errors.forbidden('API tokens cannot be used for admin-level APIs')
      if (key === 'session') throw Errors.forbidden('this API needs a login session; API tokens cannot use it')
      if (key !== 'self' && !caller.token.capabilities.includes(key)) throw Errors.missingPermission(key)
    }
    if (key === 'admin') {
      if (!caller.admin) throw Errors.adminOnly()
    } else if (key !== 'self' && key !== 'session' && !userHolds(caller.user, key)) {
      throw Errors.missingPermission(key)
    }
  }

  /**
   * Establishes who sent the request from its credential; throws 401 when there is no valid one. On a synchronous
   * store (SQLite) the caller comes back at once, not as a promise (server/store/maybe.ts): the
   * guard then runs without any await of its own. A refusal may be a synchronous throw or a rejected promise.
   */
  authenticate(request: Request, spec: AccessSpec): Maybe<Caller> {
    const credential = credentialOf(request, spec.cookie === true, spec.shipper === true)
    if (!credential) throw Errors.unauthenticated()
    const caller = credential.kind === 'jwt' ? this.bySession(credential.value) : this.byToken(credential.value)
    // A browser sends the cookie with requests other sites make it send; a header credential it never adds itself.
    // Checked once the credential holds (an invalid one is a 401 first).
    if (credential.cookie && !SAFE_METHODS.has(request.method))
      return then(caller, (c) => sameOriginCaller(request, c, this.deps.fromTrustedProxy?.(request) ?? false))
    return caller
  }

  private bySession(token: string): Maybe<Caller> {
    const claims = this.verifyJwt(token)
    if (!claims) throw Errors.unauthenticated('invalid or expired token')
    return then(this.deps.repos.sessions.getWithUser(claims.jti), (found) => this.liveCaller(claims, found))
  }

  /** The caller of a session row that matches its JWT and is live; the session and user touched when due. */
  private liveCaller(claims: JwtClaims, found: { session: SessionRow; user: UserRow } | undefined): Maybe<Caller> {
    if (!found || String(found.user.uid) !== claims.sub) throw Errors.unauthenticated('session has ended')
    const { session, user } = found
    const now = this.deps.clock()
    if (!this.isLive(session, now))
      return then(this.closeSession(session.id), () => {
        throw Errors.unauthenticated('session has expired')
      })
    if (user.locked) throw Errors.unauthenticated('session has ended')
    const caller = sessionCaller(session, user)
    if (now - session.lastHit < TOUCH_INTERVAL_MS) return caller
    // At most once a second per session: the write-back of the session's and the user's last activity.
    const { repos } = this.deps
    user.lastActive = now
    return then(
      then(repos.sessions.touch(session.id, now), () => repos.users.touch(user.uid, now)),
      () => caller,
    )
  }

  /**
   * Activity on a connection opened with the session (a WebSocket message): counts for the idle timeout as a request
   * would, written back as the request path does (when the last hit is TOUCH_INTERVAL_MS old or more). A session
   * that has ended, gone idle or whose user is locked is not revived: false.
   */
  async touchSession(id: string): Promise<boolean> {
    const { repos, clock } = this.deps
    const now = clock()
    const found = await repos.sessions.getWithUser(id)
    if (!this.holds(found, now)) return false
    if (now - found.session.lastHit >= TOUCH_INTERVAL_MS) {
      await repos.sessions.touch(id, now)
      await repos.users.touch(found.user.uid, now)
    }
    return true
  }

  /** Whether a session row read with its user still admits requests: live, and its user not locked. */
  private holds(found: { session: SessionRow; user: UserRow } | undefined, now: number): found is { session: SessionRow; user: UserRow } {
    return found !== undefined && this.isLive(found.session, now) && !found.user.locked
  }

  /**
   * The caller of a connection authenticated earlier (a WebSocket), as the store has it now: the user's current
   * admin flag and permissions, the token's current capabilities; undefined once the session or token no longer
   * admits requests (ended, expired, idle, owner locked or deleted), as a new request with it would get a 401. Reads
   * only: it counts as no activity of the session.
   */
  async currentCaller(caller: Caller): Promise<Caller | undefined> {
    const { repos, clock } = this.deps
    const now = clock()
    if (caller.session) {
      const found = await repos.sessions.getWithUser(caller.session.id)
      return this.holds(found, now) && found.user.uid === caller.uid ? sessionCaller(found.session, found.user) : undefined
    }
    if (!caller.token) return undefined
    const token = await repos.tokens.get(caller.token.id)
    const user = token && (await repos.users.get(token.uid))
    if (!token || !user || user.uid !== caller.uid || user.locked || (token.expires !== 0 && token.expires <= now)) return undefined
    return tokenCallerOf(token, user)
  }

  /** An API token: usable until it expires, while its owner exists and is not locked. */
  private byToken(secret: string): Maybe<Caller> {
    const hash = hashSecret(secret)
    return then(this.deps.repos.tokens.getBySecretHash(hash), (found) => this.tokenCaller(hash, found))
  }

  private tokenCaller(hash: string, found: Awaited<ReturnType<TokensRepo['getBySecretHash']>>): Caller {
    if (!found || !hashesEqual(found.secretHash, hash)) throw Errors.unauthenticated('invalid API token')
    const { token, user } = found
    if (token.expires !== 0 && token.expires <= this.deps.clock()) throw Errors.unauthenticated('API token has expired')
    if (user.locked) throw Errors.unauthenticated('the owner of this API token is locked')
    return tokenCallerOf(token, user)
  }

  /** Whether a session is still within its lifetime and, unless a download session, its idle timeout. */
  isLive(session: SessionRow, now: number): boolean {
    return session.expires > now && (session.temp || now - session.lastHit < this.deps.config.sessionIdleMs)
  }

  /**
   * The claims of a JWT whose HS256 signature is valid and which has not expired. A signature, once
   * verified, is remembered for the token's life (bounded in count), so a client reusing its JWT costs a
   * map lookup instead of an HMAC; the session row is still checked on every request.
   */
  private verifyJwt(token: string): JwtClaims | undefined {
    const known = this.verified.get(token)
    if (known) {
      if (known.exp > Date.now() / 1000) return known
      this.verified.delete(token)
      return undefined
    }
    const payload = this.signer.verify(token)
    if (!payload || typeof payload.jti !== 'string' || typeof payload.sub !== 'string' || typeof payload.exp !== 'number') return undefined
    const claims = { sub: payload.sub, jti: payload.jti, exp: payload.exp }
    if (this.verified.size >= VERIFIED_JWT_CACHE_SIZE) this.verified.delete(this.verified.keys().next().value!)
    this.verified.set(token, claims)
    return claims
  }

  /** Made when first needed, then kept: the first unknown name costs one hash more than any later one. */
  private getDummyHash(): Promise<string> {
    this.dummyHash ??= this.hashPassword(crypto.randomUUID())
    return this.dummyHash
  }
}

/** The caller of a live session: the user's admin rights are in effect. */
function sessionCaller(session: SessionRow, user: UserRow): Caller {
  return { uid: user.uid, user, admin: user.admin, session: { id: session.id, expires: session.expires, temp: session.temp } }
}

/** The caller of a valid API token: an overlay on its owner's rights, never with admin rights. */
function tokenCallerOf(token: Pick<TokenRow, 'id' | 'capabilities' | 'expires'>, user: UserRow): Caller {
  return { uid: user.uid, user, admin: false, token: { id: token.id, capabilities: token.capabilities, expires: token.expires } }
}

function bearerJwt(authz: string): { kind: 'jwt'; value: string } | undefined {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(authz)
  return m ? { kind: 'jwt', value: m[1]! } : undefined
}

/** A JWT has three dot-separated parts; an API token's secret is base64url, without a dot. */
const JWT_SHAPE = /^[^.]+\.[^.]+\.[^.]*$/

/**
 * The credential in an Authorization header as log shippers send it (AccessSpec.shipper): a Bearer JWT, or an API
 * token as `Bearer <token>`, `Splunk <token>` or Basic's password.
 */
function shipperCredential(authz: string): { kind: 'jwt' | 'token'; value: string } | undefined {
  const m = /^(Bearer|Splunk|Basic)\s+(\S+)\s*$/i.exec(authz)
  if (!m) return undefined
  const scheme = m[1]!.toLowerCase()
  const value = m[2]!
  if (scheme === 'bearer') return JWT_SHAPE.test(value) ? { kind: 'jwt', value } : { kind: 'token', value }
  if (scheme === 'splunk') return { kind: 'token', value }
  const decoded = Buffer.from(value, 'base64').toString('utf8')
  const colon = decoded.indexOf(':')
  return colon === -1 || colon === decoded.length - 1 ? undefined : { kind: 'token', value: decoded.slice(colon + 1) }
}

/**
 * The credential of a request: a JWT in `Authorization: Bearer`, else on a WebSocket upgrade in
 * `Sec-WebSocket-Protocol`, else (where the route allows it) in cookie `token`; or an API token in
 * `Service-Token` (or its alias `Gravwell-Token`); on shipper routes also the token in `Authorization`
 * (shipperCredential).
 */
function credentialOf(
  request: Request,
  allowCookie: boolean,
  shipper: boolean,
): { kind: 'jwt' | 'token'; value: string; cookie?: true } | undefined {
  const headers = request.headers
  const authz = headers.get('authorization')
  if (authz) return shipper ? shipperCredential(authz) : bearerJwt(authz)
  const secret = headers.get('service-token') ?? headers.get('gravwell-token')
  if (secret) return { kind: 'token', value: secret.trim() }
  if (headers.get('upgrade')?.toLowerCase() === 'websocket') {
    const proto = headers.get('sec-websocket-protocol')
    if (proto) return { kind: 'jwt', value: proto.split(',')[0]!.trim() }
  }
  if (allowCookie) {
    const value = tokenCookie(headers.get('cookie'))
    if (value !== undefined) return { kind: 'jwt', value, cookie: true }
  }
  return undefined
}

/** The caller of a request authenticated by cookie, once its origin is proven this server's own (403 otherwise). */
function sameOriginCaller(request: Request, caller: Caller, viaTrustedProxy: boolean): Caller {
  if (!sameOrigin(request, viaTrustedProxy))
    throw Errors.forbidden('a request authenticated by cookie must come from this server\'s own pages (Origin or Sec-Fetch-Site)')
  return caller
}

/** What a host (name, IPv4, [IPv6], port) is made of: nothing that a URL would read as user, path or query. */
const HOST_CHARS = /^[a-z0-9.\-[\]:]+$/

/** Methods that change nothing, for which a cookie needs no proof of origin. */
const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD'])

/**
 * The last entry of a header a proxy may append to (`a, b`): the one the proxy next to us wrote. Undefined when
 * the header is absent or its last entry empty.
 */
function lastForwarded(headers: Headers, name: string): string | undefined {
  const value = headers.get(name)?.split(',').at(-1)?.trim()
  return value ? value : undefined
}

/**
 * Whether a request comes from a page of this server: its Origin names the host the request was sent to, or,
 * without an Origin, its Sec-Fetch-Site says same-origin. Neither (a non-browser client, or a browser too old to
 * say): not proven, so refused; such clients send the JWT in a header, which no other site can make a browser add.
 * Behind a trusted reverse proxy that rewrites Host (nginx's default), the host the browser sent to is the
 * proxy's X-Forwarded-Host, and X-Forwarded-Proto the scheme it used; from any other peer both are ignored, since
 * anyone can send them.
 */
function sameOrigin(request: Request, viaTrustedProxy: boolean): boolean {
  const headers = request.headers
  const forwardedHost = viaTrustedProxy ? lastForwarded(headers, 'x-forwarded-host') : undefined
  const forwardedProto = viaTrustedProxy ? lastForwarded(headers, 'x-forwarded-proto')?.toLowerCase() : undefined
  // A request without a Host header (HTTP/1.0) has a URL without a host: no origin can match it.
  const host = (forwardedHost ?? headers.get('host') ?? (URL.parse(request.url)?.host || '')).toLowerCase()
  if (host === '') return false
  const origin = headers.get('origin')
  if (origin !== null) {
    const url = URL.parse(origin)
    if (!url || url.origin !== origin) return false
    if (forwardedProto === undefined) return url.host === host
    // the scheme too, and the port its default spelt out or not (`example.com:443` over https is `example.com`)
    if ((forwardedProto !== 'http' && forwardedProto !== 'https') || !HOST_CHARS.test(host)) return false
    return URL.parse(`${forwardedProto}://${host}`)?.origin === url.origin
  }
  return headers.get('sec-fetch-site')?.trim().toLowerCase() === 'same-origin'
}

/** Longest `token` cookie value looked at: a JWT of ours is a few hundred characters. */
const MAX_TOKEN_COOKIE = 8192

/**
 * The value of cookie `token` (the first one), percent-decoded and without the quotes RFC 6265 allows around it.
 * Whatever a client sends, the answer is a string or undefined, never an exception: a malformed or oversized value
 * is no credential (401), not a server fault.
 */
function tokenCookie(header: string | null): string | undefined {
  if (!header) return undefined
  const m = /(?:^|;)\s*token=([^;]*)/.exec(header)
  if (!m) return undefined
  let raw = m[1]!.trim()
  if (raw.length >= 2 && raw.startsWith('"') && raw.endsWith('"')) raw = raw.slice(1, -1)
  if (raw === '' || raw.length > MAX_TOKEN_COOKIE) return undefined
  try {
    return decodeURIComponent(raw)
  } catch {
    return undefined
  }
}

/**
 * The login throttle's row for a login name: the account's UID when one has that name; otherwise a hash of the name
 * (a fixed size whatever a client sends), folded as the user lookup compares names (ASCII case, NFC), so every
 * spelling that would find one account shares one row, as known names do.
 */
/** The login throttle's key: per account when the name is one, else per (folded) name, hashed. */
export function throttleSubject(user: Pick<UserRow, 'uid'> | undefined, name: string): string {
  if (user) return `uid:${user.uid}`
  const folded = name.normalize('NFC').replace(/[A-Z]/g, (c) => c.toLowerCase())
  return `name:${new Bun.CryptoHasher('sha256').update(folded).digest('hex')}`
}

/** The login session of a caller on a route that declares access 'session' (the guard admits no token there). */
export function sessionOf(caller: Caller): { id: string; expires: number; temp: boolean } {
  if (!caller.session) throw Errors.forbidden('this API needs a login session')
  return caller.session
}
