// The WebSocket endpoints: GET /api/ws/search (launch, parse, attach to and read searches) and GET /api/ws/stats
// (periodic system status), as the TypeScript and Go clients speak them (protocol.ts).
//
// Guarantees:
// - The upgrade is authenticated like any request (the auth guard's `access`): a JWT in `Authorization` or in
//   `Sec-WebSocket-Protocol` (whose first value is then echoed back as the accepted subprotocol, docs/websocket.md), or
//   an API token (`Service-Token`) holding the route's permission; otherwise 401/403 and no upgrade. A socket ends
//   (1008) when its session or token ends (logout, lock, deletion, expiry).
// - A search launched here is an ordinary search of the search manager (the one GET /api/searchctrl lists and
//   controls), launched, attached, detached and read only through the manager's public methods, so that a later
//   cluster can forward them to the replica that owns the search. Each socket is a client of its own: closing it
//   (or a Close request) detaches it, and a search neither backgrounded nor saved is removed after the grace period.
// - In a cluster (server/cluster), `attach` of a search another replica holds opens (once per replica) a socket of
//   this one to that replica's internal search socket, with the cluster secret and the caller's own credentials, and
//   every request on that search's subprotocol is relayed there and its answer back, under this socket's subprotocol
//   name: the client sees one socket, the owner one client. Closing this socket closes those.
// - A bad message (not JSON, unknown type, bad fields) is answered with an error on the socket; nothing a client
//   sends ends the server or the socket, except a message over WS_MAX_MESSAGE (Bun closes with 1009) or a reader
//   too far behind (more than WS_MAX_PENDING messages waiting, or WS_SEND_LIMIT reached: cut, see below).
// - Memory per socket is bounded, on both sockets and for every answer of every kind (errors to messages that are
//   not even JSON objects, ACKs and stats updates included): every message a client sends waits in one queue of at
//   most WS_MAX_PENDING and is answered in order, one at a time, and none is answered while more than WS_HIGH_WATER
//   bytes wait to be sent (it resumes on drain); one answer holds at most MAX_ENTRIES entries and about
//   MAX_ANSWER_BYTES of them (AdditionalEntries tells there is more). Stats updates are skipped, not queued, while
//   the socket is over WS_HIGH_WATER. Every answer leaves through one function (send), which ends a socket that
//   would hold more than WS_SEND_LIMIT unread bytes. A socket ended for its reader (more than WS_MAX_PENDING
//   messages waiting, or WS_SEND_LIMIT reached) is cut without a close handshake: a close frame would queue behind
//   the bytes that reader does not read, and the memory would stay held until it did (the client sees 1006).
// - Memory per user is bounded: one user holds at most config.wsPerUser (QUARRY_WS_PER_USER) open sockets on a
//   replica, those of their API tokens included; an upgrade past it is refused with 429, and a socket that passed
//   the check together with others past the count is closed at once with 1013 (try again later).
// - A socket acts with its caller's rights as the store has them now, as a new request would: before each request
//   of a search socket, and every CREDENTIAL_CHECK_MS for every socket, the session or token is read again (its
//   user's admin flag, permissions and groups, the token's capabilities). A session or token that no longer admits
//   requests (ended by anything, the CLI on the server's host included, idle, expired, owner locked) ends its
//   sockets (1008), as does the loss of the route's permission; a lost admin flag or group membership narrows
//   what the next request may see. Each replica checks its own sockets, so this holds on every replica.
import type { ServerWebSocket } from 'bun'
import { Elysia, type Static, t } from 'elysia'
import { type Cluster, INTERNAL_WS_SEARCH, SECRET_HEADER } from '../../server/cluster'
import type { Config } from '../../server/runtime/config'
import type { Logger } from '../../server/runtime/log'
import { ApiError, Errors } from '../../server/http/errors'
import { checkJsonShape } from '../../server/http/json-shape'
import { QueryError } from '../../engine/errors'
import type { Search, SearchManager, Viewer } from '../../server/search/manager'
import { formatTime, parseTime } from '../../server/runtime/time'
import { authGuard } from '../auth/guard'
import { type AuthService, type Caller, TOUCH_INTERVAL_MS } from '../auth/service'
import { admitQuery, clientOf } from '../searchctrl'
import { engineKey, replicaKeys } from '../stats'
import { type SystemDescription, describeSystem } from '../stats/system'
import { REQ, RESP_ERROR, baseResponse, markPreview, queryHints, renderModuleOf, rendererOf, searchHints, searchInfo, statsAnswer, tagsOf } from './protocol'
import { type QueryFilter, applyFilters, filterError } from '../../engine/filters'
import type { CompiledQuery } from '../../engine/query'
import { area } from '../../server/http/openapi'
import { accessSpec } from '../../server/rules/permissions'
import type { GroupsRepo } from '../groups/repo'

/** The largest message a client may send (Bun closes the socket with 1009 beyond it): queries are at most 4 KiB. */
export const WS_MAX_MESSAGE = 256 * 1024
/** Bytes waiting to be sent on a socket above which no further answer is built until it drains. */
export const WS_HIGH_WATER = 1024 * 1024
/** Messages of one socket waiting to be answered, at most (a client that sends faster than it reads is closed). */
export const WS_MAX_PENDING = 256
/** Entries in one answer, at most. */
export const MAX_ENTRIES = 1000
/** An answer stops taking entries once they hold this many bytes (it always holds at least one). */
export const MAX_ANSWER_BYTES = 4 * 1024 * 1024
/**
 * Unread bytes one socket may hold: answers start only under WS_HIGH_WATER, so only a reader that stopped with
 * an answer of MAX_ANSWER_BYTES (and its JSON around the entries) in flight comes near it; past it the socket ends.
 */
export const WS_SEND_LIMIT = WS_HIGH_WATER + MAX_ANSWER_BYTES + 1024 * 1024
/** How often every socket's session or token is read again from the store (it may have ended outside the server). */
export const CREDENTIAL_CHECK_MS = 2000
/**
 * A session not found when a socket's credential is checked may have just been replaced by a JWT refresh on another
 * replica, which tells this one a moment after the old row is gone: the check waits this long before it ends it.
 */
const SESSION_REPLACEMENT_GRACE_MS = 500
/** How often a stats subscription is sent its categories. */
export const STATS_INTERVAL_MS = 2000

/** The options of Bun's WebSocket server (Elysia's `websocket` config). */
export function websocketOptions() {
  return {
    maxPayloadLength: WS_MAX_MESSAGE,
    // Our own bound (WS_SEND_LIMIT, checked before every send) stays below this; it is only the last guard.
    backpressureLimit: 2 * WS_SEND_LIMIT,
    closeOnBackpressureLimit: true,
    idleTimeout: 120,
    sendPings: true,
  }
}

// POST /api/parse: the Go client's ParseSearchRequest and ParseSearchResponse (types/search.go).
const ParseSearchRequest = t.Object({
  SearchString: t.String({ maxLength: 65536 }),
  Sequence: t.Optional(t.Number()),
  // none: absent, null, '' (which Elysia reads as null) or []
  Filters: t.Optional(
    t.Union([
      t.Null(),
      t.Literal(''),
      t.Array(
        t.Object({
          Tag: t.Optional(t.String()),
          Module: t.String(),
          Args: t.Optional(t.String()),
          Path: t.String(),
          Name: t.Optional(t.String()),
          Op: t.Optional(t.String()),
          Value: t.Optional(t.String()),
        }),
        { maxItems: 64 },
      ),
    ]),
  ),
})
const ModuleHint = t.Object({
  Name: t.String(),
  ProducedEVs: t.Array(t.String()),
  ConsumedEVs: t.Array(t.String()),
  ResourcesNeeded: t.Array(t.String()),
  Condensing: t.Boolean(),
})
const ParseSearchResponse = t.Object({
  Sequence: t.Number(),
  GoodQuery: t.Boolean(),
  ParseError: t.Optional(t.String()),
  ParsedQuery: t.String(),
  RawQuery: t.Optional(t.String()),
  ModuleIndex: t.Integer(),
  CollapsingIndex: t.Integer(),
  RenderModule: t.Optional(t.String()),
  TimeZoomDisabled: t.Boolean(),
  Tags: t.Array(t.String()),
  ModuleHints: t.Array(ModuleHint),
})

/** A client's frame as a value: JSON text parsed, anything else (text that is no JSON, binary) as it came. */
export function parseFrame(message: unknown): unknown {
  if (typeof message !== 'string') return message
  try {
    return JSON.parse(message)
  } catch {
    return message
  }
}

export interface WsDeps {
  config: Config
  repos: { groups: GroupsRepo }
  auth: AuthService
  searches: SearchManager
  cluster: Cluster
  clock: () => number
  log: Logger
}

/** A socket of this replica to another's internal search socket, for the searches that replica holds. */
interface Upstream {
  socket: WebSocket
  opened: Promise<boolean>
  /** Callers waiting for an answer, in the order their requests were sent (the owner answers in order). */
  waiting: ((m: Msg | null) => void)[]
  closed: boolean
}

type Raw = ServerWebSocket<unknown>
type Msg = Record<string, unknown>

/** One socket's state. */
interface Conn {
  raw: Raw
  kind: 'search' | 'stats'
  caller: Caller
  viewer: Viewer
  /** This socket as a client of the searches it launched or attached. */
  client: string
  /** Subprotocol type name → search id. */
  subprotos: Map<string, string>
  next: number
  /** Every message the client sent and that is not answered yet, whatever it is (JSON object or not). */
  queue: unknown[]
  busy: boolean
  drained: (() => void) | null
  closed: boolean
  /** Settled once the socket knows its viewer's groups; requests wait for it. */
  ready: Promise<void>
  timer?: ReturnType<typeof setInterval>
  subs?: Set<string>
  /** The upgrade request's headers: the caller's credentials, for the sockets opened to other replicas. */
  headers: Headers
  /** Opened by another replica for its client: every search is served here. Not counted in config.wsPerUser. */
  internal: boolean
  /** The listening port, for the stats keys. */
  port: number | undefined
  /** Subprotocol name → the search another replica holds, its socket there and its name there. */
  remote: Map<string, { id: string; up: Upstream; name: string }>
  /** Sockets to other replicas, by address. */
  upstreams: Map<string, Upstream>
}

let socketCounter = 0

/** The permission each socket's route requires, checked again against the caller's current rights. */
const ROUTE_ACCESS = { search: accessSpec('Search'), stats: accessSpec('Stats') } as const

/** The `{"Error": ...}` of a message that could not be understood at all (no type to answer under). */
const errorMessage = (text: string) => ({ Error: text })

function isObject(v: unknown): v is Msg {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/**
 * Before the upgrade: the accepted subprotocol is the first one offered (the JWT, when the client authenticates
 * this way); the listening port is kept for the status keys (the socket's context does not carry the server).
 */
function echoSubprotocol(ctx: { request: Request; set: { headers: Record<string, unknown> }; server?: { port?: number } | null }) {
  ;(ctx as { listenPort?: number }).listenPort = ctx.server?.port
  const offered = ctx.request.headers.get('sec-websocket-protocol')
  const first = offered?.split(',')[0]?.trim()
  if (first) ctx.set.headers['sec-websocket-protocol'] = first
}

export function wsPlugin({ config, repos, auth, searches, cluster, clock, log }: WsDeps) {
  const conns = new WeakMap<object, Conn>()
  /** Open sockets by the session or token they were opened with, to close them when it ends. */
  const byCredential = new Map<string, Set<Conn>>()
  const credentialOf = (caller: Caller) => clientOf(caller)
  /** Open public sockets by UID (config.wsPerUser bounds each). */
  const openByUser = new Map<number, number>()

  /**
   * The one way out for every answer of both sockets. Called only while the socket had room (under WS_HIGH_WATER
   * when its answer was started); a socket whose unread bytes would pass WS_SEND_LIMIT with it, or whose message Bun
   * dropped, is ended at once (see the guarantees above for why without a close frame).
   */
  function send(c: Conn, message: unknown): void {
    if (c.closed) return
    const text = JSON.stringify(message)
    const buffered = c.raw.getBufferedAmount()
    if (buffered + Buffer.byteLength(text) > WS_SEND_LIMIT || c.raw.send(text) === 0) cutOff(c, 'its reader is too far behind', { buffered })
  }

  /** Ends a socket whose client does not read what it asked for: no close handshake, its buffer freed now. */
  function cutOff(c: Conn, why: string, detail: Record<string, unknown>): void {
    if (c.closed) return
    log.warn(`websocket closed: ${why}`, { uid: c.caller.uid, ...detail })
    c.closed = true
    c.drained?.()
    c.raw.terminate()
  }
  // An ended client cannot come back: its searches that nobody keeps go at once (as for REST clients), then its
  // sockets close.
  const endAll = (keys: readonly string[]) => {
    for (const key of keys)
      for (const c of byCredential.get(key) ?? []) {
        searches.detachClients([c.client])
        c.raw.close(1008, 'the session or API token has ended')
      }
  }
  auth.onSessionsEnded((ids) => endAll(ids.map((id) => `session:${id}`)))
  auth.onTokensEnded((ids) => endAll(ids.map((id) => `token:${id}`)))
  // A refreshed JWT is a new session: the sockets opened with the old one continue under it.
  auth.onSessionReplaced((oldId, newId) => {
    const moving = byCredential.get(`session:${oldId}`)
    if (!moving) return
    byCredential.delete(`session:${oldId}`)
    askedAt.delete(`session:${oldId}`)
    for (const c of moving) if (c.caller.session) c.caller = { ...c.caller, session: { ...c.caller.session, id: newId } }
    byCredential.set(`session:${newId}`, moving)
  })

  /**
   * A message on a socket opened with a session is activity of that session (its idle timeout starts again), as an
   * HTTP request is; `PONG` keep-alives are not (an open tab nobody uses still goes idle). The store is asked at
   * most once per TOUCH_INTERVAL_MS per session, whatever the number of its sockets and messages (the time of the
   * last ask, by session, is kept while it has sockets). A session found ended or idle ends its sockets at once.
   */
  const askedAt = new Map<string, number>()
  function activity(c: Conn, message: unknown): void {
    const session = c.caller.session
    if (!session || (isObject(message) && message.type === 'PONG')) return
    const key = `session:${session.id}`
    const now = clock()
    if (now - (askedAt.get(key) ?? Number.NEGATIVE_INFINITY) < TOUCH_INTERVAL_MS) return
    askedAt.set(key, now)
    auth.touchSession(session.id).then(
      (live) => void (live || endAll([key])),
      (e) => log.warn('a websocket session could not be marked active', { uid: c.caller.uid, error: e instanceof Error ? e.message : String(e) }),
    )
  }

  let described: SystemDescription | undefined

  async function viewerOf(caller: Caller): Promise<Viewer> {
    const groups = await repos.groups.groupsOf(caller.uid)
    return { uid: caller.uid, admin: caller.admin, groups: new Set(groups.map((g) => g.gid)) }
  }

  /**
   * The socket's caller as the store has it now (auth.currentCaller), kept on the socket; undefined once its session
   * or token no longer admits requests. A session replaced meanwhile (a JWT refresh: onSessionReplaced moves the
   * socket to the new one) is asked about under its new id.
   */
  async function currentCallerOf(c: Conn): Promise<Caller | undefined> {
    for (let replaced = 0; replaced < 3; replaced++) {
      const asked = c.caller
      const found = await auth.currentCaller(asked)
      if (c.caller !== asked) continue
      if (found) return (c.caller = found)
      if (!asked.session) return undefined
      await Bun.sleep(SESSION_REPLACEMENT_GRACE_MS)
      if (c.caller === asked) return undefined
    }
    return undefined
  }

  /**
   * Whether the socket may go on with its caller's current rights: its credential still admits requests and holds
   * the route's permission. Otherwise the socket ends (1008) and its searches nobody keeps go.
   */
  async function stillAdmitted(c: Conn): Promise<boolean> {
    return admittedAs(c, await currentCallerOf(c))
  }

  /** stillAdmitted with the current caller of the socket's credential known (undefined: it has ended). */
  function admittedAs(c: Conn, caller: Caller | undefined): boolean {
    let refusal = 'the session or API token has ended'
    if (caller)
      try {
        auth.admit(caller, ROUTE_ACCESS[c.kind])
        if (credentialOf(c.caller) === credentialOf(caller)) c.caller = caller
        return true
      } catch (e) {
        if (!(e instanceof ApiError)) throw e
        refusal = e.message
      }
    if (!c.closed) {
      c.closed = true
      searches.detachClients([c.client])
      c.raw.close(1008, refusal.slice(0, 120))
    }
    return false
  }

  /**
   * Every CREDENTIAL_CHECK_MS while sockets are open: each credential of an open socket read again, once for all its
   * sockets. This is how a session ended where no event tells this replica (a store changed by the CLI on the
   * server's host, an idle timeout, an expiry) ends its sockets, the stats sockets included, which send no request.
   */
  let checking: ReturnType<typeof setInterval> | undefined
  let checkRunning = false
  async function checkCredentials(): Promise<void> {
    if (checkRunning) return
    checkRunning = true
    try {
      for (const sockets of [...byCredential.values()]) {
        const open = [...sockets].filter((c) => !c.closed)
        if (open.length === 0) continue
        const caller = await currentCallerOf(open[0]!)
        for (const c of open) admittedAs(c, caller)
      }
    } finally {
      checkRunning = false
    }
  }
  function watchCredentials(): void {
    if (checking) return
    checking = setInterval(() => {
      if (byCredential.size === 0) {
        clearInterval(checking)
        checking = undefined
        return
      }
      void checkCredentials().catch((e) => log.warn('websocket credentials could not be checked', { error: e instanceof Error ? e.message : String(e) }))
    }, CREDENTIAL_CHECK_MS)
    checking.unref?.()
  }

  /** Before a public upgrade: 429 when the caller's user already holds config.wsPerUser open sockets here. */
  function admitAnotherSocket(caller: Caller): void {
    if ((openByUser.get(caller.uid) ?? 0) >= config.wsPerUser)
      throw Errors.tooManyRequests(`too many open WebSockets: at most ${config.wsPerUser} per user (QUARRY_WS_PER_USER)`)
  }

  async function opened(ws: { raw: Raw; data: unknown }, kind: 'search' | 'stats', internal = false): Promise<void> {
    const caller = (ws.data as { caller: Caller }).caller
    if (!internal) {
      const open = openByUser.get(caller.uid) ?? 0
      // Upgrades checked together can pass the count: those past it end here.
      if (open >= config.wsPerUser) return ws.raw.close(1013, `too many open WebSockets (at most ${config.wsPerUser} per user)`)
      openByUser.set(caller.uid, open + 1)
    }
    const c: Conn = {
      headers: (ws.data as { request?: Request }).request?.headers ?? new Headers(),
      internal,
      port: (ws.data as { listenPort?: number }).listenPort,
      remote: new Map(),
      upstreams: new Map(),
      raw: ws.raw,
      kind,
      caller,
      viewer: { uid: caller.uid, admin: caller.admin, groups: new Set() },
      client: `${clientOf(caller)}#ws${++socketCounter}`,
      subprotos: new Map(),
      next: 1,
      queue: [],
      busy: false,
      drained: null,
      closed: false,
      ready: Promise.resolve(),
    }
    conns.set(ws.raw, c)
    takeMessages(ws.raw)
    const key = credentialOf(caller)
    if (!byCredential.has(key)) byCredential.set(key, new Set())
    byCredential.get(key)!.add(c)
    watchCredentials()
    if (kind === 'search')
      c.ready = viewerOf(caller).then(
        (v) => void (c.viewer = v),
        () => undefined,
      )
    await c.ready
  }

  function closed(raw: Raw): void {
    const c = conns.get(raw)
    if (!c) return
    conns.delete(raw)
    c.closed = true
    c.drained?.()
    if (c.timer) clearInterval(c.timer)
    if (!c.internal) {
      const open = (openByUser.get(c.caller.uid) ?? 1) - 1
      if (open > 0) openByUser.set(c.caller.uid, open)
      else openByUser.delete(c.caller.uid)
    }
    const key = credentialOf(c.caller)
    byCredential.get(key)?.delete(c)
    if (byCredential.get(key)?.size === 0) {
      byCredential.delete(key)
      askedAt.delete(key)
    }
    for (const id of c.subprotos.values()) detach(c, id)
    c.subprotos.clear()
    c.remote.clear()
    for (const up of c.upstreams.values()) up.socket.close(1000)
    c.upstreams.clear()
    cluster.syncSoon()
  }

  /**
   * Messages of an open socket go from Bun straight to `enqueue`. Elysia's own message path (the handler it puts in
   * the socket's data) awaits twice and builds a context object of a dozen bound methods per frame: a flood of tiny
   * frames (one read of a socket holds about 75,000) then held the event loop for seconds before the socket could
   * be cut. A frame is parsed only when its turn to be answered comes (pump), so frames past the cut cost a lookup.
   */
  function takeMessages(raw: Raw): void {
    const data = (raw as unknown as { data?: { message?: unknown } }).data
    if (!data) return
    data.message = (socket: object, message: unknown) => socketEvents.message({ raw: socket }, message)
  }

  /** What every socket does with a message, a drained send buffer and its end (search, internal, stats). */
  const socketEvents = {
    message(ws: { raw: object }, message: unknown) {
      const c = conns.get(ws.raw)
      if (c) enqueue(c, message)
    },
    drain(ws: { raw: object }) {
      const c = conns.get(ws.raw)
      const resume = c?.drained
      if (c) c.drained = null
      resume?.()
    },
    close(ws: { raw: object }) {
      closed(ws.raw as Raw)
    },
  }

  /** Opens this socket's socket to the replica at `address` (the caller's credentials, the cluster secret). */
  function upstream(c: Conn, address: string): Upstream {
    const known = c.upstreams.get(address)
    if (known && !known.closed) return known
    const target = cluster.upstreamSocket(address, c.headers)
    const socket = new WebSocket(target.url, { headers: target.headers, protocols: target.protocols, tls: target.tls } as never)
    const up: Upstream = { socket, opened: Promise.resolve(false), waiting: [], closed: false }
    up.opened = new Promise<boolean>((resolve) => {
      socket.onopen = () => resolve(true)
      socket.onerror = () => resolve(false)
      socket.onclose = () => {
        resolve(false)
        up.closed = true
        for (const w of up.waiting.splice(0)) w(null)
        for (const [name, r] of c.remote) if (r.up === up) c.remote.delete(name)
        if (c.upstreams.get(address) === up) c.upstreams.delete(address)
      }
    })
    socket.onmessage = (ev) => {
      let m: Msg | null = null
      try {
        const parsed: unknown = JSON.parse(String(ev.data))
        m = isObject(parsed) ? parsed : null
      } catch {}
      up.waiting.shift()?.(m)
    }
    c.upstreams.set(address, up)
    return up
  }

  /** Sends one request on an upstream socket; its answer, or null when that replica is gone. */
  async function relay(up: Upstream, message: Msg): Promise<Msg | null> {
    if (!(await up.opened) || up.closed) return null
    return new Promise<Msg | null>((resolve) => {
      up.waiting.push(resolve)
      up.socket.send(JSON.stringify(message))
    })
  }

  /** `attach` of a search another replica holds: attached there through this socket's socket to it. */
  async function attachRemote(c: Conn, id: string, address: string): Promise<boolean> {
    const up = upstream(c, address)
    const answer = await relay(up, { type: 'attach', data: { ID: id } })
    if (!answer) return false
    const data = isObject(answer.data) ? answer.data : {}
    if (answer.type === 'attach' && typeof data.Subproto === 'string') {
      let name = [...c.remote].find(([, r]) => r.up === up && r.name === data.Subproto)?.[0]
      if (!name) {
        name = `search${c.next++}`
        c.remote.set(name, { id, up, name: data.Subproto })
      }
      send(c, { ...answer, data: { ...data, Subproto: name } })
    } else send(c, answer)
    return true
  }

  /** A request on the subprotocol of a search another replica holds: relayed, answered under this socket's name. */
  async function requestRemote(c: Conn, type: string, remote: { id: string; up: Upstream; name: string }, data: Msg): Promise<void> {
    const answer = await relay(remote.up, { type: remote.name, data })
    if (!answer) {
      c.remote.delete(type)
      return send(c, { type, data: { ID: RESP_ERROR, Error: `search ${remote.id} no longer exists` } })
    }
    if (data.ID === REQ.CLOSE) c.remote.delete(type)
    send(c, answer.type === remote.name ? { ...answer, type } : answer)
  }

  /**
   * The socket lets go of a search it attached (also one its caller may no longer see); the manager's grace period
   * then applies to a search nobody keeps.
   */
  function detach(c: Conn, id: string): void {
    searches.releaseClient(id, c.client)
    cluster.syncSoon()
  }

  /** Waits until the socket's send buffer is under WS_HIGH_WATER (or the socket closed). */
  async function roomToSend(c: Conn): Promise<void> {
    let buffered = c.raw.getBufferedAmount()
    if (c.closed || buffered <= WS_HIGH_WATER) return
    log.debug('websocket answers paused until the client reads', { uid: c.caller.uid, buffered, pending: c.queue.length })
    while (!c.closed && (buffered = c.raw.getBufferedAmount()) > WS_HIGH_WATER) await new Promise<void>((resolve) => (c.drained = resolve))
    log.debug('websocket answers resumed', { uid: c.caller.uid, buffered })
  }

  /** Whether the credential the socket was opened with still holds (its absolute lifetime or expiry). */
  function stillValid(c: Conn): boolean {
    const now = clock()
    if (c.caller.session && c.caller.session.expires <= now) return false
    if (c.caller.token && c.caller.token.expires !== 0 && c.caller.token.expires <= now) return false
    return true
  }

  /**
   * Queues a message, whatever it is (its answer, an error included, is built and sent only once the socket has
   * room); answered in order, one at a time. Past WS_MAX_PENDING waiting, the socket ends.
   */
  function enqueue(c: Conn, message: unknown): void {
    if (c.closed) return
    if (c.queue.length >= WS_MAX_PENDING) return cutOff(c, 'the client sends requests without reading the answers', { pending: c.queue.length })
    c.queue.push(message)
    if (!c.busy) void pump(c)
  }

  async function pump(c: Conn): Promise<void> {
    c.busy = true
    try {
      await c.ready
      while (c.queue.length > 0 && !c.closed) {
        await roomToSend(c)
        if (c.closed) break
        const m = parseFrame(c.queue.shift())
        activity(c, m)
        if (!isObject(m)) {
          send(c, errorMessage(typeof m === 'string' ? 'malformed message: expected a JSON object' : 'malformed message: expected a JSON object with "type" and "data", or "Subs"'))
          continue
        }
        try {
          if (c.kind === 'stats') await handleStatsMessage(c, m)
          else if (m.type !== 'PONG' && (await stillAdmitted(c))) {
            c.viewer = await viewerOf(c.caller)
            await handleSearchMessage(c, m)
          }
        } catch (e) {
          send(c, errorMessage(e instanceof ApiError ? e.message : 'internal error'))
        }
      }
    } finally {
      c.busy = false
    }
  }

  // ---- /api/ws/search

  async function handleSearchMessage(c: Conn, m: Msg): Promise<void> {
    if (Array.isArray(m.Subs)) {
      send(c, { Resp: 'ACK' })
      return
    }
    const type = m.type
    const data = m.data
    if (typeof type !== 'string') return send(c, errorMessage('malformed message: "type" must be a string'))
    if (type === 'PONG') return
    if (!isObject(data)) return send(c, { type, data: { Error: '"data" must be an object' } })
    switch (type) {
      case 'parse':
        return parse(c, data)
      case 'search':
        return data.OK !== undefined ? accept(c, data) : launch(c, data)
      case 'attach':
        return attach(c, data)
    }
    const remote = c.remote.get(type)
    if (remote) return requestRemote(c, type, remote, data)
    const id = c.subprotos.get(type)
    if (id === undefined) return send(c, { type, data: { Error: `unknown message type ${JSON.stringify(type.slice(0, 64))}` } })
    return request(c, type, id, data)
  }

  /**
   * `parse`: ParseSearchResponse, as validateOneQuery and modifyOneQuery read it. The query is checked as a launch
   * checks it (regexes compiled within their budget), with the client's Filters applied first (engine/filters.ts), and
   * every tag it names must be known ("Could not match tag spec ..." otherwise, the platform's words). A failure names
   * the failing module (ModuleIndex, 0 for the tag list); a filter's failure is worded as the platform words it.
   */
  async function parse(c: Conn, data: Msg): Promise<void> {
    send(c, { type: 'parse', data: await parseAnswer(data) })
  }

  /** ParseSearchResponse to a ParseSearchRequest ({SearchString, Sequence, Filters}): over the socket and POST /api/parse. */
  async function parseAnswer(data: Msg): Promise<Msg> {
    const sequence = typeof data.Sequence === 'number' ? data.Sequence : 0
    const text = data.SearchString
    const refuse = (error: string, moduleIndex = 0, query = typeof text === 'string' ? text : '') => ({
      Sequence: sequence, GoodQuery: false, ParseError: error, ParsedQuery: query, ModuleIndex: moduleIndex, CollapsingIndex: 0, TimeZoomDisabled: true, Tags: [], ModuleHints: [],
    })
    if (typeof text !== 'string') return refuse('SearchString must be a string')
    const filters = data.Filters === '' ? [] : (data.Filters ?? [])
    if (!Array.isArray(filters)) return refuse('Filters must be a list')
    const wanted: QueryFilter[] = []
    for (const f of filters) {
      if (!isObject(f) || typeof f.Module !== 'string' || typeof f.Path !== 'string') return refuse('each filter needs Module and Path (strings)')
      const str = (v: unknown) => (typeof v === 'string' ? v : undefined)
      wanted.push({ Module: f.Module, Path: f.Path, Op: str(f.Op), Value: str(f.Value), Args: str(f.Args) })
    }
    let query: CompiledQuery
    try {
      query = await searches.parse(wanted.length > 0 ? applyFilters(text, wanted) : text)
    } catch (e) {
      if (!(e instanceof QueryError)) throw e
      // a failure in a filter's module is the filter's: worded as the platform words it
      return refuse(wanted.some((f) => f.Module === e.module) ? filterError(e) : e.message, Math.max(0, e.moduleIndex))
    }
    const named = query.tags.filter((t) => t !== '*')
    if (named.length > 0) {
      const known = await searches.tags.idsOf(named)
      const unknown = named.find((t) => !known.has(t))
      if (unknown !== undefined) return refuse(`Could not match tag spec ${unknown} against any known tags`, 0)
    }
    const { MinZoomWindow: _, ...hints } = queryHints(query)
    return { Sequence: sequence, GoodQuery: true, ParsedQuery: query.text, RawQuery: text, ModuleIndex: 0, ...hints }
  }

  /** `search` without OK: StartSearchRequest → StartSearchResponse; the search runs from here on. */
  async function launch(c: Conn, data: Msg): Promise<void> {
    const raw = typeof data.SearchString === 'string' ? data.SearchString : ''
    const fail = (error: string) => send(c, { type: 'search', data: { Error: error, RawQuery: raw } })
    if (typeof data.SearchString !== 'string') return fail('SearchString must be a string')
    const time = (v: unknown) => (v === undefined || v === null || typeof v === 'string' ? parseTime(v) : undefined)
    const start = time(data.SearchStart)
    const end = time(data.SearchEnd)
    if (start === undefined) return fail('SearchStart must be an RFC 3339 time')
    if (end === undefined) return fail('SearchEnd must be an RFC 3339 time')
    const endRange = end || clock()
    const preview = data.Preview === true
    if (!preview && start >= endRange) return fail('SearchStart must be before SearchEnd')
    if (data.Metadata !== undefined && data.Metadata !== null) {
      try {
        checkJsonShape(JSON.stringify(data.Metadata), 'Metadata')
      } catch (e) {
        if (e instanceof ApiError) return fail(e.message)
        throw e
      }
    }
    let query
    try {
      query = await searches.parse(raw)
      admitQuery(auth, c.caller, query)
    } catch (e) {
      if (e instanceof QueryError || e instanceof ApiError) return fail(e.message)
      throw e
    }
    let s: Search
    try {
      // Preview (StartSearchRequest.Preview): the newest entries of the query's tags whatever the range asked.
      const startRange = preview ? await searches.previewStart(query.tags, endRange) : start
      // Not through the REST caller's own client: this socket is the client (closing it detaches).
      s = await searches.launch({
        uid: c.caller.uid,
        gid: c.caller.user.defaultGid ?? 0,
        client: c.client,
        clientExpires: c.caller.token?.expires ?? 0,
        clientKind: c.caller.session ? 'session' : 'token',
        userQuery: raw,
        query,
        start: startRange,
        end: endRange,
        background: data.Background === true,
        noHistory: data.NoHistory === true,
        metadata: data.Metadata ?? undefined,
      })
    } catch (e) {
      if (e instanceof ApiError) return fail(e.message)
      throw e
    }
    if (preview) markPreview(s)
    await cluster.sync()
    const subproto = `search${c.next++}`
    c.subprotos.set(subproto, s.record.id)
    const r = s.record
    const hints = searchHints(s)
    send(c, {
      type: 'search',
      data: {
        RawQuery: raw,
        SearchString: r.effectiveQuery,
        RenderModule: renderModuleOf(s),
        RenderCmd: renderModuleOf(s),
        OutputSearchSubproto: subproto,
        SearchID: r.id,
        SearchStartRange: formatTime(r.startRange),
        SearchEndRange: formatTime(r.endRange),
        Background: s.background,
        CollapsingIndex: hints?.CollapsingIndex ?? 0,
        Metadata: r.metadata ?? {},
        Addendum: data.Addendum ?? {},
        TimeZoomDisabled: hints?.TimeZoomDisabled ?? true,
        Tags: tagsOf(r.effectiveQuery),
        ModuleHints: hints?.ModuleHints ?? [],
      },
    })
  }

  /** `search` with OK: the client's StartSearchAck. OK false gives the search up (the socket leaves it). */
  async function accept(c: Conn, data: Msg): Promise<void> {
    const subproto = typeof data.OutputSearchSubproto === 'string' ? data.OutputSearchSubproto : ''
    const id = c.subprotos.get(subproto)
    if (id === undefined) return send(c, { type: 'search', data: { Error: `no search with OutputSearchSubproto ${JSON.stringify(subproto.slice(0, 64))} on this socket` } })
    if (data.OK !== true) {
      c.subprotos.delete(subproto)
      detach(c, id)
    }
  }

  /** `attach` {ID}: AttachSearchResponse; needs AttachSearch (an API token must hold it too). */
  async function attach(c: Conn, data: Msg): Promise<void> {
    const id = typeof data.ID === 'string' ? data.ID : typeof data.ID === 'number' ? String(data.ID) : ''
    const fail = (error: string) => send(c, { type: 'attach', data: { Error: error } })
    if (!/^\d{1,20}$/.test(id)) return fail('invalid search id: expected digits')
    try {
      auth.admit(c.caller, { key: 'AttachSearch' })
      if (cluster.shared && !c.internal && !searches.has(id)) {
        const owner = await cluster.remoteOwner(id)
        if (owner && (await attachRemote(c, id, owner.address))) return
        // Held by nobody, or by a replica that no longer answers: a saved search the caller may see (c.viewer, read
        // again before every request) is taken over here.
        await cluster.takeOver(id, c.viewer, owner?.owner)
      } else if (cluster.shared && !searches.has(id)) await cluster.takeOver(id, c.viewer)
      searches.attach(c.viewer, id, c.client, c.caller.token?.expires ?? 0)
      cluster.syncSoon()
    } catch (e) {
      if (e instanceof ApiError) return fail(e.message)
      throw e
    }
    const s = searches.viewable(c.viewer, id)
    let subproto = [...c.subprotos].find(([, sid]) => sid === id)?.[0]
    if (!subproto) {
      subproto = `search${c.next++}`
      c.subprotos.set(subproto, id)
    }
    send(c, { type: 'attach', data: { Subproto: subproto, RendererMod: renderModuleOf(s), RendererCmd: renderModuleOf(s), Info: searchInfo(s, clock()) } })
  }

  /** A request on a search's subprotocol. */
  async function request(c: Conn, type: string, id: string, data: Msg): Promise<void> {
    const req = data.ID
    const addendum = data.Addendum
    const answer = (body: Msg) => send(c, { type, data: body })
    let s: Search
    try {
      s = searches.viewable(c.viewer, id)
    } catch {
      // Gone, or no longer the caller's to see: the socket lets go of it.
      c.subprotos.delete(type)
      detach(c, id)
      return answer({ ID: RESP_ERROR, Error: `search ${id} no longer exists` })
    }
    const base = () => baseResponse(s, req as number, addendum)
    switch (req) {
      case REQ.CLOSE:
        c.subprotos.delete(type)
        detach(c, id)
        return answer({ ID: REQ.CLOSE, Addendum: addendum ?? {} })
      case REQ.ENTRY_COUNT:
        return answer(base())
      case REQ.SEARCH_DETAILS:
        return answer({ ...base(), SearchInfo: searchInfo(s, clock()) })
      case REQ.SEARCH_TAGS: {
        const wanted = tagsOf(s.record.effectiveQuery)
        const ids = wanted.includes('*') ? await searches.tags.all() : await searches.tags.idsOf(wanted)
        return answer({ ...base(), Tags: Object.fromEntries(ids) })
      }
      case REQ.GET_ENTRIES:
      case REQ.TS_RANGE:
      case REQ.GET_EXPLORE_ENTRIES:
      case REQ.EXPLORE_TS_RANGE:
        return answer(await entries(s, req, data))
      case REQ.STATS_SIZE:
      case REQ.STATS_RANGE:
      case REQ.STATS_GET:
      case REQ.STATS_GET_RANGE:
      case REQ.STATS_GET_SUMMARY:
      case REQ.STATS_GET_LOCATION:
      case REQ.STATS_GET_OVERVIEW:
        return answer({ ...base(), Stats: statsAnswer(s, req, data.Stats, clock()) })
    }
    return answer({ ID: RESP_ERROR, Error: `unknown request ID ${JSON.stringify(req)} (known: ${Object.values(REQ).join(', ')})` })
  }

  /**
   * Entries First ≤ n < Last of the results, in the renderer's shape. Renderers of entries (text, raw, hex, pcap)
   * answer the records as they are, with their enumerated values and the tag map; a time-range request (TS_RANGE,
   * EXPLORE_TS_RANGE: the client's zoom) counts First and Last within the entries whose TS lies in [StartTS, EndTS);
   * a zero or absent time leaves that side unbounded. The value renderers (table, chart, gauge, numbercard,
   * stackgraph) answer from every record within the range, re-bucketed to it (engine/render): a chart gives Last -
   * First points over the range. Last below First is refused.
   */
  async function entries(s: Search, req: number, data: Msg): Promise<Msg> {
    const range = isObject(data.EntryRange) ? data.EntryRange : {}
    const first = Number.isSafeInteger(range.First) && (range.First as number) >= 0 ? (range.First as number) : 0
    if (typeof range.Last === 'number' && range.Last < first)
      return { ID: RESP_ERROR, Addendum: data.Addendum ?? {}, Error: `EntryRange Last (${range.Last}) is before First (${first})` }
    const lastAsked = Number.isSafeInteger(range.Last) && (range.Last as number) > first ? (range.Last as number) : first + 1
    const last = Math.min(lastAsked, first + MAX_ENTRIES)
    const timed = req === REQ.TS_RANGE || req === REQ.EXPLORE_TS_RANGE
    const time = (v: unknown) => (v === undefined || v === null || typeof v === 'string' ? parseTime(v) : undefined)
    const from = timed ? time(range.StartTS) : 0
    const to = timed ? time(range.EndTS) : 0
    if (from === undefined || to === undefined)
      return { ID: RESP_ERROR, Addendum: data.Addendum ?? {}, Error: 'EntryRange StartTS and EndTS must be RFC 3339 times' }
    const ts = (v: unknown, fallback: number) => (typeof v === 'string' && v !== '' ? v : formatTime(fallback))
    const answeredRange = (taken: number) => ({
      First: first,
      Last: first + taken,
      StartTS: ts(range.StartTS, s.record.startRange),
      EndTS: ts(range.EndTS, s.record.endRange),
    })
    // Finished and EntryCount as they are before the read: an answer that says Finished holds every result (read
    // after the search ended), never a prefix read while it ran.
    const before = baseResponse(s, req, data.Addendum)
    const renderer = rendererOf(s)
    if (renderer.answer) {
      // A range that covers the whole search is no narrowing: the whole result, unzoomed.
      const narrowFrom = from > s.record.startRange ? from : 0
      const narrowTo = to !== 0 && to < s.record.endRange ? to : 0
      const a = await renderer.answer(
        {
          count: s.record.itemCount,
          read: (a, b) => searches.readRecords(s, a, b),
          readWithin: (lo, hi, a, b) => searches.readRecordsWithin(s, lo, hi, a, b),
        },
        { first, last, from: narrowFrom, to: narrowTo, start: from || s.record.startRange, end: to || s.record.endRange, updated: s.record.lastUpdate },
      )
      return { ...before, EntryRange: answeredRange(a.count), AdditionalEntries: a.more, ...a.extra, Entries: a.entries }
    }
    // Entries are paged newest first (the platform's default order of a search's entries: search/search.md), so
    // position 0 is the last stored record. A range that covers the whole search (the client's unzoomed view) is
    // read by position alone.
    const narrowed = from > s.record.startRange || (to !== 0 && to < s.record.endRange)
    const stored = s.record.itemCount
    const { lines, more } = narrowed
      ? await searches.readRecordsWithinFromEnd(s, from, to, first, last)
      : { lines: (await searches.readRecords(s, Math.max(0, stored - last), Math.max(0, stored - first))).reverse(), more: false }
    let bytes = 0
    let taken = 0
    while (taken < lines.length && (taken === 0 || bytes + lines[taken]!.length <= MAX_ANSWER_BYTES)) bytes += lines[taken++]!.length
    const records = lines.slice(0, taken).map((l) => JSON.parse(l) as Msg)
    const additional = narrowed ? taken < lines.length || more : first + taken < stored
    const base = { ...before, EntryRange: answeredRange(taken), AdditionalEntries: additional }
    const ids = await searches.tags.idsOf([...new Set(records.map((r) => String(r.Tag)))])
    const out = records.map((r) => ({
      TS: r.TS,
      Tag: ids.get(String(r.Tag)) ?? 0,
      SRC: r.SRC ?? '',
      Data: r.Data ?? '',
      // the stored record's values (engine/render/renderer.ts entryRecord), as the clients' EnumeratedPair list
      Enumerated: Array.isArray(r.Enumerated) ? r.Enumerated : [],
    }))
    // the tag map the clients read entries' Tag numbers by (text and raw: Tags)
    const tags = Object.fromEntries(ids)
    return req === REQ.GET_EXPLORE_ENTRIES || req === REQ.EXPLORE_TS_RANGE
      ? { ...base, Entries: out, Tags: tags, Explore: [] }
      : { ...base, Entries: out, Tags: tags }
  }

  // ---- /api/ws/stats

  async function statsMessages(subs: Set<string>, port: number | undefined): Promise<unknown[]> {
    described ??= await describeSystem()
    const replicas = await replicaKeys(cluster, engineKey(config.listenHost, port || config.listenPort), described)
    const key = replicas.self
    const others = replicas.all.filter((r) => r.key !== key)
    const out: unknown[] = []
    if (subs.has('ping')) {
      let engine = 'OK'
      try {
        await searches.ping()
      } catch (e) {
        engine = `ERROR: ${e instanceof Error ? e.message : String(e)}`
      }
      out.push({ type: 'ping', data: { States: { webserver: 'OK', [key]: engine, ...Object.fromEntries(others.map((r) => [r.key, 'OK'])) } } })
    }
    if (subs.has('sysDesc')) {
      described ??= await describeSystem()
      out.push({ type: 'sysDesc', data: { webserver: described, [key]: described, ...Object.fromEntries(others.map((r) => [r.key, r.description])) } })
    }
    if (subs.has('sysStats')) {
      described ??= await describeSystem()
      const mem = process.memoryUsage()
      const stats = {
        Uptime: Math.round(process.uptime()),
        TotalMemory: described.TotalMemoryMB * 1024 * 1024,
        ProcessHeapAllocation: mem.heapUsed,
        ProcessSysReserved: mem.rss,
        MemoryUsedPercent: Math.min(100, (mem.rss / (described.TotalMemoryMB * 1024 * 1024 || 1)) * 100),
        Disks: [],
        CPUUsage: 0,
        CPUCount: described.CPUCount,
        HostHash: '',
        Net: { Up: 0, Down: 0 },
        IO: [],
        VirtSystem: described.VirtSystem,
        VirtRole: described.VirtRole,
        BuildInfo: { Major: 5, Minor: 0, Point: 0, BuildDate: formatTime(0), BuildID: '' },
      }
      out.push({ type: 'sysStats', data: { Stats: { webserver: { Stats: stats }, [key]: { Stats: stats } } } })
    }
    if (subs.has('igstStats')) out.push({ type: 'igstStats', data: { Stats: {} } })
    if (subs.has('idxStats')) out.push({ type: 'idxStats', data: { Stats: { [key]: { UUID: '00000000-0000-0000-0000-000000000000', IndexStats: [] } } } })
    return out
  }

  const STATS_CATEGORIES = new Set(['ping', 'sysDesc', 'sysStats', 'igstStats', 'idxStats'])

  async function handleStatsMessage(c: Conn, message: Msg): Promise<void> {
    if (!Array.isArray(message.Subs))
      return send(c, errorMessage('malformed message: expected {"Subs": [categories]} (ping, sysDesc, sysStats, igstStats, idxStats)'))
    const names = message.Subs.filter((n): n is string => typeof n === 'string')
    const unknown = message.Subs.filter((n) => typeof n !== 'string' || !STATS_CATEGORIES.has(n))
    c.subs = new Set(names.filter((n) => STATS_CATEGORIES.has(n)))
    send(c, { Resp: 'ACK' })
    if (unknown.length > 0) send(c, errorMessage(`unknown categories ${JSON.stringify(unknown).slice(0, 200)} (ping, sysDesc, sysStats, igstStats, idxStats)`))
    const tick = async () => {
      if (c.closed || !c.subs || c.subs.size === 0) return
      if (!stillValid(c)) return c.raw.close(1008, 'the session or API token has expired')
      // A reader that does not keep up misses updates rather than making the server hold them.
      if (c.raw.getBufferedAmount() > WS_HIGH_WATER) return
      for (const m of await statsMessages(c.subs, c.port)) send(c, m)
    }
    if (c.timer) clearInterval(c.timer)
    c.timer = setInterval(() => void tick().catch(() => undefined), STATS_INTERVAL_MS)
    await tick()
  }

  /** The upgrade of a public socket: within the caller's count of sockets, then the subprotocol echoed. */
  function publicUpgrade(ctx: Parameters<typeof echoSubprotocol>[0]) {
    admitAnotherSocket((ctx as unknown as { caller: Caller }).caller)
    echoSubprotocol(ctx)
  }

  return new Elysia({ name: 'quarry-ws', detail: area('WebSockets') })
    .use(authGuard(auth))
    .post('/api/parse', async ({ body }) => (await parseAnswer(body as Msg)) as Static<typeof ParseSearchResponse>, {
      access: 'Search',
      body: ParseSearchRequest,
      response: ParseSearchResponse,
      detail: {
        summary: 'Check a query (the parse answer over REST)',
        description:
          'The Go client\'s ParseSearch: the same answer as `parse` on /api/ws/search. GoodQuery false with ParseError and the ' +
          'failing ModuleIndex when the query, a filter or a tag is refused (200 either way); Filters become inline filters of their module.',
      },
    })
    .ws('/api/ws/search', {
      access: 'Search',
      upgrade: publicUpgrade,
      detail: { summary: 'WebSocket: run and read searches', description: 'Launch, parse, attach to and read searches (the clients\' search protocol; docs/websocket.md). The JWT may come in Sec-WebSocket-Protocol.' },
      async open(ws) {
        await opened(ws as unknown as { raw: Raw; data: unknown }, 'search')
      },
      ...socketEvents,
    })
    // The same socket for another replica that relays its client's requests (server/cluster): the cluster secret
    // is checked before the upgrade (plugins/cluster refuses the request before routing as well), then the caller as
    // on the public route; every search is served here.
    .ws(INTERNAL_WS_SEARCH, {
      access: 'Search',
      upgrade(ctx) {
        const verdict = cluster.checkSecret(ctx.request.headers.get(SECRET_HEADER))
        if (verdict === 'missing') throw Errors.unauthenticated('internal route: the cluster secret is required')
        if (verdict === 'wrong') throw Errors.forbidden('internal route: wrong cluster secret')
        echoSubprotocol(ctx)
      },
      detail: { hide: true },
      async open(ws) {
        await opened(ws as unknown as { raw: Raw; data: unknown }, 'search', true)
      },
      ...socketEvents,
    })
    .ws('/api/ws/stats', {
      access: 'Stats',
      upgrade: publicUpgrade,
      detail: { summary: 'WebSocket: live system status', description: 'Every few seconds, for the subscribed categories (ping, sysDesc, sysStats, igstStats, idxStats). The JWT may come in Sec-WebSocket-Protocol.' },
      async open(ws) {
        await opened(ws as unknown as { raw: Raw; data: unknown }, 'stats')
      },
      ...socketEvents,
    })
}
