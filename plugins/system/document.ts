// The OpenAPI document of the assembled app (GET /api/docs/json, plugins/system/docs.ts), generated out of what each
// route declares and the server enforces: its params, query and body schemas (the ones Elysia validates with), the
// form of an upload route (multipartUpload), its success and refusal schemas (`response`), the access rule its guard
// checks (accessOf: permission and accepted credentials) and its plugin's area (tag). The refusals every route of a
// kind can answer (401 without credentials, 400 for a bad request, ...) are derived here from the same declarations.
// Imported when the document is first asked for, not at start (the generator and node:http cost ~10 ms,
// bench/README.md).
import { STATUS_CODES } from 'node:http'
import type { AnyElysia } from 'elysia'
import { Kind, type TSchema } from '@sinclair/typebox'
import { toOpenAPISchema, unwrapSchema } from '@elysiajs/openapi/openapi'
import { type AccessSpec, CAPABILITIES } from '../../server/rules/permissions'
import { AREAS, ErrorBody } from '../../server/http/openapi'
import { uploadFormOf } from '../../server/upload/multipart'
import type { AssembledRoute } from '../../server/http/body'
import { accessOf } from '../auth/guard'
import pkg from '../../package.json'

type Json = Record<string, any>

/** What each refusal status means on this API (docs/api.md "Conventions"), shown once in components.responses. */
const REFUSALS: Record<number, [name: string, description: string]> = {
  400: ['BadRequest', 'Bad request: malformed JSON, a body, query or path value that breaks the schema, or a value the operation cannot take'],
  401: ['Unauthenticated', 'No credential, or an invalid, expired or ended JWT or API token (a download token outside the download routes too)'],
  403: ['Forbidden', 'Authenticated but not allowed: an API token without the permission (`Cap` names it), a token on a session-only or admin route, or no right to the item'],
  404: ['NotFound', 'No such item, or one the caller may not see'],
  409: ['Conflict', 'The name is taken, or the item is in a state that does not allow this'],
  413: ['TooLarge', 'The body is over the configured limit, or the write would go over the owner\'s storage quota (or the store\'s number of distinct ingest tags)'],
  415: ['UnsupportedMediaType', 'A multipart body on a route that takes JSON'],
  429: ['TooManyRequests', 'Too many requests of this kind for now; try again later'],
  500: ['InternalError', 'A fault of the server; the message holds a request id to find it in the log'],
  503: ['BlobStoreUnavailable', 'The blob store did not answer within QUARRY_BLOB_TIMEOUT; the message names it. Try again later'],
  507: ['InsufficientStorage', 'The server\'s disk is down to its free-space floor (QUARRY_MIN_FREE_SPACE): writes of stored data are refused'],
}

/** Methods whose requests the body parser reads (server/http/body.ts), with or without a body schema: 400, 413, 415. */
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

/** The credentials an access rule admits, as OpenAPI security requirements (alternatives). */
function securityOf(access: AccessSpec | undefined): Json[] {
  if (!access) return []
  const alternatives: Json[] = [{ jwt: [] }]
  if (access.key !== 'session' && access.key !== 'admin') alternatives.push({ apiToken: [] })
  if (access.cookie) alternatives.push({ jwtCookie: [] })
  return alternatives
}

/** One sentence on who may call an operation, from the same rule. */
function accessSentence(access: AccessSpec | undefined): string {
  if (!access) return 'Public: no credential needed.'
  const extra = [access.cookie ? ' The JWT may also come as cookie `token`.' : '', access.download ? ' The 3-second download token of GET /api/login/tmptoken works too.' : ''].join('')
  switch (access.key) {
    case 'admin':
      return `Admins only, with a login session (never an API token).${extra}`
    case 'session':
      return `A login session (JWT); API tokens are refused.${extra}`
    case 'self':
      return `Any authenticated caller: a login session or any API token.${extra}`
    default:
      return `Permission \`${access.key}\` (${CAPABILITIES[access.key].Desc.toLowerCase()}): a login session, or an API token that lists ${access.key}.${extra}`
  }
}

/** The statuses every route of a kind can refuse with, from what it declares. */
function derivedRefusals(r: AssembledRoute, access: AccessSpec | undefined, upload: boolean): number[] {
  const hooks = r.hooks as Json
  const takesBody = BODY_METHODS.has(r.method)
  const out: number[] = []
  if (hooks.params || hooks.query || hooks.body || takesBody) out.push(400)
  if (access) out.push(401)
  // a 'self' route admits every authenticated caller; a cookie needs a same-origin request (403 otherwise)
  if (access && (access.key !== 'self' || access.cookie)) out.push(403)
  // a WebSocket route matches upgrade requests only: a plain GET finds no route
  if (r.path.includes(':') || r.method === 'WS') out.push(404)
  if (takesBody) out.push(413)
  if (takesBody && !upload) out.push(415)
  // a user holds a bounded number of open WebSockets (plugins/ws)
  if (r.method === 'WS' && access) out.push(429)
  out.push(500)
  // the blob store did not answer within QUARRY_BLOB_TIMEOUT (server/blob/guard.ts), for any route that needed it
  if (r.method !== 'WS') out.push(503)
  return out
}

const schemaOf = (s: TSchema) => unwrapSchema(s as never) as Json

/**
 * A response schema as the server writes it: Elysia's t.Integer and t.Numeric also accept a numeric string on
 * input (`{"UID": "5"}`), which the document keeps for request bodies; an answer always holds the number.
 */
function asWritten(v: any): any {
  if (Array.isArray(v)) return v.map(asWritten)
  if (!v || typeof v !== 'object') return v
  const alternatives = v.anyOf
  if (Array.isArray(alternatives) && alternatives.length === 2) {
    const [text, number] = alternatives
    if (text?.type === 'string' && (text.format === 'integer' || text.format === 'numeric') && (number?.type === 'integer' || number?.type === 'number')) {
      const { anyOf: _, ...rest } = v
      return asWritten({ ...rest, ...number })
    }
  }
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, asWritten(x)]))
}

/** An object schema whose members are all plain strings: its body may also come as form fields. */
function formable(schema: Json): boolean {
  if (schema.type !== 'object' || !schema.properties) return false
  return Object.values(schema.properties as Record<string, Json>).every((p) => p.type === 'string')
}

export function buildDocument(app: AnyElysia): Json {
  const { paths } = toOpenAPISchema(app) as unknown as { paths: Record<string, Record<string, Json>> }
  const used = new Set<number>()
  for (const r of app.routes as unknown as AssembledRoute[]) {
    const hooks = r.hooks as Json
    if (hooks.detail?.hide) continue
    const path = r.path.replace(/:([^/]+)/g, '{$1}')
    const item = paths[path]
    const generated = r.method.toLowerCase()
    if (!item?.[generated]) throw new Error(`the OpenAPI generator left out ${r.method} ${r.path}`)
    const op = item[generated]!
    // A WebSocket route is reached by the GET of its upgrade; OpenAPI has no method WS.
    const method = r.method === 'WS' ? 'get' : generated
    if (method !== generated) {
      delete item[generated]
      item[method] = op
    }
    const access = accessOf(hooks as AssembledRoute['hooks'])
    const parse: Json[] = Array.isArray(hooks.parse) ? hooks.parse : hooks.parse ? [hooks.parse] : []
    const form = parse.map((h) => uploadFormOf(h.fn)).find((f) => f !== undefined)

    op.security = securityOf(access)
    if (access) op['x-permission'] = access.key
    delete op['x-cookie']
    op.description = [op.description, accessSentence(access)].filter(Boolean).join('\n\n')
    if (!op.tags?.length) throw new Error(`${r.method} ${r.path} has no API area (its plugin declares none)`)

    // Request bodies. Elysia's generator lists the content types of a route's parse hooks, and every route's
    // parser is ours (server/http/body.ts: JSON, or form fields; uploads stream multipart themselves), so it found none.
    if (form) {
      op.requestBody = { required: true, content: { 'multipart/form-data': { schema: schemaOf(form) } } }
    } else if (hooks.body) {
      const schema = schemaOf(hooks.body)
      const content: Json = { 'application/json': { schema } }
      if (formable(schema)) content['application/x-www-form-urlencoded'] = { schema }
      // an empty body is a body of nothing (docs/api.md "Conventions"): required only when the schema requires members
      const required = schema.type === 'object' ? (schema.required?.length ?? 0) > 0 : schema.type !== undefined
      op.requestBody = { required, content }
    }

    // Responses: the declared ones (success and refusals), then the refusals derived from the route's kind.
    const declared: Json = hooks.response && typeof hooks.response === 'object' && !(Kind in hooks.response) ? hooks.response : {}
    const responses: Json = {}
    for (const [status, response] of Object.entries((op.responses ?? {}) as Json)) {
      if (declared[status] === ErrorBody) {
        responses[status] = { $ref: `#/components/responses/${REFUSALS[Number(status)]![0]}` }
        used.add(Number(status))
      } else {
        const description = response.description?.startsWith('Response for status') ? (status.startsWith('2') ? 'Success' : (STATUS_CODES[Number(status)] ?? `Status ${status}`)) : response.description
        responses[status] = { ...asWritten(response), description }
      }
    }
    const raw = op['x-raw-answer'] as TSchema | undefined
    delete op['x-raw-answer']
    if (raw) responses['200'] = { description: 'Success', content: { 'application/json': { schema: asWritten(schemaOf(raw)) } } }
    if (r.method === 'WS') responses['101'] = { description: 'Switching Protocols: the WebSocket is open' }
    else if (!Object.keys(responses).some((s) => s.startsWith('2'))) responses['200'] = { description: 'Success (see the description for the body)' }
    for (const status of derivedRefusals(r, access, form !== undefined)) {
      if (responses[status]) continue
      responses[status] = { $ref: `#/components/responses/${REFUSALS[status]![0]}` }
      used.add(status)
    }
    op.responses = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)))
  }

  const errorRef = { $ref: '#/components/schemas/Error' }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Quarry web API',
      version: pkg.version,
      description: [
        'The JSON-over-HTTP API of Quarry, a log and data search server. Bodies are JSON unless an operation says multipart or form;',
        'success is always 200 and every refusal is `{"Error": "..."}` with the status of its kind.',
        '',
        'Authentication: log in with `POST /api/login` and send the JWT as `Authorization: Bearer <JWT>` (scheme `jwt`),',
        'or send an API token (`POST /api/tokens`) as `Service-Token: <token>` (scheme `apiToken`) on the operations that accept tokens.',
        'Each operation names the permission it needs in `x-permission`: a permission name (an API token must list it),',
        '`self` (any authenticated caller, tokens included), `session` (a login session, never a token) or `admin` (an admin with a session).',
      ].join('\n'),
    },
    tags: Object.entries(AREAS).map(([name, description]) => ({ name, description })),
    paths,
    components: {
      schemas: { Error: schemaOf(ErrorBody) },
      responses: Object.fromEntries(
        [...used].sort().map((s) => [REFUSALS[s]![0], { description: REFUSALS[s]![1], content: { 'application/json': { schema: errorRef } } }]),
      ),
      securitySchemes: {
        jwt: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'The JWT of `POST /api/login` (a login session)' },
        apiToken: {
          type: 'apiKey',
          in: 'header',
          name: 'Service-Token',
          description: 'An API token (`POST /api/tokens`); only on operations whose permission it lists. `Gravwell-Token` is accepted as the same header.',
        },
        jwtCookie: { type: 'apiKey', in: 'cookie', name: 'token', description: 'The JWT (or the download token) as cookie `token`, on downloads and search import only' },
      },
    },
  }
}
