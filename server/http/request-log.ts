// Per-request bookkeeping for the whole app: a request id (the client's X-Request-Id when it is a safe short
// token, else a new UUID; echoed in X-Request-Id and in 500 messages), `Connection: close` echoed when the client
// sent it, the request metrics (server/runtime/metrics.ts), and one JSON log line per request.
import { Elysia } from 'elysia'
import type { Server } from 'bun'
import type { Logger } from '../runtime/log'
import { type Metrics, UNMATCHED_ROUTE } from '../runtime/metrics'

/**
 * An incoming X-Request-Id is kept only when it is this: short, and of characters that cannot break a log line,
 * a header or a 500 message (UUIDs, ULIDs, hex trace ids and the like pass). Anything else is replaced.
 */
export const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/

/** The error plugin's answers, for the size of their request lines. */
const errorAnswers = new WeakMap<Request, unknown>()

/**
 * The path of a request. Bun gives a request without a Host header (HTTP/1.0, as a load balancer's health check
 * sends it) a URL that is only its path and query, which `new URL` refuses: such a request must be logged, not
 * throw (an error thrown after the response ended the server process).
 */
export function pathOf(url: string): string {
  if (url.startsWith('/')) {
    const end = url.search(/[?#]/)
    return end < 0 ? url : url.slice(0, end)
  }
  try {
    return new URL(url).pathname
  } catch {
    return url
  }
}

/** Called by the error plugin with the body it answers, so the request line can give its size. */
export function noteErrorAnswer<T>(request: Request, body: T): T {
  errorAnswers.set(request, body)
  return body
}

/** The size of an answer's body when it is known without reading it; undefined for streams. */
function bodyBytes(value: unknown): number | undefined {
  if (value === undefined || value === null) return 0
  if (typeof value === 'string') return Buffer.byteLength(value)
  if (value instanceof Response) {
    const length = value.headers.get('content-length')
    return length === null ? undefined : Number(length)
  }
  if (value instanceof Blob) return value.size
  if (value instanceof ArrayBuffer || ArrayBuffer.isView(value)) return value.byteLength
  if (value instanceof ReadableStream) return undefined
  if (typeof value === 'object' && 'code' in value && 'response' in value && value.constructor?.name === 'ElysiaCustomStatusResponse')
    return bodyBytes((value as { response: unknown }).response)
  // a JSON answer: Elysia serialises it the same way
  try {
    return Buffer.byteLength(JSON.stringify(value) ?? '')
  } catch {
    return undefined
  }
}

/** A request id for a request that has none yet (see REQUEST_ID). */
function newRequestId(request: Request): string {
  const sent = request.headers.get('x-request-id')
  return sent !== null && REQUEST_ID.test(sent) ? sent : crypto.randomUUID()
}

/**
 * The ids of requests that needed theirs before the answer (a 500 message names it); every other request gets its id
 * when its answer is there (requestLogPlugin), so most requests never enter this map.
 */
const earlyIds = new WeakMap<Request, string>()

/** The request id of a request, the same one its answer's X-Request-Id and its request line give. */
export function requestIdOf(request: Request): string {
  let rid = earlyIds.get(request)
  if (rid === undefined) earlyIds.set(request, (rid = newRequestId(request)))
  return rid
}

/** Who sent a request, noted by the auth guard for the request line (only while request lines are written). */
const callers = new WeakMap<Request, { uid: number; token?: { id: string } }>()
/** What a route's handler answered, noted for the request line's size (only while request lines are written). */
const handlerAnswers = new WeakMap<Request, unknown>()
let notingCallers = false

/** Called by the auth guard once a request's caller is known. A no-op unless some app writes request lines. */
export function noteCaller(request: Request, caller: { uid: number; token?: { id: string } }): void {
  if (notingCallers) callers.set(request, caller)
}

/**
 * The route (as declared, e.g. `/api/dashboards/:id`) a request was served by, for the metrics and the request line,
 * from the assembled app's route table (learn). Bun's route table sends each of its routes to a handler of its own:
 * their requests are matched once per handler (requestLogPlugin); the rest (404s, WebSockets, requests Elysia's own
 * router serves, in-process requests of the tests) on each request.
 */
export class RouteLabels {
  private exact = new Map<string, string>()
  private patterns: { method: string; re: RegExp; route: string }[] = []

  learn(routes: readonly { method: string; path: string }[]): void {
    const withParams: { method: string; re: RegExp; route: string; statics: number }[] = []
    for (const { method, path } of routes) {
      if (!/[:*]/.test(path)) {
        if (!this.exact.has(`${method} ${path}`)) this.exact.set(`${method} ${path}`, path)
        continue
      }
      const segments = path.split('/')
      const re = segments
        .map((seg) => (seg === '*' ? '.*' : seg.startsWith(':') ? (seg.endsWith('?') ? '[^/]*' : '[^/]+') : seg.replace(/[.+?^${}()|[\]\\]/g, '\\$&')))
        .join('/')
      withParams.push({ method, re: new RegExp(`^${re}$`), route: path, statics: segments.filter((seg) => seg !== '*' && !seg.startsWith(':')).length })
    }
    // As the routers choose: the most literal pattern first, a wildcard last.
    withParams.sort((a, b) => Number(a.route.endsWith('*')) - Number(b.route.endsWith('*')) || b.statics - a.statics)
    this.patterns = withParams
  }

  /** The route of `method` and `url`, or UNMATCHED_ROUTE. HEAD is served by GET routes, a WebSocket's upgrade is a GET. */
  of(method: string, url: string): string {
    let path = pathOf(url)
    if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1)
    const methods = method === 'HEAD' ? ['HEAD', 'GET'] : method === 'GET' ? ['GET', 'WS'] : [method]
    for (const m of methods) {
      const exact = this.exact.get(`${m} ${path}`) ?? this.exact.get(`ALL ${path}`)
      if (exact !== undefined) return exact
    }
    for (const m of methods)
      for (const p of this.patterns) if ((p.method === m || p.method === 'ALL') && p.re.test(path)) return p.route
    return UNMATCHED_ROUTE
  }
}

/**
 * Per-request bookkeeping for the whole app, in a wrapper around each handler (Elysia's `wrap`, which sees every
 * request and its final answer on every path: routes, errors, 404s), with no request hook: any request hook makes
 * Elysia build the URL and the query of every request and guard the hook with its own try (measured: 2–4 µs of CPU
 * of a 28 µs whoami over HTTP, bench/README.md). The wrapper gives the answer its X-Request-Id (and `Connection: close`
 * when the client sent it), counts it (server/runtime/metrics.ts) and writes its request line. A 500 message's id comes
 * from the same requestIdOf.
 * Call `learn` with the assembled app's routes before serving.
 */
export function requestLogPlugin(
  log: Logger,
  metrics: Metrics,
  clientOf: (server: Server<unknown> | null, request: Request) => string,
  serverOf: () => Server<unknown> | null | undefined,
) {
  const logRequests = log.enabled('info')
  if (logRequests) notingCallers = true
  const routes = new RouteLabels()

  /** Gives the answer its id, counts it and writes its line. */
  function answered(request: Request, answer: unknown, arrivedAt: number, route: string, peer: string): unknown {
    metrics.inFlight--
    const rid = earlyIds.get(request) ?? newRequestId(request)
    // A WebSocket whose upgrade succeeded has no Response: Bun answered 101 itself.
    let status = 101
    if (answer instanceof Response) {
      status = answer.status
      answer.headers.set('x-request-id', rid)
      if (request.headers.get('connection')?.toLowerCase() === 'close') answer.headers.set('connection', 'close')
    }
    const ms = performance.now() - arrivedAt
    metrics.observeRequest(request.method, route, status, ms / 1000)
    if (!logRequests) return answer
    const caller = callers.get(request)
    const length = request.headers.get('content-length')
    log.info('request', {
      rid,
      ip: peer,
      method: request.method,
      path: pathOf(request.url),
      status,
      ms: Math.round(ms * 100) / 100,
      in: length === null ? undefined : Number(length),
      out: bodyBytes(errorAnswers.has(request) ? errorAnswers.get(request) : handlerAnswers.get(request)),
      ua: request.headers.get('user-agent') ?? undefined,
      uid: caller?.uid,
      // the token's id, never its secret
      token: caller?.token?.id,
    })
    return answer
  }

  /** Failed without an answer (a fault in Elysia or a hook): counted as a 500, which Bun answers. */
  function failed(request: Request, arrivedAt: number, route: string, peer: string, error: unknown): never {
    answered(request, new Response(null, { status: 500 }), arrivedAt, route, peer)
    throw error
  }

  // Elysia calls the wrapper with the handler it wraps (the app's, or one route's on Bun's route table) for every
  // request and calls what it answers: so each handler's wrapped form is made once and kept.
  const wrap = (handle: (request: Request) => unknown) => {
    // A route of Bun's table serves one declared route: matched on its first request only. Bun gives such requests
    // their `params`; the app's own handler (everything else) gets requests without.
    let ownRoute: string | undefined
    return (request: Request) => {
      const arrivedAt = performance.now()
      const native = (request as { params?: unknown }).params !== undefined
      const route = native ? (ownRoute ??= routes.of(request.method, request.url)) : routes.of(request.method, request.url)
      // Taken while the request is open: the peer is no longer known once the answer has gone.
      const peer = logRequests ? clientOf(serverOf() ?? null, request) : ''
      metrics.inFlight++
      let answer: unknown
      try {
        answer = handle(request)
      } catch (error) {
        failed(request, arrivedAt, route, peer, error)
      }
      if (answer instanceof Promise)
        return answer.then(
          (response) => answered(request, response, arrivedAt, route, peer),
          (error) => failed(request, arrivedAt, route, peer, error),
        )
      return answered(request, answer, arrivedAt, route, peer)
    }
  }
  const wrapped = new Map<(request: Request) => unknown, (request: Request) => unknown>()
  const wrapper = (handle: (request: Request) => unknown) => {
    let w = wrapped.get(handle)
    if (w === undefined) wrapped.set(handle, (w = wrap(handle)))
    return w
  }
  const plugin = new Elysia({ name: 'quarry-request-log' })
  // Only when request lines are written, which give the answer's size: what the route's handler answered, before
  // Elysia makes it a Response. (Errors note theirs themselves.)
  if (logRequests) plugin.onAfterHandle({ as: 'global' }, ({ request, responseValue }) => {
    handlerAnswers.set(request, responseValue)
  })
  plugin.wrap(wrapper as unknown as Parameters<typeof plugin.wrap>[0])
  return { plugin, routes }
}
