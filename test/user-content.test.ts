// User content that other people open (docs/security.md): downloads
// never render in the API's origin, sharing lists name only the caller's own groups, stored JSON is bounded in
// depth and size, names show what they are, and CSV cells never run as formulas.
import { describe, expect, test } from 'bun:test'
import { API_HEADERS, DOWNLOAD_CSP } from '../server/http/headers'
import { MAX_JSON_DEPTH, MAX_JSON_VALUES } from '../server/http/json-shape'
import { writeSearchArchive } from '../server/search/archive'
import { type CallResult, type TestServer, blobFiles, expectError, refused, serverPerTest, storeSnapshot } from './helpers'

const setup = serverPerTest()

/** A multipart request as browsers build it: `file` plus text fields. */
function send(s: TestServer, method: string, path: string, jwt: string, data: string | Uint8Array, fields: Record<string, string> = {}) {
  const fd = new FormData()
  for (const [k, v] of Object.entries(fields)) fd.append(k, v)
  fd.append('file', new Blob([data]), 'upload.bin')
  return s.handle(new Request(`http://localhost${path}`, { method, body: fd, headers: { authorization: `Bearer ${jwt}` } }))
}

async function ok(res: Promise<CallResult> | CallResult): Promise<CallResult> {
  const r = await res
  expect({ status: r.status, text: r.text.slice(0, 300) }).toMatchObject({ status: 200 })
  return r
}

/** The download rules: not sniffed, sandboxed, and an attachment unless `inline`. */
function expectDownload(res: CallResult, type: string, inline: boolean) {
  expect(res.status).toBe(200)
  expect(res.headers.get('content-type')).toBe(type)
  expect(res.headers.get('x-content-type-options')).toBe('nosniff')
  expect(res.headers.get('content-security-policy')).toBe(DOWNLOAD_CSP)
  expect(res.headers.get('content-security-policy')).toContain('sandbox')
  expect(res.headers.get('content-disposition')?.split(';')[0]).toBe(inline ? 'inline' : 'attachment')
}

const HTML = '<html><body><script>fetch("/api/tokens",{method:"POST"})</script></body></html>'
const SVG = '<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"><script>alert(document.cookie)</script></svg>'
const JS = 'fetch("/api/users", {credentials: "include"}).then((r) => r.text()).then(alert)\n'
const XHTML = '<?xml version="1.0" encoding="UTF-8"?>\n<html xmlns="http://www.w3.org/1999/xhtml"><script>alert(1)</script></html>'
const PNG = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52])
const PDF = '%PDF-1.7\n1 0 obj << /OpenAction << /S /JavaScript /JS (app.alert(1)) >> >> endobj\n'

describe('downloads of user content never render in the API origin (point 3)', () => {
  // [contents, the Type the file record keeps, the Content-Type sent, inline]
  const CASES: [string, string | Uint8Array, string, boolean][] = [
    ['HTML', HTML, 'text/html; charset=utf-8', false],
    ['SVG starting with <?xml', SVG, 'text/xml; charset=utf-8', false],
    ['XHTML', XHTML, 'text/xml; charset=utf-8', false],
    ['PDF', PDF, 'application/pdf', false],
    // JavaScript is not a sniffed type: plain text, which nosniff keeps from running as a script
    ['JavaScript', JS, 'text/plain; charset=utf-8', true],
    ['PNG', PNG, 'image/png', true],
    ['binary', Uint8Array.from([0, 1, 2, 3]), 'application/octet-stream', false],
  ]

  for (const [what, contents, type, inline] of CASES) {
    test(`a user file of ${what}: ${inline ? 'inline' : 'an attachment'}, not sniffed, sandboxed; its Type is still the detected one`, async () => {
      const s = await setup()
      const alice = await s.createUser()
      const f = (await ok(send(s, 'POST', '/api/files', alice.jwt, contents, { name: `${what}.file` }))).body
      expect(f.Type).toBe(type)
      const res = await s.call('GET', `/api/files/${f.GUID}`, { jwt: alice.jwt })
      expectDownload(res, type, inline)
      expect(res.text.length).toBeGreaterThan(0)
      // the same through the download token in a cookie, which a browser sends on navigation
      const tmp = (await ok(s.call('GET', '/api/login/tmptoken', { jwt: alice.jwt }))).body.JWT
      expectDownload(await s.call('GET', `/api/files/${f.GUID}`, { headers: { cookie: `token=${tmp}` } }), type, inline)
    })

    test(`a resource of ${what}: an attachment of application/octet-stream, not sniffed, sandboxed`, async () => {
      const s = await setup()
      const alice = await s.createUser()
      const r = (await ok(s.call('POST', '/api/resources', { jwt: alice.jwt, json: { ResourceName: what } }))).body
      await ok(send(s, 'PUT', `/api/resources/${r.GUID}/raw`, alice.jwt, contents))
      expectDownload(await s.call('GET', `/api/resources/${r.GUID}/raw`, { jwt: alice.jwt }), 'application/octet-stream', false)
    })
  }

  test('an empty file and an empty resource are downloads too', async () => {
    const s = await setup()
    const alice = await s.createUser()
    const f = (await ok(send(s, 'POST', '/api/files', alice.jwt, ''))).body
    expectDownload(await s.call('GET', `/api/files/${f.GUID}`, { jwt: alice.jwt }), 'application/octet-stream', false)
    const r = (await ok(s.call('POST', '/api/resources', { jwt: alice.jwt, json: { ResourceName: 'empty' } }))).body
    expectDownload(await s.call('GET', `/api/resources/${r.GUID}/raw`, { jwt: alice.jwt }), 'application/octet-stream', false)
  })

  test('search downloads (json, csv, text, archive) of HTML-looking results are sandboxed attachments', async () => {
    const s = await setup()
    const alice = await s.createUser()
    await ok(s.call('POST', '/api/ingest/json', { jwt: s.adminJwt, json: [{ TS: '2026-01-01T00:00:00Z', Tag: 'web', Data: Buffer.from(HTML).toString('base64') }] }))
    const id = (await ok(s.call('POST', '/api/searchctrl/launch', { jwt: alice.jwt, json: { SearchString: 'tag=web' } }))).body.SearchID
    await s.searches.settled()
    for (const [format, type] of [['json', 'application/json; charset=utf-8'], ['csv', 'text/csv; charset=utf-8'], ['text', 'text/plain; charset=utf-8']]) {
      const res = await s.call('GET', `/api/searchctrl/${id}/download/${format}`, { jwt: alice.jwt })
      expectDownload(res, type!, false)
      expect(res.headers.get('content-disposition')).toBe(`attachment; filename="search-${id}.${format === 'text' ? 'txt' : format}"; filename*=UTF-8''search-${id}.${format === 'text' ? 'txt' : format}`)
      expect(res.text).toContain(format === 'json' ? Buffer.from(HTML).toString('base64') : HTML.slice(0, 20))
    }
    await ok(s.call('PATCH', `/api/searchctrl/${id}/save`, { jwt: alice.jwt }))
    // SAVED once no session is attached
    await ok(s.call('PUT', `/api/searchctrl/${id}/detach`, { jwt: alice.jwt }))
    await s.searches.settled()
    expectDownload(await s.call('GET', `/api/searchctrl/${id}/download/archive`, { jwt: alice.jwt }), 'application/gzip', false)
  })

  test('every answer carries the API security headers: success, 401, 404, 400, login, empty and raw-JSON bodies', async () => {
    const s = await setup()
    const answers = [
      await s.call('GET', '/api/info/whoami', { jwt: s.adminJwt }),
      await s.call('GET', '/api/info/whoami'),
      await s.call('GET', '/api/no/such/route'),
      await s.call('POST', '/api/dashboards', { jwt: s.adminJwt, body: '{', headers: { 'content-type': 'application/json' } }),
      await s.call('POST', '/api/login', { json: { User: 'admin', Pass: 'wrong' } }),
      await s.call('GET', '/api/test'),
      await s.call('GET', '/api/users/1/preferences', { jwt: s.adminJwt }),
      await s.call('GET', '/api/dashboards', { jwt: s.adminJwt }),
      await s.call('GET', '/api/docs/json'),
    ]
    expect(answers.map((r) => r.status)).toEqual([200, 401, 404, 400, 422, 200, 200, 200, 200])
    for (const res of answers) for (const [name, value] of Object.entries(API_HEADERS)) expect({ name, value: res.headers.get(name) }).toEqual({ name, value })
    expect(API_HEADERS['content-security-policy']).toBe("default-src 'none'; frame-ancestors 'none'; sandbox")
  })
})

/** admin, alice (in g1 only), bob (in g2 only); g1 and g2. */
async function sharingWorld() {
  const s = await setup()
  const alice = await s.createUser({ User: 'alice' })
  const bob = await s.createUser({ User: 'bob' })
  const g1 = await s.createGroup('g1', [alice.uid])
  const g2 = await s.createGroup('g2', [bob.uid])
  return { s, alice, bob, g1, g2 }
}

/** A refused multipart request: 403, the error body, and no row and no blob file changed. */
async function refusedUpload(s: TestServer, status: number, method: string, path: string, jwt: string, data: string, fields: Record<string, string>) {
  const before = storeSnapshot(s)
  const blobs = blobFiles(s)
  expectError(await send(s, method, path, jwt, data, fields), status)
  expect(storeSnapshot(s)).toEqual(before)
  expect(blobFiles(s)).toEqual(blobs)
}

describe('a non-admin shares only with groups they belong to (point 4)', () => {
  test('creating a file, dashboard, library entry or resource shared with a foreign group: 403, nothing stored', async () => {
    const { s, alice, g2 } = await sharingWorld()
    await refusedUpload(s, 403, 'POST', '/api/files', alice.jwt, HTML, { meta: JSON.stringify({ Name: 'x', GIDs: [g2] }) })
    await refused(s, 403, 'POST', '/api/dashboards', { jwt: alice.jwt, json: { Name: 'x', GIDs: [g2], Data: {} } })
    await refused(s, 403, 'POST', '/api/library', { jwt: alice.jwt, json: { Name: 'x', GIDs: [g2], Query: 'tag=x' } })
    await refused(s, 403, 'POST', '/api/resources', { jwt: alice.jwt, json: { ResourceName: 'x', GroupACL: [g2] } })
    // a group that does not exist is no group of hers either
    await refused(s, 403, 'POST', '/api/dashboards', { jwt: alice.jwt, json: { GIDs: [4242] } })
  })

  test("the GUID of an admin's global item, shared with a foreign group: refused, and g2 still opens the admin's item", async () => {
    const { s, alice, bob, g1, g2 } = await sharingWorld()
    // the admin's global items
    const file = (await ok(send(s, 'POST', '/api/files', s.adminJwt, 'the real icon', { meta: JSON.stringify({ Name: 'logo', Global: true }) }))).body
    const dashId = (await ok(s.call('POST', '/api/dashboards', { jwt: s.adminJwt, json: { Name: 'real', Global: true } }))).body
    const dash = (await ok(s.call('GET', `/api/dashboards/${dashId}`, { jwt: s.adminJwt }))).body
    const lib = (await ok(s.call('POST', '/api/library', { jwt: s.adminJwt, json: { Name: 'real', Global: true, Query: 'tag=real' } }))).body

    await refusedUpload(s, 403, 'POST', '/api/files', alice.jwt, HTML, { guid: file.GUID, meta: JSON.stringify({ GUID: file.GUID, GIDs: [g2] }) })
    await refused(s, 403, 'POST', '/api/dashboards', { jwt: alice.jwt, json: { GUID: dash.GUID, Name: 'phish', GIDs: [g1, g2] } })
    await refused(s, 403, 'POST', '/api/library', { jwt: alice.jwt, json: { GUID: lib.GUID, Name: 'phish', GIDs: [g2], Query: 'tag=other' } })

    // bob, in g2, opens the admin's items by their GUIDs
    expect((await s.call('GET', `/api/files/${file.GUID}`, { jwt: bob.jwt })).text).toBe('the real icon')
    expect((await ok(s.call('GET', `/api/dashboards/${dash.GUID}`, { jwt: bob.jwt }))).body).toMatchObject({ UID: 1, Name: 'real' })
    expect((await ok(s.call('GET', `/api/library/${lib.GUID}`, { jwt: bob.jwt }))).body).toMatchObject({ UID: 1, Name: 'real' })

    // alice may still use the GUID with her own group; g2 is not shown her item
    await ok(s.call('POST', '/api/dashboards', { jwt: alice.jwt, json: { GUID: dash.GUID, Name: 'mine', GIDs: [g1] } }))
    expect((await ok(s.call('GET', `/api/dashboards/${dash.GUID}`, { jwt: bob.jwt }))).body).toMatchObject({ UID: 1, Name: 'real' })
  })

  test('updating an own item to share it with a foreign group: 403 and nothing changed, on every kind', async () => {
    const { s, alice, g1, g2 } = await sharingWorld()
    const file = (await ok(send(s, 'POST', '/api/files', alice.jwt, 'x', { name: 'f' }))).body
    const dashId = (await ok(s.call('POST', '/api/dashboards', { jwt: alice.jwt, json: { Name: 'd' } }))).body
    const lib = (await ok(s.call('POST', '/api/library', { jwt: alice.jwt, json: { Name: 'l', Query: 'q' } }))).body
    const res = (await ok(s.call('POST', '/api/resources', { jwt: alice.jwt, json: { ResourceName: 'r' } }))).body

    await refused(s, 403, 'PATCH', `/api/files/${file.GUID}`, { jwt: alice.jwt, json: { GIDs: [g1, g2] } })
    await refused(s, 403, 'PUT', `/api/dashboards/${dashId}`, { jwt: alice.jwt, json: { Name: 'd', GIDs: [g2] } })
    await refused(s, 403, 'PUT', `/api/library/${lib.ThingUUID}`, { jwt: alice.jwt, json: { ...lib, GIDs: [g2] } })
    await refused(s, 403, 'PUT', `/api/resources/${res.GUID}`, { jwt: alice.jwt, json: { ...res, GroupACL: [g2] } })

    // her own group is fine
    expect((await ok(s.call('PATCH', `/api/files/${file.GUID}`, { jwt: alice.jwt, json: { GIDs: [g1] } }))).body.GIDs).toEqual([g1])
    expect((await ok(s.call('PUT', `/api/resources/${res.GUID}`, { jwt: alice.jwt, json: { GroupACL: [g1] } }))).body.GroupACL).toEqual([g1])
  })

  test('a GID an admin put on her item may stay when she sends the whole item back; admins share with any positive GID', async () => {
    const { s, alice, g1, g2 } = await sharingWorld()
    const dashId = (await ok(s.call('POST', '/api/dashboards', { jwt: s.adminJwt, json: { UID: alice.uid, Name: 'd', GIDs: [g2, 4242] } }))).body
    const dash = (await ok(s.call('GET', `/api/dashboards/${dashId}`, { jwt: alice.jwt }))).body
    expect(dash.GIDs).toEqual([g2, 4242])
    const back = (await ok(s.call('PUT', `/api/dashboards/${dashId}`, { jwt: alice.jwt, json: { ...dash, Name: 'renamed', GIDs: [g1, g2, 4242] } }))).body
    expect(back).toMatchObject({ Name: 'renamed', GIDs: [g1, g2, 4242] })
    // she may drop it, but not add it back
    await ok(s.call('PUT', `/api/dashboards/${dashId}`, { jwt: alice.jwt, json: { GIDs: [g1] } }))
    await refused(s, 403, 'PUT', `/api/dashboards/${dashId}`, { jwt: alice.jwt, json: { GIDs: [g1, g2] } })
  })

  test("an admin's API token shares as a user does (tokens never carry admin reach)", async () => {
    const { s, g2 } = await sharingWorld()
    const token = (await ok(s.call('POST', '/api/tokens', { jwt: s.adminJwt, json: { name: 't', capabilities: ['DashboardWrite', 'DashboardRead'] } }))).body.token
    await refused(s, 403, 'POST', '/api/dashboards', { headers: { 'service-token': token }, json: { GIDs: [g2] } })
  })
})

/** `[[[...]]]` nested `n` levels deep. */
const deep = (n: number) => '['.repeat(n) + ']'.repeat(n)
/** A body `{"<member>": <text>}` sent as JSON text. */
const withMember = (member: string, text: string, extra = '') => ({ body: `{${extra}"${member}":${text}}`, headers: { 'content-type': 'application/json' } })

describe('stored JSON is bounded in depth and size (point 10)', () => {
  test('dashboard Data 1.5 million levels deep: 400 at once, nothing stored; 64 levels are kept', async () => {
    const s = await setup()
    const t0 = performance.now()
    const res = await refused(s, 400, 'POST', '/api/dashboards', { jwt: s.adminJwt, ...withMember('Data', `{"a":${deep(1_500_000)}}`) })
    expect(res.body.Error).toMatch(/nested more than 6[45] levels/)
    expect(performance.now() - t0).toBeLessThan(10_000)
    await refused(s, 400, 'POST', '/api/dashboards', { jwt: s.adminJwt, ...withMember('Data', `{"a":${deep(MAX_JSON_DEPTH)}}`) })
    const okData = `{"a":${deep(MAX_JSON_DEPTH - 1)}}`
    const id = (await ok(s.call('POST', '/api/dashboards', { jwt: s.adminJwt, ...withMember('Data', okData) }))).body
    expect((await s.call('GET', `/api/dashboards/${id}`, { jwt: s.adminJwt })).text).toContain(`"Data":${okData}`)
    await refused(s, 400, 'PUT', `/api/dashboards/${id}`, { jwt: s.adminJwt, ...withMember('Data', `{"a":${deep(1000)}}`) })
    // brackets inside strings are text, not depth
    const inString = JSON.stringify({ s: '['.repeat(10_000) })
    await ok(s.call('PUT', `/api/dashboards/${id}`, { jwt: s.adminJwt, ...withMember('Data', inString) }))
  })

  test('any body nested deeper than a stored member may be is 400 before it is parsed (a deep field once made validation overflow the stack: 500)', async () => {
    const s = await setup()
    const t0 = performance.now()
    for (const value of [deep(10_000), `${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`]) {
      const res = await refused(s, 400, 'POST', '/api/tokens', { jwt: s.adminJwt, ...withMember('capabilities', value) })
      expect(res.body.Error).toBe(`the request body is nested more than ${MAX_JSON_DEPTH + 1} levels deep`)
      await refused(s, 400, 'PUT', '/api/users/1', { jwt: s.adminJwt, ...withMember('Name', value) })
    }
    // generous: the refusal is one pass over the text (it took minutes when validation walked the value)
    expect(performance.now() - t0).toBeLessThan(20_000)
  })

  test(`a member of more than ${MAX_JSON_VALUES} values: 400; exactly that many are kept`, async () => {
    const s = await setup()
    // the object, the array and its elements
    const values = (n: number) => `{"a":[${Array(n - 2).fill('0').join(',')}]}`
    const id = (await ok(s.call('POST', '/api/dashboards', { jwt: s.adminJwt, ...withMember('Data', values(MAX_JSON_VALUES)) }))).body
    const res = await refused(s, 400, 'PUT', `/api/dashboards/${id}`, { jwt: s.adminJwt, ...withMember('Data', values(MAX_JSON_VALUES + 1)) })
    expect(res.body.Error).toContain(`${MAX_JSON_VALUES} values`)
    // keys are not values: an object of n members holds n values plus itself
    const members = (n: number) => `{${Array.from({ length: n }, (_, i) => `"k${i}":${i}`).join(',')}}`
    await ok(s.call('PUT', `/api/dashboards/${id}`, { jwt: s.adminJwt, ...withMember('Data', members(MAX_JSON_VALUES - 1)) }))
    await refused(s, 400, 'PUT', `/api/dashboards/${id}`, { jwt: s.adminJwt, ...withMember('Data', members(MAX_JSON_VALUES)) })
  })

  test('every other stored JSON member: library Metadata, preferences, search metadata (launch and save), file meta', async () => {
    const s = await setup()
    const alice = await s.createUser()
    const tooDeep = `{"a":${deep(200_000)}}`
    await refused(s, 400, 'POST', '/api/library', { jwt: alice.jwt, ...withMember('Metadata', tooDeep, '"Name":"x",') })
    const lib = (await ok(s.call('POST', '/api/library', { jwt: alice.jwt, json: { Name: 'x', Metadata: { ok: [[1]] } } }))).body
    await refused(s, 400, 'PUT', `/api/library/${lib.ThingUUID}`, { jwt: alice.jwt, ...withMember('Metadata', tooDeep) })
    await refused(s, 400, 'PUT', `/api/users/${alice.uid}/preferences`, { jwt: alice.jwt, body: tooDeep, headers: { 'content-type': 'application/json' } })
    await refused(s, 400, 'PUT', `/api/users/${alice.uid}/preferences`, { jwt: alice.jwt, body: `[${Array(MAX_JSON_VALUES).fill(0).join(',')}]`, headers: { 'content-type': 'application/json' } })
    await refused(s, 400, 'POST', '/api/searchctrl/launch', { jwt: alice.jwt, ...withMember('Metadata', tooDeep, '"SearchString":"tag=x",') })
    const id = (await ok(s.call('POST', '/api/searchctrl/launch', { jwt: alice.jwt, json: { SearchString: 'tag=x', Metadata: { a: 1 } } }))).body.SearchID
    await s.searches.settled()
    const before = (await ok(s.call('GET', `/api/searchctrl/${id}/details`, { jwt: alice.jwt }))).body
    expectError(await s.call('PATCH', `/api/searchctrl/${id}/save`, { jwt: alice.jwt, body: tooDeep, headers: { 'content-type': 'application/json' } }), 400)
    await s.searches.settled()
    expect((await ok(s.call('GET', `/api/searchctrl/${id}/details`, { jwt: alice.jwt }))).body).toMatchObject({ State: before.State, Metadata: { a: 1 } })
    await refusedUpload(s, 400, 'POST', '/api/files', alice.jwt, 'x', { meta: `{"Name":"x","Extra":${deep(10_000)}}` })
  })

  test('a search archive whose description Metadata or a record is nested too deep: 400, nothing stored', async () => {
    const s = await setup()
    const alice = await s.createUser()
    const nested = (n: number): unknown => (n === 0 ? 1 : [nested(n - 1)])
    const description = { UserQuery: 'tag=x', EffectiveQuery: 'tag=x', StartRange: '2026-01-01T00:00:00Z', EndRange: '2026-01-02T00:00:00Z', Started: '2026-01-02T00:00:00Z', Finished: '2026-01-02T00:00:01Z' }
    const archive = async (metadata: unknown, record: unknown) =>
      new Uint8Array(await new Response(writeSearchArchive({ ...description, Metadata: metadata }, [{ TS: '2026-01-01T00:00:00Z', Data: 'x', Deep: record }])).arrayBuffer())
    const importing = async (bytes: Uint8Array) => {
      const f = new FormData()
      f.append('file', new Blob([bytes]), 'search.tar.gz')
      const res = new Response(f)
      const type = res.headers.get('content-type')!
      return { jwt: alice.jwt, body: new Uint8Array(await res.arrayBuffer()), headers: { 'content-type': type } }
    }
    for (const [metadata, record] of [[nested(200), 1], [null, nested(1000)], [null, nested(MAX_JSON_DEPTH)]]) {
      const res = await refused(s, 400, 'POST', '/api/searchctrl/import', await importing(await archive(metadata, record)))
      expect(res.body.Error).toContain(`nested more than ${MAX_JSON_DEPTH} levels`)
    }
    expect((await s.call('POST', '/api/searchctrl/import', await importing(await archive(nested(10), nested(10))))).status).toBe(200)
  })
})

describe('names show what they are (point 12)', () => {
  const user = (User: string, extra: Record<string, unknown> = {}) => ({ User, Pass: 'password-1234', Name: 'N', Email: 'n@example.com', Admin: false, ...extra })

  test('control, format and invisible characters in a user name: 400, nothing stored', async () => {
    const s = await setup()
    for (const User of ['nul\u0000l', 'zero\u200bwidth', 'joi\u200dner', 'bidi\u202eevil', 'isolate\u2066x', 'soft\u00adhyphen', 'filler\u3164', 'line\u2028sep', 'bom\ufeff', 'private\ue000', 'unassigned\u0378', 'vs\ufe0f', 'bell\u0007'])
      await refused(s, 400, 'POST', '/api/users', { jwt: s.adminJwt, json: user(User) })
  })

  test('a look-alike of an existing name: mixed scripts 400, the same skeleton 409, nothing stored', async () => {
    const s = await setup()
    // Cyrillic а + Latin "dmin"; Greek ο in "rοot"
    for (const User of ['\u0430dmin', 'r\u03bfot', 'p\u0430ypal']) await refused(s, 400, 'POST', '/api/users', { jwt: s.adminJwt, json: user(User) })
    for (const User of ['Admin', 'ADMIN', '\uff41\uff44\uff4d\uff49\uff4e', 'adrnin', 'admln'.replace('l', 'I')])
      await refused(s, 409, 'POST', '/api/users', { jwt: s.adminJwt, json: user(User) })
    const alice = await s.createUser({ User: 'alice' })
    await refused(s, 409, 'POST', '/api/users', { jwt: s.adminJwt, json: user('aIice') })
    await refused(s, 409, 'PUT', `/api/users/${alice.uid}`, { jwt: s.adminJwt, json: { User: 'Admin' } })
    // renaming oneself to another case of one's own name is no impersonation
    await ok(s.call('PUT', `/api/users/${alice.uid}`, { jwt: alice.jwt, json: { User: 'Alice' } }))
    // one script at a time is fine, in any script
    for (const User of ['Дмитрий', 'Σοφία', '山田たろう', 'josé.garcía-2']) await ok(s.call('POST', '/api/users', { jwt: s.adminJwt, json: user(User) }))
  })

  test('names are stored in NFC, and login finds them in either form', async () => {
    const s = await setup()
    const nfd = 'jose\u0301'
    const uid = (await ok(s.call('POST', '/api/users', { jwt: s.adminJwt, json: user(nfd, { Name: 'Jose\u0301 Garci\u0301a' }) }))).body
    const stored = (await ok(s.call('GET', `/api/users/${uid}`, { jwt: s.adminJwt }))).body
    expect(stored).toMatchObject({ User: 'jos\u00e9', Name: 'Jos\u00e9 Garc\u00eda' })
    for (const name of [nfd, 'jos\u00e9']) expect(await s.login(name, 'password-1234')).toBeString()
    // the NFD form of a taken name is the taken name
    await refused(s, 409, 'POST', '/api/users', { jwt: s.adminJwt, json: user('jos\u00e9') })
  })

  test('real names, e-mail addresses and group names refuse the same characters; a group description may hold line breaks', async () => {
    const s = await setup()
    const alice = await s.createUser()
    await refused(s, 400, 'POST', '/api/users', { jwt: s.adminJwt, json: user('bob', { Name: 'Bob\u202e' }) })
    await refused(s, 400, 'POST', '/api/users', { jwt: s.adminJwt, json: user('bob', { Email: 'b\u0000b@example.com' }) })
    await refused(s, 400, 'PUT', `/api/users/${alice.uid}`, { jwt: alice.jwt, json: { Name: 'Alice\u200b' } })
    await refused(s, 400, 'PUT', `/api/users/${alice.uid}`, { jwt: alice.jwt, json: { User: 'alice\u200b' } })
    await refused(s, 400, 'POST', '/api/groups', { jwt: s.adminJwt, json: { Name: 'ops\u202e' } })
    await refused(s, 400, 'POST', '/api/groups', { jwt: s.adminJwt, json: { Name: 'ops', Desc: 'bidi\u202e' } })
    const gid = (await ok(s.call('POST', '/api/groups', { jwt: s.adminJwt, json: { Name: 'ops', Desc: 'line one\nline two\ttab' } }))).body
    await refused(s, 400, 'PUT', `/api/groups/${gid}`, { jwt: s.adminJwt, json: { Name: 'o\u0000ps' } })
  })
})

describe('names of shared items refuse the same characters (the same class of fault)', () => {
  test('resource, dashboard, library entry and user file names and labels with a bidi override or NUL: 400, nothing stored', async () => {
    const s = await setup()
    const alice = await s.createUser()
    const spoof = 'invoice\u202Efdp.exe'
    await refused(s, 400, 'POST', '/api/resources', { jwt: alice.jwt, json: { ResourceName: spoof } })
    await refused(s, 400, 'POST', '/api/dashboards', { jwt: alice.jwt, json: { Name: spoof } })
    await refused(s, 400, 'POST', '/api/dashboards', { jwt: alice.jwt, json: { Name: 'ok', Labels: ['a\u0000b'] } })
    await refused(s, 400, 'POST', '/api/library', { jwt: alice.jwt, json: { Name: spoof, Query: 'q' } })
    await refused(s, 400, 'POST', '/api/library', { jwt: alice.jwt, json: { Name: 'ok', Labels: ['zero\u200bwidth'], Query: 'q' } })
    await refusedUpload(s, 400, 'POST', '/api/files', alice.jwt, 'x', { name: spoof })
    await refusedUpload(s, 400, 'POST', '/api/files', alice.jwt, 'x', { meta: JSON.stringify({ Name: 'ok', Labels: [spoof] }) })
    const r = (await ok(s.call('POST', '/api/resources', { jwt: alice.jwt, json: { ResourceName: 'r' } }))).body
    await refused(s, 400, 'PUT', `/api/resources/${r.GUID}`, { jwt: alice.jwt, json: { ResourceName: spoof } })
    await refused(s, 400, 'POST', `/api/resources/${r.GUID}/clone`, { jwt: alice.jwt, json: { Name: spoof } })
    const f = (await ok(send(s, 'POST', '/api/files', alice.jwt, 'x', { name: 'f' }))).body
    await refused(s, 400, 'PATCH', `/api/files/${f.GUID}`, { jwt: alice.jwt, json: { Name: spoof } })
    // names are kept in NFC
    const d = (await ok(s.call('POST', '/api/dashboards', { jwt: alice.jwt, json: { Name: 'cafe\u0301' } }))).body
    // a name stored before these rules may be sent back unchanged with the rest of the item (clients do)
    await s.store.dashboards.update(d, { name: spoof, labels: ['old\u200b'], updated: s.clock.now() })
    await s.store.users.update(alice.uid, { name: `Alice${'\u202e'}` })
    const legacy = (await ok(s.call('GET', `/api/dashboards/${d}`, { jwt: alice.jwt }))).body
    await ok(s.call('PUT', `/api/dashboards/${d}`, { jwt: alice.jwt, json: { ...legacy, Description: 'changed' } }))
    await ok(s.call('PUT', `/api/users/${alice.uid}`, { jwt: alice.jwt, json: { Name: `Alice${'\u202e'}`, Email: alice.Email } }))
    await refused(s, 400, 'PUT', `/api/dashboards/${d}`, { jwt: alice.jwt, json: { ...legacy, Labels: ['old\u200b', 'new\u200b'] } })
    await s.store.dashboards.update(d, { name: 'caf\u00e9', updated: s.clock.now() })
    expect((await ok(s.call('GET', `/api/dashboards/${d}`, { jwt: alice.jwt }))).body.Name).toBe('caf\u00e9')
  })
})

describe('CSV downloads neutralise formula cells (point 12)', () => {
  test('cells starting with =, +, -, @, tab or CR get a leading apostrophe; others are unchanged', async () => {
    const s = await setup()
    const texts = ['=HYPERLINK("http://evil","x")', '+1+1', '-2+3', '@SUM(A1)', '\tcmd', '\rcmd', 'plain', "'quoted"]
    const TS = (i: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString()
    await ok(s.call('POST', '/api/ingest/json', { jwt: s.adminJwt, json: texts.map((t, i) => ({ TS: TS(i), Tag: 'csv', SRC: '192.0.2.1', Data: Buffer.from(t).toString('base64') })) }))
    const id = (await ok(s.call('POST', '/api/searchctrl/launch', { jwt: s.adminJwt, json: { SearchString: 'tag=csv' } }))).body.SearchID
    await s.searches.settled()
    const csv = (await ok(s.call('GET', `/api/searchctrl/${id}/download/csv`, { jwt: s.adminJwt }))).text
    const cells = ["\"'=HYPERLINK(\"\"http://evil\"\",\"\"x\"\")\"", "'+1+1", "'-2+3", "'@SUM(A1)", "'\tcmd", "\"'\rcmd\"", 'plain', "'quoted"]
    expect(csv).toBe(`TS,Tag,SRC,Data\r\n${cells.map((c, i) => `${TS(i)},csv,192.0.2.1,${c}\r\n`).join('')}`)
  })
})
