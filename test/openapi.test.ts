// The OpenAPI document (GET /api/docs/json) and its page (GET /api/docs): a valid OpenAPI 3.1 document that says,
// for every route, what it takes (params, query, JSON/form/multipart bodies), what it answers (success and every
// refusal, with the {"Error"} body), who may call it (security and x-permission, from the guard's own rule) and
// which API area it belongs to. That every answer of the suite matches it is checked in test/helpers.ts.
import { describe, expect, test } from 'bun:test'
import { Validator } from '@seriousme/openapi-schema-validator'
import { AREAS } from '../server/http/openapi'
import { API_HEADERS } from '../server/http/headers'
import { PUBLIC_ROUTES } from '../server/rules/permissions'
import { DOCS_CSP, SCALAR_CACHE, SCALAR_PATH, SCALAR_VERSION } from '../plugins/system/docs'
import { documented } from './documented'
import { rawAnswers, serverPerTest } from './helpers'
import { apiRoutes } from './routes'

const setup = serverPerTest()

type Json = Record<string, any>

async function documentOf(s: Awaited<ReturnType<typeof setup>>): Promise<Json> {
  const res = await s.call('GET', '/api/docs/json')
  expect(res.status).toBe(200)
  return res.body
}

/** Every operation of the document with its "METHOD /path/{param}" key. */
function operations(doc: Json): [string, Json][] {
  return Object.entries(doc.paths as Json).flatMap(([path, item]) => Object.entries(item as Json).map(([m, op]) => [`${m.toUpperCase()} ${path}`, op] as [string, Json]))
}

const docKey = (key: string) => key.replace(/^WS /, 'GET ').replace(/:(\w+)/g, '{$1}')

describe('the OpenAPI document', () => {
  test('is a valid OpenAPI 3.1 document (@seriousme/openapi-schema-validator), public, with every route of the app', async () => {
    const s = await setup()
    const doc = await documentOf(s)
    const result = await new Validator().validate(doc)
    expect(result.errors).toBeUndefined()
    expect(result.valid).toBe(true)
    expect(doc.openapi).toBe('3.1.0')
    const documentedKeys = operations(doc).map(([k]) => k).sort()
    // the docs' own routes, the console's page and files, and the cluster's internal routes (replica to replica)
    const routeKeys = apiRoutes(s.app).filter((r) => !r.path.startsWith('/api/docs') && !r.path.startsWith('/api/internal/') && r.path !== '/' && !r.path.startsWith('/assets/')).map((r) => docKey(r.key)).sort()
    expect(documentedKeys).toEqual(routeKeys)
  })

  test('every request body is documented from the schema its route validates with: JSON, form where it is all strings, multipart with its parts', async () => {
    const s = await setup()
    const doc = await documentOf(s)
    const ops = new Map(operations(doc))
    for (const r of apiRoutes(s.app)) {
      const op = ops.get(docKey(r.key))
      if (!op) continue
      if (r.upload) {
        const form = op.requestBody?.content?.['multipart/form-data']?.schema
        expect({ route: r.key, file: form?.properties?.file }).toEqual({ route: r.key, file: expect.objectContaining({ type: 'string', format: 'binary' }) })
      } else if (r.body) {
        expect({ route: r.key, types: Object.keys(op.requestBody?.content ?? {}) }).toEqual({ route: r.key, types: expect.arrayContaining(['application/json']) })
        expect(op.requestBody.content['application/json'].schema).toBeObject()
      } else {
        expect({ route: r.key, requestBody: op.requestBody }).toEqual({ route: r.key, requestBody: undefined })
      }
    }
    // what a newcomer needs to create a resource (the first guess got "ResourceName: is required")
    const resource = ops.get('POST /api/resources')!.requestBody
    expect(resource.required).toBe(true)
    expect(resource.content['application/json'].schema.required).toContain('ResourceName')
    const login = ops.get('POST /api/login')!.requestBody.content
    expect(Object.keys(login).sort()).toEqual(['application/json', 'application/x-www-form-urlencoded'])
    expect(login['application/x-www-form-urlencoded'].schema.required).toEqual(['User', 'Pass'])
    const upload = ops.get('POST /api/files')!.requestBody.content['multipart/form-data'].schema
    expect(Object.keys(upload.properties).sort()).toEqual(['desc', 'file', 'guid', 'meta', 'name'])
    expect(upload.required).toEqual(['file'])
    const archive = ops.get('POST /api/searchctrl/import')!.requestBody.content['multipart/form-data'].schema
    expect(Object.keys(archive.properties).sort()).toEqual(['BatchInfo', 'BatchName', 'GID', 'file'])
    // a body whose members are all optional may be empty (docs/api.md "Conventions")
    expect(ops.get('PUT /api/groups/{gid}')!.requestBody.required).toBe(false)
  })

  test('security and x-permission come from the rule each route\'s guard enforces: sessions only, tokens too, or public', async () => {
    const s = await setup()
    const doc = await documentOf(s)
    const ops = new Map(operations(doc))
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['apiToken', 'jwt', 'jwtCookie'])
    expect(doc.components.securitySchemes.apiToken).toMatchObject({ type: 'apiKey', in: 'header', name: 'Service-Token' })
    expect(doc.components.securitySchemes.jwt).toMatchObject({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' })
    const seen = new Set<string>()
    for (const r of apiRoutes(s.app)) {
      const op = ops.get(docKey(r.key))
      if (!op) continue
      const schemes = (op.security as Json[]).map((alt) => Object.keys(alt).join('+')).sort()
      const expected =
        r.permission === undefined ? [] : r.permission === 'session' || r.permission === 'admin' ? ['jwt'] : ['apiToken', 'jwt']
      if (r.cookie) expected.push('jwtCookie')
      expect({ route: r.key, permission: op['x-permission'], schemes }).toEqual({ route: r.key, permission: r.permission, schemes: expected.sort() })
      expect(PUBLIC_ROUTES.has(r.key)).toBe(r.permission === undefined)
      seen.add(r.permission === undefined ? 'public' : expected.includes('apiToken') ? 'token' : 'session')
    }
    expect([...seen].sort()).toEqual(['public', 'session', 'token'])
    expect(ops.get('POST /api/users')!.description).toContain('never an API token')
    expect(ops.get('GET /api/users')!.description).toContain('an API token that lists ListUsers')
  })

  test('every operation lists its refusals with the {"Error"} body: 401 where it needs a credential, 500 everywhere', async () => {
    const s = await setup()
    const doc = await documentOf(s)
    expect(doc.components.schemas.Error).toMatchObject({ type: 'object', required: ['Error'], properties: { Error: { type: 'string' } } })
    let refusals = 0
    for (const [key, op] of operations(doc)) {
      const statuses = Object.keys(op.responses)
      expect({ key, has500: statuses.includes('500') }).toEqual({ key, has500: true })
      expect({ key, has401: statuses.includes('401') }).toEqual({ key, has401: op.security.length > 0 || key === 'GET /metrics' })
      for (const status of statuses.filter((st) => /^[45]/.test(st))) {
        const response = op.responses[status]
        if (!response.$ref) continue // login's own refusal bodies and readiness's 503
        refusals++
        const target = doc.components.responses[response.$ref.replace('#/components/responses/', '')]
        expect({ key, status, schema: target?.content['application/json'].schema }).toEqual({ key, status, schema: { $ref: '#/components/schemas/Error' } })
      }
    }
    expect(refusals).toBeGreaterThan(300)
  })

  test('one tag per API area, each with its sentence; every operation in exactly one, with a short summary', async () => {
    const s = await setup()
    const doc = await documentOf(s)
    expect(doc.tags).toEqual(Object.entries(AREAS).map(([name, description]) => ({ name, description })))
    const used = new Set<string>()
    for (const [key, op] of operations(doc)) {
      expect({ key, tags: op.tags?.length }).toEqual({ key, tags: 1 })
      expect(Object.keys(AREAS)).toContain(op.tags[0])
      used.add(op.tags[0])
      expect({ key, summary: op.summary.length <= 60 && /^[A-Z]/.test(op.summary) }).toEqual({ key, summary: true })
    }
    expect([...used].sort()).toEqual(Object.keys(AREAS).sort())
  })

  test('an answer the document does not describe is caught: an unlisted status, a body its schema refuses', async () => {
    const s = await setup()
    const check = documented(await documentOf(s))
    const json = 'application/json;charset=utf-8'
    const whoami = (await s.call('GET', '/api/info/whoami', { jwt: s.adminJwt })).body
    expect(check.problem('GET', 'http://localhost/api/info/whoami', 200, json, whoami)).toBeUndefined()
    expect(check.problem('GET', 'http://localhost/api/info/whoami/', 401, json, { Error: 'x' })).toBeUndefined()
    expect(check.problem('GET', 'http://localhost/api/info/whoami', 200, json, { ...whoami, UID: 'one' })).toContain('schema refuses')
    expect(check.problem('GET', 'http://localhost/api/info/whoami', 409, json, { Error: 'x' })).toContain('do not list')
    expect(check.problem('GET', 'http://localhost/api/users/7', 404, json, { Message: 'x' })).toContain('schema refuses')
    expect(check.problem('GET', 'http://localhost/api/users/7', 200, 'text/plain', 'x')).toContain('where the document says application/json')
  })

  test('raw answers (no production schema check) are checked closed: a member the document does not name fails', async () => {
    const s = await setup()
    const raw = rawAnswers(s.app.routes)
    // whoami writes its JSON itself (bench/README.md), as the dashboard and library routes do
    expect(raw).toContain('GET /api/info/whoami')
    expect(raw).toContain('GET /api/dashboards/{id}')
    const json = 'application/json;charset=utf-8'
    await s.createGroup('ops', [1])
    const whoami = (await s.call('GET', '/api/info/whoami', { jwt: s.adminJwt })).body
    expect(whoami.Groups).toHaveLength(1)
    const closed = documented(await documentOf(s), raw)
    expect(closed.problem('GET', 'http://localhost/api/info/whoami', 200, json, whoami)).toBeUndefined()
    expect(closed.problem('GET', 'http://localhost/api/info/whoami', 200, json, { ...whoami, PasswordHash: 'x' })).toContain('schema refuses')
    expect(closed.problem('GET', 'http://localhost/api/info/whoami', 200, json, { ...whoami, Groups: [{ ...whoami.Groups[0], Members: [] }] }))
      .toContain('schema refuses')
  })
})

describe('the docs page', () => {
  test('GET /api/docs: the Scalar page, public, loading only same-origin scripts and the document, under its own CSP', async () => {
    const s = await setup()
    const res = await s.call('GET', '/api/docs')
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toStartWith('text/html')
    // every script element is the vendored bundle on this origin or inline (admitted by hash): no CDN
    const sources = [...res.text.matchAll(/<script\b[^>]*\bsrc="([^"]*)"/g)].map((m) => m[1])
    expect(sources).toEqual([SCALAR_PATH])
    expect(SCALAR_PATH).toBe(`/api/docs/scalar-${SCALAR_VERSION}.js`)
    expect(res.text).toContain('"url":"/api/docs/json"')
    const csp = res.headers.get('content-security-policy')!
    expect(csp).toBe(DOCS_CSP)
    // scripts: this origin and the page's own inline element only; requests to this origin only
    expect(csp).toMatch(/script-src 'self'( 'sha256-[A-Za-z0-9+/]+=*')+$/)
    const inline = [...res.text.matchAll(/<script(?![^>]*\bsrc=)[^>]*>([\s\S]*?)<\/script>/g)].map((m) => m[1]!)
    expect(csp.split("script-src 'self' ")[1]!.split(' ')).toEqual(inline.map((body) => `'sha256-${new Bun.CryptoHasher('sha256').update(body).digest('base64')}'`))
    expect(csp).not.toContain('http')
    expect(csp).not.toContain("'unsafe-eval'")
    expect(csp).toContain("connect-src 'self'")
    expect(csp).toContain("frame-ancestors 'none'")
    // the other security headers stay as on every answer
    for (const name of ['x-content-type-options', 'x-frame-options', 'referrer-policy', 'cache-control'])
      expect({ name, value: res.headers.get(name) }).toEqual({ name, value: API_HEADERS[name]! })
    // the document itself keeps the API's policy
    expect((await s.call('GET', '/api/docs/json')).headers.get('content-security-policy')).toBe(API_HEADERS['content-security-policy']!)
  })

  test('the page hides what cannot work offline, runs no eval under its CSP and asks for no /favicon.ico', async () => {
    const s = await setup()
    const page = (await s.call('GET', '/api/docs')).text
    const configuration = JSON.parse(/data-configuration='([^']*)'/.exec(page)![1]!)
    expect(configuration).toMatchObject({ agent: { disabled: true }, mcp: { disabled: true }, showDeveloperTools: 'never' })
    const bundle = await Bun.file(new URL('../vendor/scalar/standalone.js', import.meta.url)).text()
    // the bundle's configuration schema knows these switches (a Scalar update that renames one fails here)
    expect(bundle).toContain('agent:w(C({key:w(S()),disabled:w(ue())')
    expect(bundle).toContain('disabled:w(ue(),{typeComment:`When true, disables the MCP integration`})')
    expect(bundle).toContain('showDeveloperTools:_e([T(`localhost`),T(`always`),T(`never`)]')
    // the bundle's one use of Function or eval is Zod's probe, skipped when its global configuration says jitless,
    // which an inline script sets before the bundle's script element runs
    const evals = [...bundle.matchAll(/(?<![\w$.])(?:new\s+)?(?:Function|eval)\s*\(/g)]
    expect(evals).toHaveLength(1)
    expect(bundle.slice(evals[0]!.index! - 200, evals[0]!.index!)).toContain('if(vJ.jitless||')
    expect(bundle).toContain('vJ=globalThis.__zod_globalConfig')
    const jitless = page.indexOf('<script>globalThis.__zod_globalConfig = { jitless: true }</script>')
    expect(jitless).toBeGreaterThan(0)
    expect(jitless).toBeLessThan(page.indexOf(`<script src="${SCALAR_PATH}"`))
    // an empty icon of its own (img-src admits data:): a browser asks for no /favicon.ico
    expect(page).toContain('<link rel="icon" href="data:,">')
    expect(DOCS_CSP).toContain("img-src 'self' data:")
  })

  test('GET /api/docs/scalar-VERSION.js: the vendored bundle, byte for byte, public, as JavaScript, cached for good', async () => {
    const s = await setup()
    const res = await s.app.handle(new Request(`http://localhost${SCALAR_PATH}`))
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8')
    expect(res.headers.get('cache-control')).toBe(SCALAR_CACHE)
    expect(res.headers.get('x-content-type-options')).toBe('nosniff')
    const served = new Uint8Array(await res.arrayBuffer())
    const vendored = new Uint8Array(await Bun.file(new URL('../vendor/scalar/standalone.js', import.meta.url)).arrayBuffer())
    expect(served.length).toBe(vendored.length)
    expect(Buffer.compare(served, vendored)).toBe(0)
    expect(new TextDecoder().decode(served.subarray(0, 12))).toBe('(function(){')
    // another version's path is no route
    expect((await s.call('GET', '/api/docs/scalar-0.0.0.js')).status).toBe(404)
  })
})
