// Every answer a test gets through test/helpers.ts is checked against the OpenAPI document (GET /api/docs/json):
// its status must be documented for its operation, and a JSON body must match the documented schema of that
// status. So the document cannot drift from what the server answers in any test of the suite.
// The schemas are checked with Ajv (a dependency of @seriousme/openapi-schema-validator, the document's validator).
// Raw answers (JSON text a handler writes itself, and routes whose answers Elysia does not check in production, see
// server/http/openapi.ts rawAnswer) are checked closed: an object member the document does not name fails the test, as
// Elysia's own check would strip it from a checked answer.
import Ajv2020 from 'ajv/dist/2020.js'

type Json = Record<string, any>

interface Operation {
  method: string
  pattern: RegExp
  template: string
  op: Json
}

export interface Documented {
  /** What is wrong with this answer by the document, or undefined when it matches. */
  problem(method: string, url: string, status: number, contentType: string, body: unknown, upgrade?: boolean): string | undefined
}

/** The schema with every object that lists its properties closed to others (additionalProperties false). */
function closed(schema: any): any {
  if (Array.isArray(schema)) return schema.map(closed)
  if (!schema || typeof schema !== 'object') return schema
  const out: Json = Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, k === 'properties' ? Object.fromEntries(Object.entries(v as Json).map(([p, x]) => [p, closed(x)])) : closed(v)]))
  if (out.properties && out.additionalProperties === undefined && out.patternProperties === undefined && out.unevaluatedProperties === undefined)
    out.additionalProperties = false
  return out
}

/**
 * `raw`: the operations ("GET /api/info/whoami", paths as the document writes them) whose answers are checked closed.
 */
export function documented(doc: Json, raw: ReadonlySet<string> = new Set()): Documented {
  const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: false })
  const validators = new Map<string, ReturnType<typeof ajv.compile>>()
  const deref = (v: any): any => {
    if (Array.isArray(v)) return v.map(deref)
    if (!v || typeof v !== 'object') return v
    if (typeof v.$ref === 'string' && v.$ref.startsWith('#/')) {
      const target = v.$ref.slice(2).split('/').reduce((o: any, k: string) => o?.[k.replaceAll('~1', '/').replaceAll('~0', '~')], doc)
      if (target === undefined) throw new Error(`unresolved ${v.$ref}`)
      return deref(target)
    }
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, deref(x)]))
  }
  const operations: Operation[] = []
  for (const [template, item] of Object.entries(doc.paths as Json))
    for (const [method, op] of Object.entries(item as Json)) {
      const pattern = new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}/?$`)
      operations.push({ method: method.toUpperCase(), pattern, template, op })
    }

  return {
    problem(method, url, status, contentType, body, upgrade = false) {
      const path = new URL(url).pathname
      const found = operations.find((o) => (o.method === method || (method === 'HEAD' && o.method === 'GET')) && o.pattern.test(path))
      if (!found) return undefined // not an operation of the API (an unknown route's 404, the docs themselves)
      const where = `${method} ${found.template} answered ${status}`
      // An admitted WebSocket upgrade through app.handle, which has no listening server to upgrade with: Elysia's
      // bare 400. A real server answers 101 (test/process.test.ts and the WebSocket tests show it).
      if (upgrade && found.op.responses?.['101'] && status === 400 && contentType === '' && body === undefined) return undefined
      const response = found.op.responses?.[String(status)]
      if (!response) return `${where}, which its documented responses (${Object.keys(found.op.responses ?? {}).join(', ')}) do not list`
      const resolved = deref(response)
      const schema = resolved.content?.['application/json']?.schema
      if (!schema || method === 'HEAD') return undefined
      if (!/^application\/json\b/i.test(contentType)) {
        // an answer in another type the document lists for this status (a shipper's protobuf answer)
        const type = contentType.split(';')[0]!.trim().toLowerCase()
        if (type !== '' && resolved.content?.[type]) return undefined
        return `${where} with ${contentType || 'no content type'}, where the document says application/json`
      }
      const key = `${found.method} ${found.template} ${status}`
      let validate = validators.get(key)
      if (!validate) {
        const strict = raw.has(`${found.method} ${found.template}`) && status >= 200 && status < 300
        validators.set(key, (validate = ajv.compile(strict ? closed(deref(schema)) : deref(schema))))
      }
      if (validate(body)) return undefined
      return `${where} with a body the documented schema refuses: ${ajv.errorsText(validate.errors)}; body: ${JSON.stringify(body)?.slice(0, 300)}`
    },
  }
}
