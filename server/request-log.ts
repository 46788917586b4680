// Per-request bookkeeping for the whole app: a request id (the client's X-Request-Id when it is a safe short
// token, else a new UUID; echoed in X-Request-Id and in 500 messages), `Connection: close` echoed when the client
// sent it, the request metrics (server/metrics.ts), and one JSON log line per request.
import { Elysia } from 'elysia'
import type { Server } from 'bun'
import type { Logger } from './log'
import { type Metrics, UNMATCHED_ROUTE } from './metrics'

/**
 * An incoming X-Request-Id is kept only when it is this: short, and of characters that cannot break a log line,
 * a header or a 500 message (UUIDs, ULIDs, hex trace ids and the like pass). Anything else is replaced.
 */
export const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/

/**
 * What the request log keeps from a request's arrival to its answer, on Elysia's context of the request itself (the
 * request points to it until its answer is counted, see CONTEXT): no per-request map entry, no object of its own.
 */
interface Tracked {
  requestId?: string
  /** performance.now() at arrival. */
  arrivedAt?: number
  /** Taken while the request is open: the peer is no longer known once the answer has gone. */
  peer?: string
}

/** The error plugin's answers, which Elysia does not hand to afterResponse hooks on every error path. */
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

/** The request id of a request (see REQUEST_ID), set on its answer's headers. */
function requestIdOf(request: Request, set: { headers: Record<string, string | number> }): string {
  const sent = request.headers.get('x-request-id')
  const rid = sent !== null && REQUEST_ID.test(sent) ? sent : crypto.randomUUID()
  set.headers['x-request-id'] = rid
  if (request.headers.get('connection')?.toLowerCase() === 'close') set.headers['connection'] = 'close'
  return rid
}

type Answered = Tracked & {
  request: Request
  set: { status?: number | string }
  route?: string
  responseValue?: unknown
  /** The error handler's answer (Elysia sets only this one on its error path). */
  response?: unknown
  caller?: unknown
}

type Arriving = Tracked & { request: Request; set: { headers: Record<string, string | number> }; server: Server<unknown> | null }

/** Where a request's Elysia context is found from the request itself, once it has arrived (see requestLogPlugin). */
const CONTEXT = Symbol('quarry request context')
type WithContext = Request & { [CONTEXT]?: Answered }

/**
 * Per-request bookkeeping in two places, neither of which costs an awaited hook, a map entry or a task:
 * - a request hook, first of the app's, gives the request its id (set on the answer's headers at once, so every
 *   answer, errors and 500 messages included, carries it) and keeps the context where the request points to it;
 * - a wrapper around the whole handler (Elysia's `wrap`, which sees each request and its final answer on every path:
 *   routes, errors, 404s) counts the answer and writes the request line once the answer is there. (An afterResponse
 *   hook did this before: Elysia runs it from a task of its own per request, which measured 3–5 µs of CPU per request,
 *   a fifth of a whole whoami.)
 * Answers given by a request hook before any route (the cluster's internal routes) are not counted, as before.
 */
export function requestLogPlugin(log: Logger, metrics: Metrics, clientOf: (server: Server<unknown> | null, request: Request) => string) {
  const logRequests = log.enabled('info')
  // Elysia reads a hook's source to decide what to prepare for every request: a hook that names `server` gets a
  // server getter defined on every context, one that passes the context on whole gets everything (query, cookies)
  // parsed. So two forms of the one hook, the peer's address read only when request lines are written; each touches
  // named parts of the context. Both are plain (not async) functions whose source returns no call, so Elysia calls
  // them without an await.
  const arrive = logRequests
    ? (ctx: Arriving) => {
        ctx.requestId = requestIdOf(ctx.request, ctx.set)
        ctx.peer = clientOf(ctx.server, ctx.request)
        ctx.arrivedAt = performance.now()
        ;(ctx.request as WithContext)[CONTEXT] = ctx as unknown as Answered
      }
    : (ctx: Arriving) => {
        ctx.requestId = requestIdOf(ctx.request, ctx.set)
        ctx.arrivedAt = performance.now()
        ;(ctx.request as WithContext)[CONTEXT] = ctx as unknown as Answered
      }

  /** Counts the request's answer and writes its line (once, whatever calls it twice). */
  function answered(request: WithContext): void {
    const ctx = request[CONTEXT]
    if (ctx === undefined) return
    request[CONTEXT] = undefined
    const arrivedAt = ctx.arrivedAt!
    // Answered by a request hook before any route and any error (cluster internal routes): not a request of the API.
    if (ctx.route === undefined && !errorAnswers.has(request)) return
    const ms = performance.now() - arrivedAt
    const status = typeof ctx.set.status === 'number' ? ctx.set.status : 200
    metrics.observeRequest(request.method, ctx.route || UNMATCHED_ROUTE, status, ms / 1000)
    if (!logRequests) return
    const caller = ctx.caller as { uid: number; token?: { id: string } } | undefined
    const length = request.headers.get('content-length')
    log.info('request', {
      rid: ctx.requestId,
      ip: ctx.peer ?? '',
      method: request.method,
      path: pathOf(request.url),
      status,
      ms: Math.round(ms * 100) / 100,
      in: length === null ? undefined : Number(length),
      out: bodyBytes(ctx.responseValue ?? ctx.response ?? errorAnswers.get(request)),
      ua: request.headers.get('user-agent') ?? undefined,
      uid: caller?.uid,
      // the token's id, never its secret
      token: caller?.token?.id,
    })
  }

  const plugin = new Elysia({ name: 'quarry-request-log' }).onRequest(arrive as (ctx: unknown) => void)
  // Only when request lines are written, which give the answer's size: a hook after the handler makes Elysia keep
  // the handler's answer on the context (responseValue), which it otherwise drops. (Errors note theirs themselves.)
  if (logRequests) plugin.onAfterHandle({ as: 'global' }, () => {})
  // Elysia calls a wrapper with the handler it wraps (the app's, or one route's on Bun's route table) for every
  // request and calls what it answers: so each handler's wrapped form is made once and kept.
  const wrapped = new Map<(request: Request) => unknown, (request: Request) => unknown>()
  const wrap = (handle: (request: Request) => unknown) => (request: Request) => {
    metrics.inFlight++
    let answer: unknown
    try {
      answer = handle(request)
    } catch (error) {
      metrics.inFlight--
      answered(request)
      throw error
    }
    if (answer instanceof Promise) return answer.then(
      (response) => {
        metrics.inFlight--
        answered(request)
        return response
      },
      (error) => {
        metrics.inFlight--
        answered(request)
        throw error
      },
    )
    metrics.inFlight--
    answered(request)
    return answer
  }
  const wrapper = (handle: (request: Request) => unknown) => {
    let w = wrapped.get(handle)
    if (w === undefined) wrapped.set(handle, (w = wrap(handle)))
    return w
  }
  plugin.wrap(wrapper as unknown as Parameters<typeof plugin.wrap>[0])
  return plugin
}
