// Request bodies: one parser for the whole API, which is the first thing to touch a body on every route.
// Before it reads a byte it knows the route's rule (learned once from the assembled app, see BodyRules):
// - the caller is authenticated and admitted first (401/403 without reading the body), on every route that
//   needs it, so nobody without credentials can make the server read or hold anything;
// - multipart bodies are refused with 415 except on the upload routes, which stream them themselves after
//   that check (server/upload/multipart.ts); Elysia's own parser would buffer the whole form in memory;
// - every other body is read up to the route's limit and no further (413; a declared Content-Length over
//   it is refused unread), also for bodies without Content-Length; except on the shippers' protocol routes
//   (ownBody: NDJSON, concatenated JSON, gzip), which read and bound their own after the same caller check.
// Then the wire rules of docs/api.md "Conventions" apply: an empty JSON body is a body of nothing, login forms arrive
// as application/x-www-form-urlencoded, and JSON is JSON whatever its type.
import { Elysia } from 'elysia'
import { ApiError, Errors } from './errors'
import { uploadFormOf } from '../upload/multipart'
import { MAX_JSON_DEPTH, jsonShapeProblem } from './json-shape'
import type { Maybe } from '../store/maybe'

/** The JSON escape of U+0000 (case-insensitive hex), not preceded by a backslash that escapes its own backslash. */
const NUL_ESCAPE = /(?<!\\)(?:\\\\)*\\u0000/i
/** Any character String.prototype.trim would keep (the same set as \s): found at once, where trim() copies the body. */
const NOT_SPACE = /\S/

const rawBodies = new WeakMap<Request, string>()

/**
 * Routes whose JSON body is no object: any JSON value (preferences are stored as sent, search metadata is any
 * JSON) or an array (ingest; Elysia would quietly turn the JSON string `""` into `[]`, found by the
 * generated-input test). Every other JSON body must be an object: Elysia would quietly turn `[]`, `"s"` or `5`
 * into `{}` for a schema whose fields are all optional.
 */
const BODY_SHAPES: Record<string, 'any' | 'array' | 'bytes'> = {
  '/api/users/:id/preferences': 'any',
  '/api/searchctrl/:id/save': 'any',
  '/api/ingest/json': 'array',
  // Shippers' protocols (protobuf, snappy, gzip): the body as read, a Uint8Array, which the route decodes itself.
  '/api/ingest/otlp/v1/logs': 'bytes',
  '/api/ingest/loki/api/v1/push': 'bytes',
}

/** Largest body of a route that answers without authentication (the login: a user name and a password). */
export const PUBLIC_BODY_LIMIT = 64 * 1024

/** What the upload routes' handlers get as `body`: nothing was read; they stream `request.body` themselves. */
export const UNREAD = 'streamed'

/** The parse hooks of routes that read their own body (see ownBody). */
const ownBodies = new WeakSet<object>()

/**
 * Marks a route that reads its own body (`parse: ownBody()`): the shippers' protocols (NDJSON, concatenated JSON,
 * gzip). The body parser admits the caller and leaves the body unread, like an upload's; the handler must bound what
 * it reads (server/ingest/elastic-hec-body.ts). A new hook per route: Elysia writes into the hook objects it is given.
 */
export function ownBody() {
  const leave = () => UNREAD
  ownBodies.add(leave)
  return leave
}

/** Whether a parse hook is ownBody's (the route reads its own body, not a multipart form). */
export function isOwnBody(parseHook: unknown): boolean {
  return typeof parseHook === 'function' && ownBodies.has(parseHook)
}

/** The body text of a request exactly as sent, for routes that must store it verbatim. */
export function rawBody(request: Request): string {
  return rawBodies.get(request) ?? ''
}

/**
 * A request's body, read whole up to `limit` bytes: a declared length past it is refused unread, a chunked body once
 * past it, a body that breaks off with 400. `refuse` makes the refusal (the catalogue's error by default; the shippers'
 * protocols make their own shape from the same status and words).
 */
export async function readLimited(
  request: Request,
  limit: number,
  refuse: (status: 400 | 413, message: string) => Error = (status, message) => new ApiError(status, message),
): Promise<Uint8Array> {
  const tooLarge = () => refuse(413, Errors.tooLarge(limit).message)
  const declared = Number(request.headers.get('content-length') ?? 0)
  if (declared > limit) throw tooLarge()
  if (!request.body) return new Uint8Array(0)
  // A declared length (within the limit) is read whole by Bun, natively: over HTTP the body cannot be longer than
  // it says. A tenth of the JSON ingest route's time went into reading the stream chunk by chunk (bench/README.md,
  // ingest). Checked again after the read for requests that are not from the wire (app.handle).
  if (request.headers.has('content-length') && !request.headers.has('transfer-encoding')) {
    let bytes: Uint8Array
    try {
      bytes = await request.bytes()
    } catch {
      throw refuse(400, 'the request body broke off')
    }
    if (bytes.byteLength > limit) throw tooLarge()
    return bytes
  }
  const chunks: Uint8Array[] = []
  let size = 0
  const reader = request.body.getReader()
  try {
    for (;;) {
      let next: Awaited<ReturnType<typeof reader.read>>
      try {
        next = await reader.read()
      } catch {
        throw refuse(400, 'the request body broke off')
      }
      if (next.done) break
      size += next.value.byteLength
      if (size > limit) throw tooLarge()
      chunks.push(next.value)
    }
  } finally {
    reader.releaseLock()
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)
}

/**
 * The check a route makes of its caller, run before its body is read: `authenticate` answers the caller (401 when
 * there is none), `admit` refuses one the route does not admit (403). The caller is left in the context as
 * `caller`, where the route's own guard finds it.
 */
export interface BodyGate<C = unknown> {
  authenticate(request: Request): Maybe<C>
  admit(caller: C, request: Request): void
}

interface RouteRule {
  /** Authentication and permission check, run before the body is read; absent on public routes. */
  gate?: BodyGate
  /** The route streams its body itself (an upload route): nothing is read here. */
  upload: boolean
  /** The most a body of this route may hold, in bytes (not for upload routes, which bound their own). */
  limit: number
}

/** The shape of an assembled route as Elysia lists it in `app.routes`. */
export interface AssembledRoute {
  method: string
  path: string
  hooks: { parse?: readonly { fn: unknown }[] | unknown } & Record<string, unknown>
}

/**
 * Every route's body rule, learned from the assembled app (`learn(app.routes)`), so that the one parser, which
 * Elysia runs before any route hook, knows what the route would check later. Until learn() has run every body is
 * refused with a 500: a route the table does not know is a fault of ours, never a reason to read unchecked.
 */
export class BodyRules {
  private readonly rules = new Map<string, RouteRule>()

  constructor(
    private readonly opts: {
      /** QUARRY_MAX_BODY_SIZE: the largest JSON or form body of an authenticated route. */
      limit: number
      /** The gate of a route, from its hooks (the auth guard's access rule); undefined for a public route. */
      gateOf: (hooks: AssembledRoute['hooks']) => BodyGate | undefined
    },
  ) {}

  learn(routes: readonly AssembledRoute[]): void {
    for (const r of routes) {
      const parse = Array.isArray(r.hooks.parse) ? (r.hooks.parse as { fn: unknown }[]) : []
      const gate = this.opts.gateOf(r.hooks)
      const rule = {
        gate,
        upload: parse.some((h) => uploadFormOf(h.fn) !== undefined || isOwnBody(h.fn)),
        limit: gate ? this.opts.limit : Math.min(this.opts.limit, PUBLIC_BODY_LIMIT),
      }
      // A WebSocket route is registered as method WS but reached by the GET of its upgrade (which has no body).
      this.rules.set(`${r.method === 'WS' ? 'GET' : r.method} ${r.path}`, rule)
      // Elysia never parses the body of a GET or HEAD, but a route with any parse hook (this one is global) is
      // compiled as an async function: a promise per request on the most frequent routes. Without it, a GET whose
      // hooks and handler are plain functions is answered at once (bench/README.md; test/hot-path.test.ts).
      if (r.method === 'GET' || r.method === 'HEAD') r.hooks.parse = []
    }
  }

  get(method: string, route: string): RouteRule {
    const rule = this.rules.get(`${method} ${route}`)
    if (!rule) throw new Error(`no body rule for ${method} ${route} (BodyRules.learn was not run on the assembled app)`)
    return rule
  }
}

export function bodyPlugin(rules: BodyRules) {
  // `ctx` is never passed on whole: Elysia reads the hook's source and would otherwise prepare every part of the
  // context (query, cookies, ...) on every request of every route, GETs included.
  return new Elysia({ name: 'quarry-body' }).onParse({ as: 'global' }, async (ctx) => {
    const { request, contentType, route } = ctx
    const rule = rules.get(request.method, route)
    if (rule.gate) {
      const found = rule.gate.authenticate(request)
      const caller = found instanceof Promise ? await found : found
      ;(ctx as { caller?: unknown }).caller = caller
      rule.gate.admit(caller, request)
    }
    if (rule.upload) return UNREAD
    const type = contentType.split(';')[0]!.trim().toLowerCase()
    if (type === 'multipart/form-data') throw Errors.unsupportedMediaType('multipart bodies are accepted only by the upload routes; send JSON')
    const bytes = await readLimited(request, rule.limit)
    const shape = Object.hasOwn(BODY_SHAPES, route) ? BODY_SHAPES[route] : 'object'
    if (shape === 'bytes') return bytes
    const text = new TextDecoder().decode(bytes)
    rawBodies.set(request, text)
    // An empty body, of any type or none, is a body of nothing: routes whose fields are all optional (refresh,
    // updates) take it as "no change"; routes with required fields say which one is missing.
    if (!NOT_SPACE.test(text)) return {}
    // Go servers of this API family decode JSON whatever the Content-Type says, so scripts that send JSON
    // with curl's default form type (or none) keep working; a real form body never starts with { or [.
    // Every other body is JSON too: no route takes plain text, and Elysia would quietly turn a text body
    // into {} for a schema whose fields are all optional (found by the generated-input test).
    const form = type === 'application/x-www-form-urlencoded' && !/^\s*[[{]/.test(text)
    if (!form) {
      // Before parsing: a body nested deeper than any stored member may be (plus the body object itself) is
      // refused in one linear pass. Past a few thousand levels the validation error of Elysia and TypeBox
      // recurses over the value and overflows the stack (a 500), and a stored member must not get that deep.
      if (jsonShapeProblem(text, MAX_JSON_DEPTH + 1, Number.POSITIVE_INFINITY))
        throw Errors.badRequest(`the request body is nested more than ${MAX_JSON_DEPTH + 1} levels deep`)
      // U+0000 in any string of the body: PostgreSQL's text cannot hold it (it would fail the query, a 500), so it
      // is refused here on every store alike. An odd run of backslashes before u0000 is the escape; an even one is
      // an escaped backslash followed by the letters. The regular expression (3 ms per MiB) runs only on a body that
      // holds the letters at all (a native search, 0.2 ms per MiB).
      if ((text.includes('\\u0000') || text.includes('\\U0000')) && NUL_ESCAPE.test(text)) throw Errors.badRequest('the request body holds a NUL character (\\u0000), which no text may contain')
      let value: unknown
      try {
        value = JSON.parse(text)
      } catch {
        throw Errors.badRequest('malformed JSON body')
      }
      if (shape === 'array' && !Array.isArray(value)) throw Errors.badRequest('the request body must be a JSON array')
      if (shape === 'object' && (typeof value !== 'object' || value === null || Array.isArray(value)))
        throw Errors.badRequest('the request body must be a JSON object')
      return value
    }
    const fields = Object.fromEntries(new URLSearchParams(text))
    if (Object.entries(fields).some(([k, v]) => k.includes('\0') || v.includes('\0')))
      throw Errors.badRequest('the request body holds a NUL character, which no text may contain')
    return fields
  })
}
