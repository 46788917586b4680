// Request bodies: one parser for the whole API that enforces the body size limit while reading (also for
// bodies without Content-Length) and applies the wire rules of decisions §1: an empty JSON body is a body
// of nothing, login forms arrive as application/x-www-form-urlencoded, and JSON is JSON whatever its type.
// Multipart bodies are left to the routes that take uploads.
import { Elysia } from 'elysia'
import { Errors } from './errors'
import { MAX_JSON_DEPTH, jsonShapeProblem } from './json-shape'

const rawBodies = new WeakMap<Request, string>()

/**
 * Routes whose JSON body is no object: any JSON value (preferences are stored as sent, search metadata is any
 * JSON) or an array (ingest; Elysia would quietly turn the JSON string `""` into `[]`, found by the
 * generated-input test). Every other JSON body must be an object: Elysia would quietly turn `[]`, `"s"` or `5`
 * into `{}` for a schema whose fields are all optional.
 */
const BODY_SHAPES: Record<string, 'any' | 'array'> = {
  '/api/users/:id/preferences': 'any',
  '/api/searchctrl/:id/save': 'any',
  '/api/ingest/json': 'array',
}

/** The body text of a request exactly as sent, for routes that must store it verbatim. */
export function rawBody(request: Request): string {
  return rawBodies.get(request) ?? ''
}

async function readLimited(request: Request, limit: number): Promise<string> {
  const declared = Number(request.headers.get('content-length') ?? 0)
  if (declared > limit) throw Errors.tooLarge(limit)
  if (!request.body) return ''
  const chunks: Uint8Array[] = []
  let size = 0
  for await (const chunk of request.body) {
    size += chunk.byteLength
    if (size > limit) throw Errors.tooLarge(limit)
    chunks.push(chunk)
  }
  return new TextDecoder().decode(Buffer.concat(chunks))
}

export function bodyPlugin(limit: number) {
  return new Elysia({ name: 'quarry-body' }).onParse({ as: 'global' }, async ({ request, contentType, route }) => {
    const type = contentType.split(';')[0]!.trim().toLowerCase()
    if (type === 'multipart/form-data') return undefined
    const text = await readLimited(request, limit)
    rawBodies.set(request, text)
    // An empty body, of any type or none, is a body of nothing: routes whose fields are all optional (refresh,
    // updates) take it as "no change"; routes with required fields say which one is missing.
    if (text.trim() === '') return {}
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
      let value: unknown
      try {
        value = JSON.parse(text)
      } catch {
        throw Errors.badRequest('malformed JSON body')
      }
      const shape = Object.hasOwn(BODY_SHAPES, route) ? BODY_SHAPES[route] : 'object'
      if (shape === 'array' && !Array.isArray(value)) throw Errors.badRequest('the request body must be a JSON array')
      if (shape === 'object' && (typeof value !== 'object' || value === null || Array.isArray(value)))
        throw Errors.badRequest('the request body must be a JSON object')
      return value
    }
    return Object.fromEntries(new URLSearchParams(text))
  })
}
