// The wire rules every route follows (docs/api.md "Conventions") and the service routes of docs/api.md "Logging in and
// sessions".
import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { PUBLIC_ROUTES } from '../server/rules/permissions'
import type { TSchema } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { type TestServer, expectError, refused, serverPerTest } from './helpers'
import { apiRoutes } from './routes'

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d+Z$/
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

const setup = serverPerTest()

/** The access-log line of one request; it is written after the response, so wait for it briefly. */
async function requestLog(s: TestServer, rid: string): Promise<Record<string, unknown>[]> {
  const find = () => s.logs.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === 'request' && l.rid === rid)
  for (let i = 0; i < 100 && find().length === 0; i++) await Bun.sleep(5)
  await Bun.sleep(5) // a second line, if one were written, would come now
  return find()
}

const groupNames = async (s: TestServer) => ((await s.call('GET', '/api/groups', { jwt: s.adminJwt })).body as { Name: string }[]).map((g) => g.Name)

describe('paths', () => {
  test('every route answers with one trailing slash, without a redirect', async () => {
    const s = await setup()
    const u = await s.createUser()

    const whoami = await s.call('GET', '/api/info/whoami/', { jwt: u.jwt })
    expect(whoami.status).toBe(200)
    expect(whoami.body.UID).toBe(u.uid)
    expect((await s.call('GET', '/api/version/')).status).toBe(200)
    expect((await s.call('GET', '/api/test/')).status).toBe(200)
    expect((await s.call('GET', `/api/users/${u.uid}/`, { jwt: u.jwt })).body.UID).toBe(u.uid)

    const created = await s.call('POST', '/api/groups/', { jwt: s.adminJwt, json: { Name: 'slashed' } })
    expect(created.status).toBe(200)
    expect(created.headers.get('content-type')).toStartWith('application/json')
    const gid = created.body as number
    expect((await s.call('PUT', `/api/groups/${gid}/`, { jwt: s.adminJwt, json: { Desc: 'via slash' } })).status).toBe(200)
    expect((await s.call('GET', `/api/groups/${gid}/`, { jwt: s.adminJwt })).body.Desc).toBe('via slash')

    expect((await s.call('PUT', `/api/users/${u.uid}/lock/`, { jwt: s.adminJwt })).status).toBe(200)
    expect((await s.call('GET', `/api/users/${u.uid}`, { jwt: s.adminJwt })).body.Locked).toBe(true)
    expect((await s.call('DELETE', `/api/users/${u.uid}/lock/`, { jwt: s.adminJwt })).status).toBe(200)
    expect((await s.call('GET', `/api/users/${u.uid}`, { jwt: s.adminJwt })).body.Locked).toBe(false)

    const login = await s.call('POST', '/api/login/', { json: { User: u.User, Pass: u.Pass } })
    expect(login.status).toBe(200)
    expect((await s.call('DELETE', `/api/groups/${gid}/`, { jwt: s.adminJwt })).status).toBe(200)
    expect(await groupNames(s)).toEqual([])
    const logout = await s.call('PUT', '/api/logout/', { jwt: login.body.JWT })
    expect(logout.status).toBe(200)
    expect((await s.call('GET', '/api/testauth', { jwt: login.body.JWT })).status).toBe(401)
  })

  test('an unknown route or method is 404 with an Error body', async () => {
    const s = await setup()
    for (const [method, path] of [
      ['GET', '/api/nope'],
      ['GET', '/api/nope/'],
      ['POST', '/api/info/whoami/extra'],
      ['POST', '/'],
      ['GET', '/index.html'],
      ['PATCH', '/api/groups'],
      ['GET', '/api/info/whoami//'],
    ] as const)
      expectError(await s.call(method, path, { jwt: s.adminJwt }), 404)
    expectError(await s.call('GET', '/api/nope'), 404)
  })
})

describe('request bodies', () => {
  test('a NUL character (U+0000) in any body string is 400 on every store, and a NUL in a path is a 4xx, never a 500', async () => {
    const s = await setup()
    const u = await s.createUser()
    const json = { 'content-type': 'application/json' }
    await refused(s, 400, 'POST', '/api/dashboards', { jwt: u.jwt, body: String.raw`{"Name":"d","Description":"a\u0000b"}`, headers: json })
    await refused(s, 400, 'POST', '/api/library', { jwt: u.jwt, body: String.raw`{"Name":"n","Query":"tag=x\u0000"}`, headers: json })
    await refused(s, 400, 'PUT', `/api/users/${u.uid}/preferences`, { jwt: u.jwt, body: String.raw`{"theme":"\u0000"}`, headers: json })
    // the form login: a NUL user name is refused before any lookup (PostgreSQL would fail the query)
    const login = await s.call('POST', '/api/login', { body: 'User=ad%00min&Pass=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } })
    expect(login.status).toBe(400)
    // an escaped backslash followed by the letters u0000 is ordinary text
    const ok = await s.call('POST', '/api/dashboards', { jwt: u.jwt, body: String.raw`{"Name":"d","Description":"a\\u0000b"}`, headers: json })
    expect(ok.status).toBe(200)
    // path parameters reach lookups: a 4xx with an Error body on both stores
    for (const path of ['/api/library/%00', '/api/dashboards/%00', '/api/files/%00/details', '/api/resources/%00', '/api/searchctrl/%00'])
      expect((await s.call('GET', path, { jwt: u.jwt })).status).toBeGreaterThanOrEqual(400)
    for (const path of ['/api/library/%00', '/api/dashboards/%00', '/api/files/%00/details', '/api/resources/%00', '/api/searchctrl/%00'])
      expect((await s.call('GET', path, { jwt: u.jwt })).status).toBeLessThan(500)
  })

  test('a JSON body that is not an object is 400 where an object is expected, even if all its fields are optional', async () => {
    const s = await setup()
    const u = await s.createUser()
    for (const body of ['[]', '[{"Name":"x"}]', '"Name"', '5', 'true', 'null'])
      await refused(s, 400, 'PUT', `/api/users/${u.uid}`, { jwt: u.jwt, body, headers: { 'content-type': 'application/json' } })
    // while no body at all is a body of nothing
    expect((await s.call('PUT', `/api/users/${u.uid}`, { jwt: u.jwt })).status).toBe(200)
  })

  test('a text body that is no JSON object is 400 where an object is expected, whatever its Content-Type (found by the fuzz test)', async () => {
    const s = await setup()
    const gid = await s.createGroup('team')
    // Elysia used to take these for {} on a schema whose fields are all optional, and answered 200
    for (const type of ['text/plain', 'application/octet-stream', undefined])
      for (const body of ['2147483647', 'hello', 'true', '"Name"', 'Desc=x'])
        await refused(s, 400, 'PUT', `/api/groups/${gid}`, { jwt: s.adminJwt, body, headers: type ? { 'content-type': type } : {} })
    // a real form stays a form
    const form = await s.call('PUT', `/api/groups/${gid}`, { jwt: s.adminJwt, body: 'Desc=from-form', headers: { 'content-type': 'application/x-www-form-urlencoded' } })
    expect(form.status).toBe(200)
    expect((await s.call('GET', `/api/groups/${gid}`, { jwt: s.adminJwt })).body.Desc).toBe('from-form')
  })

  test('JSON is taken as JSON with curl\'s default form type or as plain text, as Go servers of this API do', async () => {
    const s = await setup()
    const body = '{"Name":"from-curl","Desc":"d"}'
    expect((await s.call('POST', '/api/groups', { jwt: s.adminJwt, body, headers: { 'content-type': 'application/x-www-form-urlencoded' } })).status).toBe(200)
    expect((await s.call('POST', '/api/groups', { jwt: s.adminJwt, body: body.replace('from-curl', 'untyped') })).status).toBe(200)
    expect(await groupNames(s)).toEqual(['from-curl', 'untyped'])
    // a form that merely looks like JSON is refused, not misread
    expectError(await s.call('POST', '/api/groups', { jwt: s.adminJwt, body: '{Name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } }), 400)
    expect(await groupNames(s)).toEqual(['from-curl', 'untyped'])
  })

  test('malformed JSON is 400 and changes nothing', async () => {
    const s = await setup()
    for (const body of ['{"Name": "half', '{Name: "x"}', 'not json', '{"Name":"a"} trailing'])
      expectError(await s.call('POST', '/api/groups', { jwt: s.adminJwt, body, headers: { 'content-type': 'application/json' } }), 400)
    expect(await groupNames(s)).toEqual([])
  })

  test('an empty body with Content-Type application/json is a body of nothing', async () => {
    const s = await setup()
    const u = await s.createUser()
    const lock = await s.call('PUT', `/api/users/${u.uid}/lock`, { jwt: s.adminJwt, body: '', headers: { 'content-type': 'application/json' } })
    expect(lock.status).toBe(200)
    expect(lock.body).toEqual({})
    expect((await s.call('GET', `/api/users/${u.uid}`, { jwt: s.adminJwt })).body.Locked).toBe(true)
    const unlock = await s.call('DELETE', `/api/users/${u.uid}/lock`, { jwt: s.adminJwt, body: '', headers: { 'content-type': 'application/json' } })
    expect(unlock.status).toBe(200)
    expect((await s.call('GET', `/api/users/${u.uid}`, { jwt: s.adminJwt })).body.Locked).toBe(false)
    const jwt = await s.login(u.User, u.Pass)
    const logout = await s.call('PUT', '/api/logout', { jwt, body: '', headers: { 'content-type': 'application/json; charset=utf-8' } })
    expect(logout.status).toBe(200)
    expect(logout.body).toEqual({})
  })

  test('unknown JSON keys are ignored', async () => {
    const s = await setup()
    const created = await s.call('POST', '/api/groups', { jwt: s.adminJwt, json: { Name: 'extra', Desc: 'd', Bogus: 1, Nested: { a: [1] }, GID: 999 } })
    expect(created.status).toBe(200)
    expect(created.body).not.toBe(999)
    expect((await s.call('GET', `/api/groups/${created.body}`, { jwt: s.adminJwt })).body).toEqual({ GID: created.body, Name: 'extra', Desc: 'd', Synced: false })
    const login = await s.call('POST', '/api/login', { json: { User: 'admin', Pass: s.config.adminPassword, MFACode: '123456', Remember: true } })
    expect(login.status).toBe(200)
  })

  test('a validation error is 400 and does not echo the input', async () => {
    const s = await setup()
    const u = await s.createUser()
    const marker = 'zq-distinctive-7731-value'
    const cases: [string, string, unknown][] = [
      ['POST', '/api/groups', { Name: 42, Desc: marker }],
      ['POST', '/api/groups', { Name: `${marker}${'x'.repeat(300)}` }],
      ['PUT', `/api/users/${u.uid}`, { Email: `${marker} not an email` }],
      ['POST', '/api/users', { User: marker, Pass: marker, Name: marker, Email: marker, Admin: false }],
      ['PUT', `/api/users/${u.uid}/searchgroup`, { GID: marker }],
      ['POST', `/api/users/${u.uid}/group`, { GIDs: [marker] }],
      ['POST', '/api/login', { User: marker, Pass: { nested: marker } }],
    ]
    for (const [method, path, json] of cases) {
      const res = await s.call(method, path, { jwt: s.adminJwt, json })
      expectError(res, 400)
      expect(res.text).not.toContain(marker)
      expect(res.text).not.toContain('zq-distinctive')
    }
    const bad = await s.call('GET', `/api/groups/${marker}`, { jwt: s.adminJwt })
    expectError(bad, 400)
    expect(bad.text).not.toContain(marker)
    expect(await groupNames(s)).toEqual([])
    expect((await s.call('GET', '/api/users', { jwt: s.adminJwt })).body).toHaveLength(2)
  })
})

describe('null strings (docs/api.md "Conventions": null for an optional string is "")', () => {
  /** Whether a schema takes some string: a string schema, a string literal, or a union holding one. */
  // A member whose only string is '' takes it as "none" beside a value of another kind (POST /api/parse Filters: null,
  // '' or a list): no string field.
  const takesString = (s: TSchema): boolean =>
    ((s.type === 'string' || typeof s.const === 'string') && s.const !== '') || ((s.anyOf as TSchema[] | undefined) ?? []).some(takesString)
  /** Times take null, "" or absent as unset (docs/api.md "Conventions"): null stays null for the time parser. */
  const TIMES = new Set(['expiresAt', 'SearchStart', 'SearchEnd', 'TS'])
  /**
   * Fields whose null the handler reads as "" itself, the schema having no Transform: decoding every entry of an ingest
   * batch through TypeBox cost most of the batch (plugins/ingest/index.ts; stored as "": plugins/ingest/ingest.test.ts).
   */
  const HANDLER_READS_NULL = new Set(['POST /api/ingest/json SRC', 'PUT /api/ingest/json SRC'])

  test('every optional string of every body schema takes null, and the handler sees ""', async () => {
    const s = await setup()
    const seen: string[] = []
    for (const r of apiRoutes(s.app)) {
      const item = (r.body?.type === 'array' ? r.body.items : r.body) as TSchema | undefined
      const props = (item?.properties ?? {}) as Record<string, TSchema>
      const required = new Set((item?.required ?? []) as string[])
      for (const [name, prop] of Object.entries(props)) {
        if (required.has(name) || !takesString(prop)) continue
        seen.push(`${r.key} ${name}`)
        expect({ field: `${r.key} ${name}`, null: Value.Check(prop, null) }).toEqual({ field: `${r.key} ${name}`, null: true })
        if (!TIMES.has(name) && !HANDLER_READS_NULL.has(`${r.key} ${name}`))
          expect({ field: `${r.key} ${name}`, decoded: Value.Decode(prop, null) }).toEqual({ field: `${r.key} ${name}`, decoded: '' })
      }
    }
    // the sweep reached the notification fields and those of every area
    for (const field of [
      'POST /api/tokens description', 'PUT /api/tokens/:id description', 'PUT /api/users/:id Name', 'PUT /api/users/:id/pwd OrigPass',
      'POST /api/groups Desc', 'PUT /api/groups/:gid Name', 'POST /api/resources Description', 'PUT /api/resources/:guid ResourceName',
      'PATCH /api/files/:id Desc', 'POST /api/library Query', 'PUT /api/dashboards/:id GUID', 'POST /api/ingest/json SRC',
    ])
      expect(seen).toContain(field)
  })

  test('through the real app: null fields are stored as "" (or, where "" keeps a value, keep it)', async () => {
    const s = await setup()
    const u = await s.createUser({ Name: 'Real Name' })
    const ok = async (method: string, path: string, json: unknown) => {
      const res = await s.call(method, path, { jwt: u.jwt, json })
      expect({ route: `${method} ${path}`, status: res.status, text: res.text }).toMatchObject({ status: 200 })
      return res.body
    }
    // users: empty fields are ignored (docs/api.md "Users and groups"), so null ones are too
    await ok('PUT', `/api/users/${u.uid}`, { User: null, Name: null, Email: null })
    expect((await s.call('GET', '/api/info/whoami', { jwt: u.jwt })).body).toMatchObject({ User: u.User, Name: 'Real Name', Email: u.Email })
    // groups (admin)
    const gid = (await s.call('POST', '/api/groups', { jwt: s.adminJwt, json: { Name: 'nulls', Desc: null } })).body as number
    expect((await s.call('GET', `/api/groups/${gid}`, { jwt: s.adminJwt })).body).toMatchObject({ Name: 'nulls', Desc: '' })
    expect((await s.call('PUT', `/api/groups/${gid}`, { jwt: s.adminJwt, json: { Name: null, Desc: null } })).status).toBe(200)
    expect((await s.call('GET', `/api/groups/${gid}`, { jwt: s.adminJwt })).body).toMatchObject({ Name: 'nulls', Desc: '' })
    // resources: a null name keeps the name
    const r = await ok('POST', '/api/resources', { ResourceName: 'res', Description: null })
    expect(r.Description).toBe('')
    expect(await ok('PUT', `/api/resources/${r.GUID}`, { ...r, ResourceName: null, Description: null })).toMatchObject({ ResourceName: 'res', Description: '' })
    // library and dashboards: null texts are "", a null GUID is generated
    const e = await ok('POST', '/api/library', { GUID: null, Name: null, Description: null, Query: null })
    expect(e).toMatchObject({ GUID: expect.stringMatching(UUID), Name: '', Description: '', Query: '' })
    const id = await ok('POST', '/api/dashboards', { GUID: null, Name: null, Description: null })
    expect((await s.call('GET', `/api/dashboards/${id}`, { jwt: u.jwt })).body).toMatchObject({ GUID: expect.stringMatching(UUID), Name: '', Description: '' })
    // tokens (the js-client's create)
    expect(await ok('POST', '/api/tokens', { name: 't', description: null, capabilities: ['Search'], expiresAt: null })).toMatchObject({ description: '' })
  })

  test('a value of the wrong type is still 400 and changes nothing', async () => {
    const s = await setup()
    const u = await s.createUser()
    await refused(s, 400, 'POST', '/api/tokens', { jwt: u.jwt, json: { name: 't', description: 5, capabilities: ['Search'] } })
    await refused(s, 400, 'POST', '/api/groups', { jwt: s.adminJwt, json: { Name: 'g', Desc: {} } })
    await refused(s, 400, 'PUT', `/api/users/${u.uid}`, { jwt: u.jwt, json: { Name: false } })
    await refused(s, 400, 'POST', '/api/library', { jwt: u.jwt, json: { Name: ['x'] } })
    // a required string stays required: null is no name
    await refused(s, 400, 'POST', '/api/tokens', { jwt: u.jwt, json: { name: null, capabilities: ['Search'] } })
    await refused(s, 400, 'POST', '/api/resources', { jwt: u.jwt, json: { ResourceName: null } })
  })

  test('an object with its own toString key where a string belongs is 400, not 500 (found by the fuzz test)', async () => {
    // Elysia fails to describe such a value (server/http/errors.ts, isUndescribableValidationFailure).
    const s = await setup()
    const u = await s.createUser()
    const odd = { toString: 1 }
    await refused(s, 400, 'POST', '/api/login', { json: { User: odd, Pass: 'x' } })
    await refused(s, 400, 'POST', '/api/login', { json: { User: 'admin', Pass: [odd] } })
    await refused(s, 400, 'POST', '/api/groups', { jwt: s.adminJwt, json: { Name: { toString: 'g', valueOf: 'g' } } })
    await refused(s, 400, 'POST', '/api/tokens', { jwt: u.jwt, json: { name: odd, capabilities: ['Search'] } })
    await refused(s, 400, 'POST', '/api/library', { jwt: u.jwt, json: { Name: odd } })
    expect(s.logs.filter((l) => l.includes('internal error'))).toEqual([])
  })
})

describe('?admin=true', () => {
  test('is accepted on every route and gives a non-admin nothing more', async () => {
    const s = await setup()
    const member = await s.createUser()
    const outsider = await s.createUser()
    const gid = await s.createGroup('club', [member.uid])
    expect((await s.call('GET', `/api/groups/${gid}?admin=true`, { jwt: s.adminJwt })).status).toBe(200)
    expect((await s.call('GET', `/api/groups/${gid}/?admin=true`, { jwt: member.jwt })).status).toBe(200)
    expect((await s.call('GET', '/api/info/whoami?admin=true', { jwt: outsider.jwt })).body.UID).toBe(outsider.uid)
    expect((await s.call('GET', '/api/version?admin=true')).status).toBe(200)
    expectError(await s.call('GET', `/api/groups/${gid}?admin=true`, { jwt: outsider.jwt }), 403)
    expectError(await s.call('GET', `/api/users/${member.uid}?admin=true`, { jwt: outsider.jwt }), 403)
    expectError(await s.call('POST', '/api/groups?admin=true', { jwt: outsider.jwt, json: { Name: 'mine' } }), 403)
    expect(await groupNames(s)).toEqual(['club'])
  })
})

describe('body size limit', () => {
  const limit = 1024
  const oversized = () => JSON.stringify({ Name: 'big', Desc: 'd'.repeat(limit) })

  test('a JSON body over maxBodyBytes is refused and changes nothing; one at the limit is fine', async () => {
    const s = await setup({ maxBodyBytes: limit })
    const res = await s.call('POST', '/api/groups', { jwt: s.adminJwt, body: oversized(), headers: { 'content-type': 'application/json' } })
    expect(res.status).toBeGreaterThanOrEqual(400)
    expect(res.status).toBeLessThan(500)
    expect(res.body).toEqual({ Error: expect.any(String) })
    expect(res.headers.get('x-request-id')).toMatch(UUID)
    expect(await groupNames(s)).toEqual([])
    const fits = JSON.stringify({ Name: 'fits', Desc: '' })
    const atLimit = JSON.stringify({ Name: 'fits', Desc: 'd'.repeat(limit - fits.length) })
    expect(atLimit.length).toBe(limit)
    expect((await s.call('POST', '/api/groups', { jwt: s.adminJwt, body: atLimit, headers: { 'content-type': 'application/json' } })).status).toBe(200)
    expect(await groupNames(s)).toEqual(['fits'])
  })

  // Known bug (server/http/errors.ts, server/http/body.ts): Elysia wraps the 413 ApiError thrown by the body parser in a
  // ParseError, so the error plugin answers 400 "malformed request body". Turn these into plain tests once fixed.
  test('a JSON body over maxBodyBytes is 413', async () => {
    const s = await setup({ maxBodyBytes: limit })
    expectError(await s.call('POST', '/api/groups', { jwt: s.adminJwt, body: oversized(), headers: { 'content-type': 'application/json' } }), 413)
    expectError(await s.call('POST', '/api/login', { body: oversized(), headers: { 'content-type': 'application/json' } }), 413)
    expect(await groupNames(s)).toEqual([])
  })

  test('a JSON body over maxBodyBytes without Content-Length is 413', async () => {
    const s = await setup({ maxBodyBytes: limit })
    const bytes = new TextEncoder().encode(oversized())
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i < bytes.length; i += 256) c.enqueue(bytes.slice(i, i + 256))
        c.close()
      },
    })
    const req = new Request('http://localhost/api/groups', {
      method: 'POST',
      headers: { authorization: `Bearer ${s.adminJwt}`, 'content-type': 'application/json' },
      body: stream,
      duplex: 'half',
    } as RequestInit)
    expect(req.headers.get('content-length')).toBeNull()
    const res = await s.app.handle(req)
    expect(res.status).toBe(413)
    expect(await res.json()).toEqual({ Error: expect.any(String) })
    expect(await groupNames(s)).toEqual([])
  })

  test('a streamed body without Content-Length over the limit is refused; under it is read', async () => {
    const s = await setup({ maxBodyBytes: limit })
    const send = (text: string) => {
      const bytes = new TextEncoder().encode(text)
      const stream = new ReadableStream<Uint8Array>({
        start(c) {
          for (let i = 0; i < bytes.length; i += 100) c.enqueue(bytes.slice(i, i + 100))
          c.close()
        },
      })
      return s.app.handle(
        new Request('http://localhost/api/groups', {
          method: 'POST',
          headers: { authorization: `Bearer ${s.adminJwt}`, 'content-type': 'application/json' },
          body: stream,
          duplex: 'half',
        } as RequestInit),
      )
    }
    const refused = await send(oversized())
    expect(refused.status).toBeGreaterThanOrEqual(400)
    expect(refused.status).toBeLessThan(500)
    expect(await refused.json()).toEqual({ Error: expect.any(String) })
    expect(await groupNames(s)).toEqual([])
    const ok = await send(JSON.stringify({ Name: 'streamed', Desc: 'x'.repeat(500) }))
    expect(ok.status).toBe(200)
    expect(await groupNames(s)).toEqual(['streamed'])
  })
})

describe('headers', () => {
  test('Connection: close on the request is echoed on the response, also on errors', async () => {
    const s = await setup()
    const close = { connection: 'close' }
    const cases: [string, string, Parameters<TestServer['call']>[2]][] = [
      ['GET', '/api/info/whoami', { jwt: s.adminJwt, headers: close }],
      ['GET', '/api/test', { headers: close }],
      ['GET', '/api/nope', { headers: close }],
      ['GET', '/api/info/whoami', { headers: close }],
      ['POST', '/api/groups', { jwt: s.adminJwt, body: '{', headers: { ...close, 'content-type': 'application/json' } }],
      ['POST', '/api/login', { json: { User: 'admin', Pass: 'wrong-password' }, headers: close }],
      ['PUT', '/api/groups/12345', { jwt: s.adminJwt, json: { Name: 'x' }, headers: { Connection: 'Close' } }],
    ]
    for (const [method, path, opts] of cases) {
      const res = await s.call(method, path, opts)
      expect(res.headers.get('connection')?.toLowerCase()).toBe('close')
    }
    // and not when the client did not ask
    expect((await s.call('GET', '/api/info/whoami', { jwt: s.adminJwt })).headers.get('connection')).toBeNull()
  })

  test('every response carries a distinct X-Request-Id', async () => {
    const s = await setup()
    const responses = [
      await s.call('GET', '/api/test'),
      await s.call('GET', '/api/version'),
      await s.call('GET', '/api/nope'),
      await s.call('GET', '/api/info/whoami'),
      await s.call('GET', '/api/info/whoami', { jwt: s.adminJwt }),
      await s.call('POST', '/api/login', { json: {} }),
      await s.call('POST', '/api/login', { json: { User: 'admin', Pass: 'wrong-password' } }),
      await s.call('GET', '/api/docs'),
    ]
    const ids = responses.map((r) => r.headers.get('x-request-id'))
    for (const id of ids) expect(id).toMatch(UUID)
    expect(new Set(ids).size).toBe(ids.length)
  })
})

describe('server faults', () => {
  test('a 500 shows no internals but the request id, and the log has the error under that id', async () => {
    const s = await setup()
    s.store.users.list = async () => {
      throw new Error('secret detail at /var/lib/quarry')
    }
    const res = await s.call('GET', '/api/users', { jwt: s.adminJwt, headers: { connection: 'close' } })
    expectError(res, 500)
    const rid = res.headers.get('x-request-id')!
    expect(rid).toMatch(UUID)
    expect(res.body.Error).toContain(rid)
    expect(res.text).not.toContain('secret')
    expect(res.text).not.toContain('/var/lib')
    expect(res.text).not.toContain('.ts')
    expect(res.headers.get('connection')).toBe('close')
    const lines = s.logs.map((l) => JSON.parse(l) as Record<string, unknown>)
    const errors = lines.filter((l) => l.level === 'error' && l.rid === rid)
    expect(errors).toHaveLength(1)
    expect(String(errors[0]!.error)).toContain('secret detail')
    expect(errors[0]).toMatchObject({ method: 'GET', path: '/api/users' })
    expect(await requestLog(s, rid)).toEqual([expect.objectContaining({ status: 500, uid: 1 })])
  })

  test('a closed store gives 500 with the request id', async () => {
    const s = await setup()
    s.store.close()
    const res = await s.call('GET', '/api/info/whoami', { jwt: s.adminJwt })
    expectError(res, 500)
    expect(res.body.Error).toContain(res.headers.get('x-request-id')!)
    expect(res.text.toLowerCase()).not.toContain('sqlite')
    expect(res.text.toLowerCase()).not.toContain('database')
  })
})

describe('request log', () => {
  test('one JSON line per request with rid, method, path, status, ms and uid', async () => {
    const s = await setup()
    const u = await s.createUser()
    const cases: [string, string, Parameters<TestServer['call']>[2], number, number | undefined][] = [
      ['GET', '/api/info/whoami', { jwt: u.jwt }, 200, u.uid],
      ['GET', '/api/info/whoami/', { jwt: s.adminJwt }, 200, 1],
      ['GET', '/api/test', {}, 200, undefined],
      ['GET', '/api/nope', {}, 404, undefined],
      ['GET', '/api/testauth', {}, 401, undefined],
      ['POST', '/api/login', { json: { User: u.User, Pass: 'wrong-password' } }, 422, undefined],
      ['POST', '/api/groups', { jwt: s.adminJwt, json: {} }, 400, 1],
      ['POST', '/api/groups', { jwt: u.jwt, json: { Name: 'x' } }, 403, u.uid],
      ['GET', '/api/groups/4242', { jwt: s.adminJwt }, 404, 1],
      ['PUT', `/api/users/${u.uid}/lock`, { jwt: s.adminJwt }, 200, 1],
    ]
    for (const [method, path, opts, status, uid] of cases) {
      const res = await s.call(method, path, opts)
      expect(res.status).toBe(status)
      const rid = res.headers.get('x-request-id')!
      const lines = await requestLog(s, rid)
      expect(lines).toHaveLength(1)
      const line = lines[0]!
      expect(line).toMatchObject({ level: 'info', rid, method, path, status })
      expect(line.ms).toBeNumber()
      expect(line.ms as number).toBeGreaterThanOrEqual(0)
      expect(line.uid).toBe(uid)
      expect(line.ts).toMatch(ISO)
    }
    // every line of the log is one JSON object
    for (const l of s.logs) {
      expect(l.endsWith('\n')).toBe(true)
      expect(l.trimEnd()).not.toContain('\n')
      expect(typeof JSON.parse(l)).toBe('object')
    }
    // no JWT or password ends up in the log
    const all = s.logs.join('')
    for (const secret of [u.jwt, s.adminJwt, u.Pass, s.config.adminPassword!]) expect(all).not.toContain(secret)
  })
})

describe('service routes', () => {
  test('GET /api/test: 200, empty body, no auth', async () => {
    const s = await setup()
    for (const opts of [{}, { jwt: 'garbage' }]) {
      const res = await s.call('GET', '/api/test', opts)
      expect(res.status).toBe(200)
      expect(res.text).toBe('')
      expect(res.headers.get('content-type') ?? '').not.toContain('json')
    }
  })

  test('GET /api/version: the shape of docs/api.md "Logging in and sessions" and Quarry\'s version from package.json, no auth', async () => {
    const s = await setup()
    const res = await s.call('GET', '/api/version')
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      Version: JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version,
      API: { Major: 0, Minor: 2 },
      Build: { Major: 5, Minor: 0, Point: 0, BuildDate: expect.stringMatching(ISO), BuildID: expect.any(String), GUIBuildID: '' },
    })
    expect(res.body.Build.BuildID.length).toBeGreaterThan(0)
  })

  test('GET /api/settings: needs auth; limits, clock and flags', async () => {
    const s = await setup()
    const u = await s.createUser()
    expectError(await s.call('GET', '/api/settings'), 401)
    s.clock.advance(123_456)
    const res = await s.call('GET', '/api/settings', { jwt: u.jwt })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      MaxFileSize: s.config.maxFileBytes,
      MaxResourceSize: s.config.maxResourceBytes,
      ServerTime: new Date(s.clock.now()).toISOString(),
      ServerTimezone: expect.any(String),
      ServerTimezoneOffset: expect.any(Number),
      DistributedWebservers: false,
      IngestAllowed: true,
      MapTileUrl: 'https://tile.openstreetmap.org',
      DisableMapTileProxy: true,
    })
    expect(res.body.ServerTime).toMatch(ISO)
    expect(Number.isInteger(res.body.ServerTimezoneOffset)).toBe(true)
    expect(res.body.ServerTimezone.length).toBeGreaterThan(0)
  })

  test('GET /api/settings: MapTileUrl and DisableMapTileProxy as configured, of the types the js-client checks', async () => {
    const s = await setup({ mapTileUrl: 'https://tiles.example.com/{z}/{x}/{y}.png', disableMapTileProxy: false })
    const u = await s.createUser()
    const res = await s.call('GET', '/api/settings', { jwt: u.jwt })
    expect(res.body).toMatchObject({ MapTileUrl: 'https://tiles.example.com/{z}/{x}/{y}.png', DisableMapTileProxy: false })
    // the js-client's toSystemSettings + isSystemSettings
    const settings = {
      mapTileURL: res.body.MapTileUrl,
      disableMapTileProxy: res.body.DisableMapTileProxy,
      webServerIsDistributed: res.body.DistributedWebservers,
      maxFileSize: res.body.MaxFileSize,
      maxResourceSize: res.body.MaxResourceSize,
    }
    expect(typeof settings.mapTileURL).toBe('string')
    expect(typeof settings.disableMapTileProxy).toBe('boolean')
    expect(typeof settings.webServerIsDistributed).toBe('boolean')
    expect(Number.isInteger(settings.maxFileSize) && Number.isInteger(settings.maxResourceSize)).toBe(true)
    // an API token with no particular permission reads them too (the route needs none)
    const token = (await s.call('POST', '/api/tokens', { jwt: u.jwt, json: { name: 't', capabilities: ['Stats'] } })).body.token
    expect((await s.call('GET', '/api/settings', { headers: { 'Service-Token': token } })).body.MapTileUrl).toBe(settings.mapTileURL)
  })

  test('GET /api/docs/json: an OpenAPI document; every non-public operation carries x-permission', async () => {
    const s = await setup()
    const res = await s.call('GET', '/api/docs/json')
    expect(res.status).toBe(200)
    const doc = res.body as { openapi: string; paths: Record<string, Record<string, Record<string, unknown>>> }
    expect(doc.openapi).toMatch(/^3\./)
    const permissions = new Map<string, unknown>()
    for (const [path, ops] of Object.entries(doc.paths))
      for (const [method, op] of Object.entries(ops)) permissions.set(`${method.toUpperCase()} ${path}`, op['x-permission'])
    expect(permissions.size).toBeGreaterThan(20)
    for (const [route, permission] of permissions) {
      // the document writes path parameters {x}, the route table :x
      if (PUBLIC_ROUTES.has(route.replace(/\{(\w+)\}/g, ':$1'))) expect(permission).toBeUndefined()
      else expect(permission).toBeString()
    }
    expect(permissions.get('POST /api/groups')).toBe('admin')
    expect(permissions.get('GET /api/groups')).toBe('ListGroups')
    expect(permissions.get('GET /api/groups/{gid}/members')).toBe('ListGroupMembers')
    expect(permissions.get('GET /api/users')).toBe('ListUsers')
    expect(permissions.get('GET /api/info/whoami')).toBe('self')
    expect(permissions.get('PUT /api/logout')).toBe('session')
    expect(permissions.has('POST /api/login')).toBe(true)
    // the settings answer documents its new fields
    const settings = (doc.paths['/api/settings']!.get as any).responses['200'].content['application/json'].schema
    expect(settings.properties.MapTileUrl).toEqual({ type: 'string' })
    expect(settings.properties.DisableMapTileProxy).toEqual({ type: 'boolean' })
    expect(settings.required).toEqual(expect.arrayContaining(['MapTileUrl', 'DisableMapTileProxy']))
    // ... and so does the search list entry
    const entry = (doc.paths['/api/searchctrl']!.get as any).responses['200'].content['application/json'].schema.items
    expect(Object.keys(entry.properties.LaunchInfo.properties).sort()).toEqual(['expires', 'method', 'reference', 'started'])
    expect(Object.keys(entry.properties.Import.properties).sort()).toEqual(['BatchInfo', 'BatchName', 'Imported', 'Time'])
  })
})

describe('times', () => {
  test('times in responses are RFC 3339 UTC with fractional seconds', async () => {
    const s = await setup()
    const u = await s.createUser()
    s.clock.advance(5_000) // so that a time falls on a whole second only by chance
    const me = await s.call('GET', '/api/info/whoami', { jwt: u.jwt })
    expect(me.body.TS).toMatch(ISO)
    const sessions = await s.call('GET', `/api/users/${u.uid}/sessions`, { jwt: u.jwt })
    for (const x of sessions.body.Sessions) expect(x.LastHit).toMatch(ISO)
    expect((await s.call('GET', '/api/version')).body.Build.BuildDate).toMatch(ISO)
    expect((await s.call('GET', '/api/settings', { jwt: u.jwt })).body.ServerTime).toMatch(ISO)
    // a time that is exactly on a second still has its fraction
    const onSecond = Math.ceil(s.clock.now() / 1000) * 1000 + 1000
    s.clock.advance(onSecond - s.clock.now())
    expect((await s.call('GET', '/api/settings', { jwt: u.jwt })).body.ServerTime).toBe(new Date(onSecond).toISOString())
    expect((await s.call('GET', '/api/settings', { jwt: u.jwt })).body.ServerTime).toMatch(/\.000Z$/)
  })
})
