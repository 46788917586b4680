// API tokens over HTTP (docs/api.md "API tokens", "Permissions", "Conventions"). The route × caller matrix in
// test/security.test.ts already checks every route for tokens with and without the route's permission, expired tokens,
// locked owners and admins' tokens on admin routes; this file covers the token API itself and the overlay rules around
// it.
import { describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ApiError } from '../../server/http/errors'
import { CAPABILITY_NAMES } from '../../server/rules/permissions'
import { hashSecret, newSecret } from './secret'
import { type CallOptions, type CallResult, type TestServer, expectError, refused, serverPerTest, storeSnapshot } from '../../test/helpers'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d+Z$/
const ZERO = '0001-01-01T00:00:00Z'
const RECORD_KEYS = ['capabilities', 'createdAt', 'description', 'expiresAt', 'id', 'name', 'uid']
const MINUTE = 60_000
const DAY = 24 * 60 * MINUTE

/**
 * The clients' permission names, written out here so that a name dropped from or added to permissions.ts is
 * noticed: the clients check every listed name against this list.
 */
const SPEC_NAMES = [
  ...['Dashboard', 'Resource', 'Template', 'Pivot', 'Macro', 'Library', 'Extractor', 'UserFile', 'Kit', 'Schedule', 'Playbook',
    'Notification', 'Token', 'Secret', 'Alert'].flatMap((n) => [`${n}Read`, `${n}Write`]),
  'Search', 'Download', 'SaveSearch', 'AttachSearch', 'BackgroundSearch', 'SetSearchGroup', 'SearchHistory', 'SearchGroupHistory',
  'SearchAllHistory', 'KitBuild', 'KitDownload', 'SOARLibs', 'SOAREmail', 'LicenseRead', 'Stats', 'Ingest', 'ListUsers',
  'ListGroups', 'ListGroupMembers', 'SystemInfoRead',
]

const setup = serverPerTest()

/** Request options authenticating with an API token secret. */
const bearer = (secret: string, header = 'Service-Token'): CallOptions => ({ headers: { [header]: secret } })

/** Creates a token as `as` (a JWT or token options); answers the create answer, secret included. */
async function makeToken(s: TestServer, as: string | CallOptions, body: Record<string, unknown>) {
  const res = await s.call('POST', '/api/tokens', { ...(typeof as === 'string' ? { jwt: as } : as), json: body })
  expect({ status: res.status, text: res.text }).toMatchObject({ status: 200 })
  return res.body as Record<string, any> & { id: string; token: string }
}

/** The record of a create or refresh answer, without the secret. */
const recordOf = ({ token: _secret, ...record }: Record<string, unknown>) => record

/** Which user a credential acts as: the UID from whoami, or the status when refused. */
async function whoami(s: TestServer, opts: CallOptions): Promise<number | string> {
  const res = await s.call('GET', '/api/info/whoami', opts)
  return res.status === 200 ? (res.body.UID as number) : `status ${res.status}`
}

/** Like `refused`, for refusals whose body also names the missing permission in `Cap`. */
async function refusedCap(s: TestServer, cap: string, method: string, path: string, opts: CallOptions): Promise<CallResult> {
  const before = storeSnapshot(s)
  const res = await s.call(method, path, opts)
  expectError(res, 403, { Cap: cap })
  expect(storeSnapshot(s)).toEqual(before)
  return res
}

/** The access-log line of one request; it is written after the response, so wait for it briefly. */
async function requestLog(s: TestServer, res: CallResult): Promise<Record<string, unknown>> {
  const rid = res.headers.get('x-request-id')
  const find = () => s.logs.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === 'request' && l.rid === rid)
  for (let i = 0; i < 100 && find().length === 0; i++) await Bun.sleep(5)
  expect(find()).toHaveLength(1)
  return find()[0]!
}

const future = (s: TestServer, ms: number) => new Date(s.clock.now() + ms).toISOString()

describe('create, list and get', () => {
  test('create answers the record and the secret; list and get answer the same record without it', async () => {
    const s = await setup()
    const u = await s.createUser()
    const created = await makeToken(s, u.jwt, {
      name: 'nightly export',
      description: 'runs at 2am',
      capabilities: ['Search', 'TokenRead', 'DashboardWrite', 'DashboardRead'],
    })
    expect(Object.keys(created).sort()).toEqual([...RECORD_KEYS, 'token'].sort())
    expect(created.id).toMatch(UUID)
    expect(created).toMatchObject({
      name: 'nightly export',
      description: 'runs at 2am',
      uid: u.uid,
      createdAt: new Date(s.clock.now()).toISOString(),
      expiresAt: ZERO,
      // canonical order, whatever the order asked in
      capabilities: ['DashboardRead', 'DashboardWrite', 'TokenRead', 'Search'],
    })
    expect(created.createdAt).toMatch(ISO)

    const record = recordOf(created)
    const list = await s.call('GET', '/api/tokens', { jwt: u.jwt })
    expect(list.status).toBe(200)
    expect(list.body).toEqual([record])
    const one = await s.call('GET', `/api/tokens/${created.id}`, { jwt: u.jwt })
    expect(one.status).toBe(200)
    expect(one.body).toEqual(record)
    for (const res of [list, one]) expect(res.text).not.toContain(created.token)

    // the secret authenticates as its owner; the description may be left out
    expect(await whoami(s, bearer(created.token))).toBe(u.uid)
    s.clock.advance(1)
    const second = await makeToken(s, u.jwt, { name: 'second', capabilities: ['Search'] })
    expect(second.description).toBe('')
    expect(second.id).not.toBe(created.id)
    expect(second.token).not.toBe(created.token)
    expect((await s.call('GET', '/api/tokens', { jwt: u.jwt })).body).toEqual([record, recordOf(second)])
  })

  test('an expiry with an offset comes back in UTC; null, "" and absent mean never', async () => {
    const s = await setup()
    const u = await s.createUser()
    const offset = await makeToken(s, u.jwt, { name: 'a', capabilities: ['Search'], expiresAt: '2999-06-01T12:30:00+02:00' })
    expect(offset.expiresAt).toBe('2999-06-01T10:30:00.000Z')
    for (const expiresAt of [null, '', undefined]) {
      const t = await makeToken(s, u.jwt, { name: 'b', capabilities: ['Search'], expiresAt })
      expect(t.expiresAt).toBe(ZERO)
    }
    expect((await s.call('GET', `/api/tokens/${offset.id}`, { jwt: u.jwt })).body.expiresAt).toBe('2999-06-01T10:30:00.000Z')
  })

  test('the token routes answer with one trailing slash too', async () => {
    const s = await setup()
    const u = await s.createUser()
    const t = await makeToken(s, u.jwt, { name: 'slash', capabilities: ['Search'] })
    expect((await s.call('GET', '/api/tokens/', { jwt: u.jwt })).body).toEqual([recordOf(t)])
    expect((await s.call('GET', `/api/tokens/${t.id}/`, { jwt: u.jwt })).body).toEqual(recordOf(t))
    expect((await s.call('GET', '/api/tokens/capabilities/', { jwt: u.jwt })).body).toEqual(CAPABILITY_NAMES)
    const put = await s.call('PUT', `/api/tokens/${t.id}/`, { jwt: u.jwt, json: { name: 'renamed' } })
    expect(put.body).toEqual({ ...recordOf(t), name: 'renamed' })
    expect((await s.call('DELETE', `/api/tokens/${t.id}/`, { jwt: u.jwt })).status).toBe(200)
    expect(await whoami(s, bearer(t.token))).toBe('status 401')
  })

  test('a user without tokens lists []', async () => {
    const s = await setup()
    const u = await s.createUser()
    const res = await s.call('GET', '/api/tokens', { jwt: u.jwt })
    expect(res.status).toBe(200)
    expect(res.text).toBe('[]')
  })
})

describe('secrets', () => {
  test('at least 32 random bytes in URL-safe base64, never stored in plain text', async () => {
    const s = await setup()
    const u = await s.createUser()
    const secrets: string[] = []
    for (let i = 0; i < 4; i++) secrets.push((await makeToken(s, u.jwt, { name: `t${i}`, capabilities: ['Search'] })).token)
    const refreshed = await s.call('PATCH', `/api/tokens/${(await s.call('GET', '/api/tokens', { jwt: u.jwt })).body[0].id}`, {
      jwt: u.jwt,
      json: { expiresAt: null },
    })
    expect(refreshed.status).toBe(200)
    secrets.push(refreshed.body.token)

    expect(new Set(secrets).size).toBe(secrets.length)
    for (const secret of secrets) {
      expect(secret).toMatch(/^[A-Za-z0-9_-]+$/)
      expect(Buffer.from(secret, 'base64url').length).toBeGreaterThanOrEqual(32)
    }

    // no cell of any table holds a secret (nor its standard base64 form)
    const tables = await s.testStore.tables()
    expect(tables).toContain('tokens')
    const cells: string[] = []
    for (const table of tables) for (const row of await s.rows(`SELECT * FROM ${table}`)) {
      for (const v of Object.values(row)) cells.push(v instanceof Uint8Array ? Buffer.from(v).toString('latin1') : String(v))
    }
    expect(cells.length).toBeGreaterThan(0)
    const tokenRows = await s.rows('SELECT * FROM tokens')
    expect(tokenRows).toHaveLength(4)
    for (const secret of secrets) {
      const forms = [secret, Buffer.from(secret, 'base64url').toString('base64'), Buffer.from(secret, 'base64url').toString('hex')]
      for (const form of forms) expect(cells.filter((c) => c.includes(form))).toEqual([])
    }
    // nor any file of the store (database, WAL)
    for (const file of readdirSync(s.dir)) {
      const bytes = readFileSync(join(s.dir, file))
      for (const secret of secrets) expect({ file, found: bytes.includes(secret) }).toEqual({ file, found: false })
    }
  })
})

describe('authentication by token', () => {
  test('Service-Token and its alias Gravwell-Token both authenticate; an unknown secret is 401', async () => {
    const s = await setup()
    const u = await s.createUser()
    const { token } = await makeToken(s, u.jwt, { name: 'script', capabilities: ['TokenRead'] })
    expect(await whoami(s, bearer(token))).toBe(u.uid)
    expect(await whoami(s, bearer(token, 'Gravwell-Token'))).toBe(u.uid)
    expect(await whoami(s, bearer(token, 'service-token'))).toBe(u.uid)
    const list = await s.call('GET', '/api/tokens', bearer(token, 'Gravwell-Token'))
    expect(list.status).toBe(200)
    expect(list.body).toHaveLength(1)
    for (const header of ['Service-Token', 'Gravwell-Token']) {
      expectError(await s.call('GET', '/api/info/whoami', bearer(`${token}x`, header)), 401)
      expectError(await s.call('GET', '/api/info/whoami', bearer(token.slice(0, -1), header)), 401)
    }
  })

  test('a JWT in Authorization takes precedence over a token sent with it', async () => {
    const s = await setup()
    const owner = await s.createUser()
    const other = await s.createUser()
    const { token } = await makeToken(s, owner.jwt, { name: 'script', capabilities: ['TokenRead'] })
    expect(await whoami(s, { jwt: other.jwt, ...bearer(token) })).toBe(other.uid)
    expect(await whoami(s, { jwt: other.jwt, ...bearer(token, 'Gravwell-Token') })).toBe(other.uid)
    // the request is a session request: session-only routes accept it
    const refresh = await s.call('GET', '/api/login/refreshtoken', { jwt: other.jwt, ...bearer(token) })
    expect(refresh.status).toBe(200)
    // a bad JWT is not rescued by a good token
    expectError(await s.call('GET', '/api/info/whoami', { jwt: 'not.a.jwt', ...bearer(token) }), 401)
  })
})

describe('POST /api/tokens validation', () => {
  const BAD: [string, unknown][] = [
    ['no name', { capabilities: ['Search'] }],
    ['empty name', { name: '', capabilities: ['Search'] }],
    ['blank name', { name: '   ', capabilities: ['Search'] }],
    ['name not a string', { name: 5, capabilities: ['Search'] }],
    ['unknown capability', { name: 'x', capabilities: ['Search', 'NoSuchThing'] }],
    ['capability in the wrong case', { name: 'x', capabilities: ['dashboardread'] }],
    ['capabilities not an array', { name: 'x', capabilities: 'Search' }],
    ['unknown category', { name: 'x', categories: ['Dashboards', 'NoSuchGroup'] }],
    ['a capability given as category', { name: 'x', categories: ['DashboardRead'] }],
    ['no permission at all', { name: 'x' }],
    ['empty permission lists', { name: 'x', capabilities: [], categories: [] }],
    ['expiry in the past', { name: 'x', capabilities: ['Search'], expiresAt: '2001-01-01T00:00:00Z' }],
    ['expiry not a time', { name: 'x', capabilities: ['Search'], expiresAt: 'tomorrow' }],
    ['expiry without a time of day', { name: 'x', capabilities: ['Search'], expiresAt: '2999-01-01' }],
    ['expiry in month 13', { name: 'x', capabilities: ['Search'], expiresAt: '2999-13-01T00:00:00Z' }],
    ['expiry a number', { name: 'x', capabilities: ['Search'], expiresAt: 32503680000 }],
  ]
  for (const [what, body] of BAD) {
    test(`${what}: 400, nothing created`, async () => {
      const s = await setup()
      const u = await s.createUser()
      await refused(s, 400, 'POST', '/api/tokens', { jwt: u.jwt, json: body })
      expect((await s.call('GET', '/api/tokens', { jwt: u.jwt })).body).toEqual([])
    })
  }

  test('an expiry of now or a moment ago: 400', async () => {
    const s = await setup()
    const u = await s.createUser()
    for (const ms of [0, -1000]) {
      await refused(s, 400, 'POST', '/api/tokens', { jwt: u.jwt, json: { name: 'x', capabilities: ['Search'], expiresAt: future(s, ms) } })
    }
    expect((await makeToken(s, u.jwt, { name: 'x', capabilities: ['Search'], expiresAt: future(s, 1000) })).expiresAt).toBe(future(s, 1000))
  })

  test('malformed JSON: 400, nothing created', async () => {
    const s = await setup()
    const u = await s.createUser()
    await refused(s, 400, 'POST', '/api/tokens', { jwt: u.jwt, body: '{"name": "x", ', headers: { 'content-type': 'application/json' } })
  })

  test('a permission beyond the owner\'s rights: 403 with Cap, nothing created; an admin may', async () => {
    const s = await setup()
    const u = await s.createUser()
    await refusedCap(s, 'SearchAllHistory', 'POST', '/api/tokens', { jwt: u.jwt, json: { name: 'x', capabilities: ['Search', 'SearchAllHistory'] } })
    expect((await s.call('GET', '/api/tokens', { jwt: u.jwt })).body).toEqual([])
    const admins = await makeToken(s, s.adminJwt, { name: 'x', capabilities: ['SearchAllHistory'] })
    expect(admins.capabilities).toEqual(['SearchAllHistory'])
  })
})

describe('permission groups', () => {
  test('a category adds all its permissions, merged with single ones in canonical order', async () => {
    const s = await setup()
    const u = await s.createUser()
    expect((await makeToken(s, u.jwt, { name: 'd', categories: ['Dashboards'] })).capabilities).toEqual(['DashboardRead', 'DashboardWrite'])
    const mixed = await makeToken(s, u.jwt, {
      name: 'm',
      capabilities: ['Search', 'DashboardRead', 'TokenRead'],
      categories: ['Tokens', 'Files'],
    })
    expect(mixed.capabilities).toEqual(['DashboardRead', 'UserFileRead', 'UserFileWrite', 'TokenRead', 'TokenWrite', 'Search'])
  })

  test('a group gives the owner those of its permissions they hold; named singly, one they lack is 403', async () => {
    const s = await setup()
    const u = await s.createUser()
    const search = await makeToken(s, u.jwt, { name: 'search', categories: ['Search'] })
    expect(search.capabilities).toContain('Search')
    expect(search.capabilities).not.toContain('SearchAllHistory')
    const asAdmin = await makeToken(s, s.adminJwt, { name: 'search', categories: ['Search'] })
    expect(asAdmin.capabilities).toContain('SearchAllHistory')
    await refusedCap(s, 'SearchAllHistory', 'POST', '/api/tokens', { jwt: u.jwt, json: { name: 'x', capabilities: ['SearchAllHistory'], categories: ['Search'] } })
  })

  test('every category of /api/info/capabilities expands to exactly its permissions', async () => {
    const s = await setup()
    const info = (await s.call('GET', '/api/info/capabilities', { jwt: s.adminJwt })).body as { Name: string; Category: string }[]
    const categories = [...new Set(info.map((c) => c.Category))]
    expect(categories.length).toBeGreaterThan(5)
    for (const category of categories) {
      // as the admin, who holds every permission (Search includes SearchAllHistory)
      const t = await makeToken(s, s.adminJwt, { name: category, categories: [category] })
      expect({ category, capabilities: t.capabilities }).toEqual({
        category,
        capabilities: info.filter((c) => c.Category === category).map((c) => c.Name),
      })
    }
  })
})

describe('listing', () => {
  test('own tokens; ?admin=true lists everyone\'s only for an admin\'s session', async () => {
    const s = await setup()
    const u1 = await s.createUser()
    const u2 = await s.createUser()
    const a = await makeToken(s, u1.jwt, { name: 'a', capabilities: ['TokenRead'] })
    s.clock.advance(1000)
    const b = await makeToken(s, u1.jwt, { name: 'b', capabilities: ['Search'] })
    const c = await makeToken(s, u2.jwt, { name: 'c', capabilities: ['TokenRead'] })
    const d = await makeToken(s, s.adminJwt, { name: 'd', capabilities: ['TokenRead', 'TokenWrite'] })
    const ids = async (opts: CallOptions, query = '') => {
      const res = await s.call('GET', `/api/tokens${query}`, opts)
      expect(res.status).toBe(200)
      for (const t of [a, b, c, d]) expect(res.text).not.toContain(t.token)
      return (res.body as { id: string }[]).map((t) => t.id).sort()
    }
    const sorted = (...ts: { id: string }[]) => ts.map((t) => t.id).sort()

    expect(await ids({ jwt: u1.jwt })).toEqual(sorted(a, b))
    expect(await ids({ jwt: u1.jwt }, '?admin=true')).toEqual(sorted(a, b))
    expect(await ids({ jwt: u2.jwt }, '?admin=true')).toEqual(sorted(c))
    expect(await ids(bearer(c.token), '?admin=true')).toEqual(sorted(c))
    expect(await ids({ jwt: s.adminJwt })).toEqual(sorted(d))
    expect(await ids({ jwt: s.adminJwt }, '?admin=false')).toEqual(sorted(d))
    expect(await ids({ jwt: s.adminJwt }, '?admin=true')).toEqual(sorted(a, b, c, d))
    // an admin's token carries no admin rights
    expect(await ids(bearer(d.token), '?admin=true')).toEqual(sorted(d))

    const all = (await s.call('GET', '/api/tokens?admin=true', { jwt: s.adminJwt })).body as Record<string, unknown>[]
    expect(all.find((t) => t.id === c.id)).toEqual(recordOf(c))
    for (const t of all) expect(Object.keys(t).sort()).toEqual(RECORD_KEYS)
  })
})

describe('token ids in paths', () => {
  test('an id in upper case names the same token', async () => {
    const s = await setup()
    const u = await s.createUser()
    const t = await makeToken(s, u.jwt, { name: 'case', capabilities: ['Search'] })
    const res = await s.call('GET', `/api/tokens/${t.id.toUpperCase()}`, { jwt: u.jwt })
    expect(res.status).toBe(200)
    expect(res.body.id).toBe(t.id)
  })
})

describe('someone else\'s token', () => {
  test('another user, their token, or an admin\'s token: 404 for get, put, patch and delete', async () => {
    const s = await setup()
    const owner = await s.createUser()
    const other = await s.createUser()
    const target = await makeToken(s, owner.jwt, { name: 'mine', capabilities: ['Search'] })
    const othersToken = await makeToken(s, other.jwt, { name: 'theirs', capabilities: ['TokenRead', 'TokenWrite'] })
    const adminsToken = await makeToken(s, s.adminJwt, { name: 'admins', capabilities: CAPABILITY_NAMES })
    const path = `/api/tokens/${target.id}`
    for (const as of [{ jwt: other.jwt }, bearer(othersToken.token), bearer(adminsToken.token)]) {
      await refused(s, 404, 'GET', path, as)
      await refused(s, 404, 'PUT', path, { ...as, json: { name: 'stolen' } })
      await refused(s, 404, 'PATCH', path, { ...as, json: { expiresAt: null } })
      await refused(s, 404, 'DELETE', path, as)
    }
    expect(await whoami(s, bearer(target.token))).toBe(owner.uid)
  })

  test('an unknown id is 404 and a malformed one 400', async () => {
    const s = await setup()
    const u = await s.createUser()
    const unknown = `/api/tokens/${crypto.randomUUID()}`
    await refused(s, 404, 'GET', unknown, { jwt: u.jwt })
    await refused(s, 404, 'PUT', unknown, { jwt: u.jwt, json: { name: 'x' } })
    await refused(s, 404, 'PATCH', unknown, { jwt: u.jwt, json: {} })
    await refused(s, 404, 'DELETE', unknown, { jwt: u.jwt })
    await refused(s, 400, 'GET', '/api/tokens/not-a-uuid', { jwt: u.jwt })
    await refused(s, 400, 'DELETE', '/api/tokens/not-a-uuid', { jwt: u.jwt })
  })

  test('an admin\'s session may get, change, refresh and delete any token, within the owner\'s rights', async () => {
    const s = await setup()
    const owner = await s.createUser()
    const t = await makeToken(s, owner.jwt, { name: 'mine', capabilities: ['Search'] })
    const path = `/api/tokens/${t.id}`
    expect((await s.call('GET', path, { jwt: s.adminJwt })).body).toEqual(recordOf(t))

    const put = await s.call('PUT', path, { jwt: s.adminJwt, json: { description: 'checked by admin', capabilities: ['Search', 'Download'] } })
    expect(put.status).toBe(200)
    expect(put.body).toEqual({ ...recordOf(t), description: 'checked by admin', capabilities: ['Search', 'Download'] })
    // the owner's rights count, not the admin's
    await refusedCap(s, 'SearchAllHistory', 'PUT', path, { jwt: s.adminJwt, json: { capabilities: ['SearchAllHistory'] } })

    const patched = await s.call('PATCH', path, { jwt: s.adminJwt, json: { expiresAt: future(s, DAY) } })
    expect(patched.status).toBe(200)
    expect(patched.body.uid).toBe(owner.uid)
    expect(await whoami(s, bearer(patched.body.token))).toBe(owner.uid)
    expect(await whoami(s, bearer(t.token))).toBe('status 401')

    const del = await s.call('DELETE', path, { jwt: s.adminJwt })
    expect(del.status).toBe(200)
    expect(del.body).toEqual({})
    expect((await s.call('GET', '/api/tokens', { jwt: owner.jwt })).body).toEqual([])
    expect(await whoami(s, bearer(patched.body.token))).toBe('status 401')
  })
})

describe('PUT /api/tokens/{id}', () => {
  test('changes what it is given and keeps the rest; never the secret', async () => {
    const s = await setup()
    const u = await s.createUser()
    const t = await makeToken(s, u.jwt, { name: 'a', description: 'first', capabilities: ['DashboardRead'], expiresAt: future(s, DAY) })
    const path = `/api/tokens/${t.id}`
    s.clock.advance(MINUTE)
    let expected: Record<string, unknown> = recordOf(t)
    const put = async (json: unknown, changes: Record<string, unknown>) => {
      const res = await s.call('PUT', path, { jwt: u.jwt, json })
      expected = { ...expected, ...changes }
      expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: expected })
      expect((await s.call('GET', path, { jwt: u.jwt })).body).toEqual(expected)
    }
    await put({ name: 'b' }, { name: 'b' })
    await put({ description: 'second' }, { description: 'second' })
    await put({ description: '' }, { description: '' })
    await put({ capabilities: ['Search'], categories: ['Tokens'] }, { capabilities: ['TokenRead', 'TokenWrite', 'Search'] })
    await put({ categories: ['Dashboards'] }, { capabilities: ['DashboardRead', 'DashboardWrite'] })
    const later = future(s, 2 * DAY)
    await put({ expiresAt: later }, { expiresAt: later })
    await put({ expiresAt: null }, { expiresAt: ZERO })
    await put({}, {})
    expect(expected.createdAt).toBe(t.createdAt)

    // a secret in the body is ignored: the old one still works, the offered one does not
    const offered = Buffer.alloc(32, 7).toString('base64url')
    const res = await s.call('PUT', path, { jwt: u.jwt, json: { name: 'c', token: offered } })
    expect(res.status).toBe(200)
    expect(Object.keys(res.body).sort()).toEqual(RECORD_KEYS)
    expect(res.body.name).toBe('c')
    expect(await whoami(s, bearer(t.token))).toBe(u.uid)
    expect(await whoami(s, bearer(offered))).toBe('status 401')
  })

  test('null strings are empty strings (docs/api.md "Conventions"): a null description clears it, an empty or null name keeps it', async () => {
    const s = await setup()
    const u = await s.createUser()
    const t = await makeToken(s, u.jwt, { name: 'a', description: 'first', capabilities: ['Search'] })
    const path = `/api/tokens/${t.id}`
    const res = await s.call('PUT', path, { jwt: u.jwt, json: { description: null } })
    expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: { ...recordOf(t), description: '' } })
    for (const name of ['', null]) expect((await s.call('PUT', path, { jwt: u.jwt, json: { name } })).body).toEqual({ ...recordOf(t), description: '' })
    expect((await s.call('GET', path, { jwt: u.jwt })).body).toEqual({ ...recordOf(t), description: '' })
  })

  test('an expiry in the past is accepted: the token is expired at once (401) and stays listed', async () => {
    const s = await setup()
    const u = await s.createUser()
    const t = await makeToken(s, u.jwt, { name: 'a', capabilities: ['Search', 'TokenRead'], expiresAt: future(s, DAY) })
    expect(await whoami(s, bearer(t.token))).toBe(u.uid)
    const past = new Date(s.clock.now() - MINUTE).toISOString()
    const res = await s.call('PUT', `/api/tokens/${t.id}`, { jwt: u.jwt, json: { expiresAt: past } })
    expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: { ...recordOf(t), expiresAt: past } })
    expect(await whoami(s, bearer(t.token))).toBe('status 401')
    expect((await s.call('GET', '/api/tokens', { jwt: u.jwt })).body).toEqual([{ ...recordOf(t), expiresAt: past }])
    // a refresh with a later expiry makes it usable again (under a new secret)
    const refreshed = await s.call('PATCH', `/api/tokens/${t.id}`, { jwt: u.jwt, json: { expiresAt: future(s, DAY) } })
    expect(await whoami(s, bearer(refreshed.body.token))).toBe(u.uid)
  })

  const BAD: [string, unknown][] = [
    ['blank name', { name: ' \t ' }],
    ['unknown capability', { capabilities: ['NoSuchThing'] }],
    ['unknown category', { categories: ['NoSuchGroup'] }],
    ['no permission left', { capabilities: [] }],
    ['expiry not a time', { expiresAt: 'next week' }],
    ['description a number', { description: 5 }],
    ['name an object', { name: {} }],
    ['name and a bad capability together', { name: 'renamed', capabilities: ['Nope'] }],
  ]
  for (const [what, body] of BAD) {
    test(`${what}: 400, nothing changed`, async () => {
      const s = await setup()
      const u = await s.createUser()
      const t = await makeToken(s, u.jwt, { name: 'a', capabilities: ['Search'] })
      await refused(s, 400, 'PUT', `/api/tokens/${t.id}`, { jwt: u.jwt, json: body })
      expect(await whoami(s, bearer(t.token))).toBe(u.uid)
    })
  }

  test('malformed JSON: 400; a permission beyond the owner\'s rights: 403 with Cap', async () => {
    const s = await setup()
    const u = await s.createUser()
    const t = await makeToken(s, u.jwt, { name: 'a', capabilities: ['Search'] })
    await refused(s, 400, 'PUT', `/api/tokens/${t.id}`, { jwt: u.jwt, body: '{"name":', headers: { 'content-type': 'application/json' } })
    await refusedCap(s, 'SearchAllHistory', 'PUT', `/api/tokens/${t.id}`, { jwt: u.jwt, json: { name: 'n', capabilities: ['SearchAllHistory'] } })
    expect((await s.call('GET', `/api/tokens/${t.id}`, { jwt: u.jwt })).body).toEqual(recordOf(t))
  })
})

describe('PATCH /api/tokens/{id} (refresh)', () => {
  test('a new secret and the given expiry; the old secret stops working at once', async () => {
    const s = await setup()
    const u = await s.createUser()
    const t = await makeToken(s, u.jwt, { name: 'a', description: 'd', capabilities: ['Search', 'TokenRead'], expiresAt: future(s, DAY) })
    const path = `/api/tokens/${t.id}`
    s.clock.advance(MINUTE)
    const expiresAt = future(s, 7 * DAY)
    const res = await s.call('PATCH', path, { jwt: u.jwt, json: { expiresAt } })
    expect(res.status).toBe(200)
    expect(Object.keys(res.body).sort()).toEqual([...RECORD_KEYS, 'token'].sort())
    expect(recordOf(res.body)).toEqual({ ...recordOf(t), expiresAt })
    const secret = res.body.token as string
    expect(secret).not.toBe(t.token)
    expect(Buffer.from(secret, 'base64url').length).toBeGreaterThanOrEqual(32)
    expect(await whoami(s, bearer(t.token))).toBe('status 401')
    expect(await whoami(s, bearer(secret))).toBe(u.uid)
    const got = await s.call('GET', path, { jwt: u.jwt })
    expect(got.body).toEqual({ ...recordOf(t), expiresAt })
    expect(got.text).not.toContain(secret)

    // null: never expires; and again a new secret
    const again = await s.call('PATCH', path, { jwt: u.jwt, json: { expiresAt: null } })
    expect(again.status).toBe(200)
    expect(again.body.expiresAt).toBe(ZERO)
    expect(again.body.token).not.toBe(secret)
    expect(await whoami(s, bearer(secret))).toBe('status 401')
    expect(await whoami(s, bearer(again.body.token))).toBe(u.uid)
    s.clock.advance(365 * DAY)
    expect(await whoami(s, bearer(again.body.token))).toBe(u.uid)
  })

  test('a token with TokenWrite may refresh itself; its old secret then stops working', async () => {
    const s = await setup()
    const u = await s.createUser()
    const t = await makeToken(s, u.jwt, { name: 'self-renewing', capabilities: ['TokenWrite'] })
    const res = await s.call('PATCH', `/api/tokens/${t.id}`, { ...bearer(t.token), json: { expiresAt: future(s, DAY) } })
    expect(res.status).toBe(200)
    expect(await whoami(s, bearer(t.token))).toBe('status 401')
    expect(await whoami(s, bearer(res.body.token))).toBe(u.uid)
  })

  for (const [what, expiresAt] of [['in the past', '2001-01-01T00:00:00Z'], ['not a time', 'soon'], ['a number', 5]] as const) {
    test(`an expiry ${what}: 400, the secret and expiry unchanged`, async () => {
      const s = await setup()
      const u = await s.createUser()
      const t = await makeToken(s, u.jwt, { name: 'a', capabilities: ['Search'], expiresAt: future(s, DAY) })
      await refused(s, 400, 'PATCH', `/api/tokens/${t.id}`, { jwt: u.jwt, json: { expiresAt } })
      expect(await whoami(s, bearer(t.token))).toBe(u.uid)
      expect((await s.call('GET', `/api/tokens/${t.id}`, { jwt: u.jwt })).body).toEqual(recordOf(t))
    })
  }
})

describe('expiry', () => {
  test('an expired token is 401 but stays listed, and a refresh makes it work again', async () => {
    const s = await setup()
    const u = await s.createUser()
    const expiresAt = future(s, MINUTE)
    const t = await makeToken(s, u.jwt, { name: 'short', capabilities: ['TokenRead', 'TokenWrite'], expiresAt })
    s.clock.advance(MINUTE - 1)
    expect(await whoami(s, bearer(t.token))).toBe(u.uid)
    s.clock.advance(1)
    expectError(await s.call('GET', '/api/info/whoami', bearer(t.token)), 401)
    expectError(await s.call('GET', '/api/tokens', bearer(t.token)), 401)
    // it cannot refresh itself once expired
    await refused(s, 401, 'PATCH', `/api/tokens/${t.id}`, { ...bearer(t.token), json: { expiresAt: null } })

    expect((await s.call('GET', '/api/tokens', { jwt: u.jwt })).body).toEqual([recordOf(t)])
    expect((await s.call('GET', `/api/tokens/${t.id}`, { jwt: u.jwt })).body.expiresAt).toBe(expiresAt)

    const refreshed = await s.call('PATCH', `/api/tokens/${t.id}`, { jwt: u.jwt, json: { expiresAt: future(s, DAY) } })
    expect(refreshed.status).toBe(200)
    expect(await whoami(s, bearer(refreshed.body.token))).toBe(u.uid)
    expect(await whoami(s, bearer(t.token))).toBe('status 401')
  })

  test('an expired token can be deleted', async () => {
    const s = await setup()
    const u = await s.createUser()
    const t = await makeToken(s, u.jwt, { name: 'short', capabilities: ['Search'], expiresAt: future(s, MINUTE) })
    s.clock.advance(2 * MINUTE)
    const res = await s.call('DELETE', `/api/tokens/${t.id}`, { jwt: u.jwt })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({})
    expect((await s.call('GET', '/api/tokens', { jwt: u.jwt })).body).toEqual([])
  })
})

describe('deleting and locking', () => {
  test('a deleted token is 401 at once and gone; deleting it again is 404', async () => {
    const s = await setup()
    const u = await s.createUser()
    const t = await makeToken(s, u.jwt, { name: 'a', capabilities: ['TokenRead'] })
    const keep = await makeToken(s, u.jwt, { name: 'b', capabilities: ['TokenRead'] })
    expect(await whoami(s, bearer(t.token))).toBe(u.uid)
    const res = await s.call('DELETE', `/api/tokens/${t.id}`, { jwt: u.jwt })
    expect(res.status).toBe(200)
    expect(res.text).toBe('{}')
    expectError(await s.call('GET', '/api/info/whoami', bearer(t.token)), 401)
    await refused(s, 404, 'GET', `/api/tokens/${t.id}`, { jwt: u.jwt })
    await refused(s, 404, 'DELETE', `/api/tokens/${t.id}`, { jwt: u.jwt })
    expect((await s.call('GET', '/api/tokens', { jwt: u.jwt })).body).toEqual([recordOf(keep)])
    expect(await whoami(s, bearer(keep.token))).toBe(u.uid)
  })

  test('deleting the owner removes all their tokens', async () => {
    const s = await setup()
    const u = await s.createUser()
    const other = await s.createUser()
    const t1 = await makeToken(s, u.jwt, { name: 'a', capabilities: ['Search'] })
    const t2 = await makeToken(s, u.jwt, { name: 'b', capabilities: ['TokenRead'], expiresAt: future(s, DAY) })
    const kept = await makeToken(s, other.jwt, { name: 'c', capabilities: ['Search'] })
    expect((await s.call('DELETE', `/api/users/${u.uid}`, { jwt: s.adminJwt })).status).toBe(200)
    for (const t of [t1, t2]) expectError(await s.call('GET', '/api/info/whoami', bearer(t.token)), 401)
    expect((await s.call('GET', '/api/tokens?admin=true', { jwt: s.adminJwt })).body).toEqual([recordOf(kept)])
    expect(await s.rows('SELECT id FROM tokens WHERE uid = ?', [u.uid])).toEqual([])
    expect(await whoami(s, bearer(kept.token))).toBe(other.uid)
  })

  test('locking the owner makes every token 401; unlocking makes them work again', async () => {
    const s = await setup()
    const u = await s.createUser()
    const t1 = await makeToken(s, u.jwt, { name: 'a', capabilities: ['TokenRead'] })
    const t2 = await makeToken(s, u.jwt, { name: 'b', capabilities: ['TokenRead'] })
    expect((await s.call('PUT', `/api/users/${u.uid}/lock`, { jwt: s.adminJwt })).status).toBe(200)
    for (const t of [t1, t2]) {
      expectError(await s.call('GET', '/api/info/whoami', bearer(t.token)), 401)
      expectError(await s.call('GET', '/api/tokens', bearer(t.token)), 401)
    }
    // still listed for the admin
    expect((await s.call('GET', '/api/tokens?admin=true', { jwt: s.adminJwt })).body).toHaveLength(2)
    expect((await s.call('DELETE', `/api/users/${u.uid}/lock`, { jwt: s.adminJwt })).status).toBe(200)
    for (const t of [t1, t2]) expect(await whoami(s, bearer(t.token))).toBe(u.uid)
  })
})

describe('the overlay on the owner\'s rights', () => {
  test('demoting an admin takes SearchAllHistory from their token at once', async () => {
    const s = await setup()
    const a = await s.createUser({ Admin: true })
    const t = await makeToken(s, a.jwt, { name: 'history', capabilities: ['SearchAllHistory', 'Search'] })
    // no route declares SearchAllHistory yet: ask the guard directly, as a route declaring it would
    const request = (secret = t.token) => new Request('http://localhost/api/searchhistory', { headers: { 'Service-Token': secret } })
    const refusal = async (secret = t.token) => {
      try {
        await s.auth.authorize(request(secret), { key: 'SearchAllHistory' })
      } catch (e) {
        return e instanceof ApiError ? { status: e.status, extra: e.extra } : { error: String(e) }
      }
      return 'admitted'
    }
    const caller = await s.auth.authorize(request(), { key: 'SearchAllHistory' })
    expect({ uid: caller.uid, admin: caller.admin, token: caller.token?.id }).toEqual({ uid: a.uid, admin: false, token: t.id })
    // a token of the same admin that does not list it is refused
    const without = await makeToken(s, a.jwt, { name: 'search only', capabilities: ['Search'] })
    expect(await refusal(without.token)).toEqual({ status: 403, extra: { Cap: 'SearchAllHistory' } })

    expect((await s.call('DELETE', `/api/users/${a.uid}/admin`, { jwt: s.adminJwt })).status).toBe(200)
    expect(await refusal()).toEqual({ status: 403, extra: { Cap: 'SearchAllHistory' } })
    // the rest of the token still works
    expect((await s.auth.authorize(request(), { key: 'Search' })).uid).toBe(a.uid)
    expect(await whoami(s, bearer(t.token))).toBe(a.uid)

    expect((await s.call('PUT', `/api/users/${a.uid}/admin`, { jwt: s.adminJwt })).status).toBe(200)
    expect(await refusal()).toBe('admitted')
  })

  test('a token without the permission is refused with Cap even when the owner holds it', async () => {
    const s = await setup()
    const u = await s.createUser()
    const t = await makeToken(s, u.jwt, { name: 'reader', capabilities: ['TokenRead'] })
    await refusedCap(s, 'TokenWrite', 'POST', '/api/tokens', { ...bearer(t.token), json: { name: 'x', capabilities: ['Search'] } })
    await refusedCap(s, 'TokenWrite', 'DELETE', `/api/tokens/${t.id}`, bearer(t.token))
    await refusedCap(s, 'TokenWrite', 'PUT', `/api/tokens/${t.id}`, { ...bearer(t.token), json: { capabilities: ['TokenRead', 'TokenWrite'] } })
    expect((await s.call('GET', `/api/tokens/${t.id}`, bearer(t.token))).body).toEqual(recordOf(t))
  })
})

describe('tokens making tokens', () => {
  test('a token with TokenWrite creates tokens with its own permissions, never more; children inherit nothing', async () => {
    const s = await setup()
    const u = await s.createUser()
    const parent = await makeToken(s, u.jwt, { name: 'parent', capabilities: ['TokenRead', 'TokenWrite', 'DashboardRead', 'DashboardWrite'] })
    const child = await makeToken(s, bearer(parent.token), { name: 'child', capabilities: ['DashboardRead'] })
    expect(child).toMatchObject({ uid: u.uid, name: 'child', capabilities: ['DashboardRead'], expiresAt: ZERO })
    expect(child.token).not.toBe(parent.token)
    expect(await whoami(s, bearer(child.token))).toBe(u.uid)

    // the child cannot make or list tokens
    await refusedCap(s, 'TokenWrite', 'POST', '/api/tokens', { ...bearer(child.token), json: { name: 'grandchild', capabilities: ['DashboardRead'] } })
    await refusedCap(s, 'TokenRead', 'GET', '/api/tokens', bearer(child.token))

    // a permission the parent lacks, though its owner holds it, is refused (a token would otherwise trade itself for a
    // stronger one); a category gives those of its permissions the parent holds
    await refusedCap(s, 'KitBuild', 'POST', '/api/tokens', { ...bearer(parent.token), json: { name: 'x', capabilities: ['KitBuild'] } })
    await refusedCap(s, 'KitBuild', 'PUT', `/api/tokens/${child.id}`, { ...bearer(parent.token), json: { capabilities: ['DashboardRead', 'KitBuild'] } })
    const grouped = await makeToken(s, bearer(parent.token), { name: 'grouped', categories: ['Dashboards', 'Files'] })
    expect(grouped.capabilities).toEqual(['DashboardRead', 'DashboardWrite'])
    // never beyond the owner's rights
    await refusedCap(s, 'SearchAllHistory', 'POST', '/api/tokens', { ...bearer(parent.token), json: { name: 'x', capabilities: ['SearchAllHistory'] } })
    // nor by refreshing a stronger token of the same owner, which would hand over its secret
    const stronger = await makeToken(s, u.jwt, { name: 'stronger', capabilities: ['TokenWrite', 'KitBuild'] })
    await refusedCap(s, 'KitBuild', 'PATCH', `/api/tokens/${stronger.id}`, { ...bearer(parent.token), json: { expiresAt: null } })
    expect(await whoami(s, bearer(stronger.token))).toBe(u.uid)
    const refreshed = await s.call('PATCH', `/api/tokens/${child.id}`, { ...bearer(parent.token), json: { expiresAt: null } })
    expect(refreshed.status).toBe(200)

    const listed = (await s.call('GET', '/api/tokens', bearer(parent.token))).body as { id: string }[]
    expect(listed.map((t) => t.id).sort()).toEqual([parent.id, child.id, grouped.id, stronger.id].sort())
  })

  test('an admin\'s token may give a new token an admin\'s permission, as its owner could', async () => {
    const s = await setup()
    const parent = await makeToken(s, s.adminJwt, { name: 'parent', capabilities: ['TokenWrite', 'SearchAllHistory'] })
    const child = await makeToken(s, bearer(parent.token), { name: 'child', capabilities: ['SearchAllHistory'] })
    expect(child).toMatchObject({ uid: 1, capabilities: ['SearchAllHistory'] })
  })
})

describe('a token never outlives the token that sets its expiry', () => {
  test('an expiring token cannot make itself, or a token it creates, changes or refreshes, expire later or never', async () => {
    const s = await setup()
    const u = await s.createUser()
    const caps = ['TokenRead', 'TokenWrite', 'DashboardRead']
    const ends = future(s, 3_600_000)
    const self = await makeToken(s, u.jwt, { name: 'self', capabilities: caps, expiresAt: ends })
    const as = bearer(self.token)
    const later = future(s, 3_600_001)
    for (const expiresAt of [null, '', later, '0001-01-01T00:00:00Z']) {
      await refused(s, 403, 'PUT', `/api/tokens/${self.id}`, { ...as, json: { expiresAt } })
      await refused(s, 403, 'PATCH', `/api/tokens/${self.id}`, { ...as, json: { expiresAt } })
      await refused(s, 403, 'POST', '/api/tokens', { ...as, json: { name: 'child', capabilities: ['DashboardRead'], expiresAt } })
    }
    await refused(s, 403, 'POST', '/api/tokens', { ...as, json: { name: 'child', capabilities: ['DashboardRead'] } })
    // another token of the owner, never-expiring: this one cannot stretch it, refresh it, or give it "never" again
    const other = await makeToken(s, u.jwt, { name: 'other', capabilities: ['DashboardRead'], expiresAt: future(s, 60_000) })
    await refused(s, 403, 'PUT', `/api/tokens/${other.id}`, { ...as, json: { expiresAt: null } })
    await refused(s, 403, 'PATCH', `/api/tokens/${other.id}`, { ...as, json: { expiresAt: later } })
    expect((await s.call('GET', `/api/tokens/${self.id}`, as)).body.expiresAt).toBe(self.expiresAt)

    // up to its own end, all of it is allowed
    const child = await makeToken(s, as, { name: 'child', capabilities: ['DashboardRead'], expiresAt: ends })
    expect(child.expiresAt).toBe(self.expiresAt)
    expect((await s.call('PUT', `/api/tokens/${other.id}`, { ...as, json: { expiresAt: ends } })).status).toBe(200)
    const sooner = future(s, 1_800_000)
    expect((await s.call('PUT', `/api/tokens/${self.id}`, { ...as, json: { expiresAt: sooner } })).status).toBe(200)
    const refreshed = await s.call('PATCH', `/api/tokens/${self.id}`, { ...as, json: { expiresAt: sooner } })
    expect(refreshed.status).toBe(200)
    // the refreshed token is bound by its new, earlier end
    await refused(s, 403, 'PUT', `/api/tokens/${self.id}`, { ...bearer(refreshed.body.token), json: { expiresAt: ends } })
    // a never-expiring token, and a login session, set any expiry
    const forever = await makeToken(s, u.jwt, { name: 'forever', capabilities: caps })
    expect((await s.call('PUT', `/api/tokens/${self.id}`, { ...bearer(forever.token), json: { expiresAt: null } })).status).toBe(200)
    expect((await s.call('PUT', `/api/tokens/${other.id}`, { jwt: u.jwt, json: { expiresAt: null } })).status).toBe(200)
  })
})

describe('routes a token never reaches', () => {
  test('session-only routes refuse a token holding every permission: 403, nothing changed', async () => {
    const s = await setup()
    const u = await s.createUser()
    const all = CAPABILITY_NAMES.filter((c) => c !== 'SearchAllHistory')
    const t = await makeToken(s, u.jwt, { name: 'everything', capabilities: all })
    await refused(s, 403, 'PUT', '/api/logout', bearer(t.token))
    await refused(s, 403, 'GET', '/api/login/refreshtoken', bearer(t.token))
    await refused(s, 403, 'PUT', `/api/users/${u.uid}/pwd`, { ...bearer(t.token), json: { OrigPass: u.Pass, NewPass: 'hijacked-password' } })
    // the session and the password are untouched
    expect(await whoami(s, { jwt: u.jwt })).toBe(u.uid)
    expect(await s.login(u.User, u.Pass)).toBeString()
  })
})

describe('policy: token API for admins only', () => {
  test('non-admins get 403 on every token route; admins, by session or token, may still use it', async () => {
    const s = await setup({ tokenApiAdminOnly: true })
    const u = await s.createUser()
    // a token the user made before the policy was switched on
    const old = { id: crypto.randomUUID(), uid: u.uid, name: 'old', description: '', capabilities: ['TokenRead', 'TokenWrite'], created: s.clock.now(), expires: 0 }
    const oldSecret = newSecret()
    await s.store.tokens.create(old, hashSecret(oldSecret))
    const path = `/api/tokens/${old.id}`
    const routes: [string, string, unknown][] = [
      ['GET', '/api/tokens', undefined],
      ['GET', '/api/tokens?admin=true', undefined],
      ['POST', '/api/tokens', { name: 'x', capabilities: ['Search'] }],
      ['GET', '/api/tokens/capabilities', undefined],
      ['GET', path, undefined],
      ['PUT', path, { name: 'renamed' }],
      ['PATCH', path, { expiresAt: null }],
      ['DELETE', path, undefined],
    ]
    for (const [method, p, json] of routes) {
      await refused(s, 403, method, p, { jwt: u.jwt, json })
      await refused(s, 403, method, p, { ...bearer(oldSecret), json })
    }
    // describing the permissions is not part of the token API
    expect((await s.call('GET', '/api/info/capabilities', { jwt: u.jwt })).status).toBe(200)

    const admin = await makeToken(s, s.adminJwt, { name: 'admin', capabilities: ['TokenRead', 'TokenWrite', 'Search'] })
    const a2 = await s.createUser({ Admin: true })
    const viaToken = await makeToken(s, bearer(admin.token), { name: 'by token', capabilities: ['Search'] })
    const viaSecondAdmin = await makeToken(s, a2.jwt, { name: 'second admin', capabilities: ['Search'] })
    expect((await s.call('GET', '/api/tokens/capabilities', { jwt: s.adminJwt })).status).toBe(200)
    expect((await s.call('GET', '/api/tokens', bearer(admin.token))).body).toHaveLength(2)
    expect((await s.call('GET', '/api/tokens?admin=true', { jwt: s.adminJwt })).body).toHaveLength(4)
    expect((await s.call('PUT', `/api/tokens/${viaToken.id}`, { jwt: s.adminJwt, json: { name: 'renamed' } })).status).toBe(200)
    expect((await s.call('PATCH', `/api/tokens/${viaSecondAdmin.id}`, { jwt: a2.jwt, json: {} })).status).toBe(200)
    expect((await s.call('DELETE', path, { jwt: s.adminJwt })).status).toBe(200)
  })
})

describe('request log', () => {
  test('a token request is logged with the token id; no line holds a secret', async () => {
    const s = await setup()
    const u = await s.createUser()
    const t = await makeToken(s, u.jwt, { name: 'logged', capabilities: ['TokenRead', 'TokenWrite', 'Search'] })
    const child = await makeToken(s, bearer(t.token), { name: 'child', capabilities: ['Search'] })
    const refreshed = await s.call('PATCH', `/api/tokens/${child.id}`, bearer(t.token))
    expect(refreshed.status).toBe(200)

    const byToken = await s.call('GET', '/api/info/whoami', bearer(t.token))
    expect(await requestLog(s, byToken)).toMatchObject({ status: 200, uid: u.uid, token: t.id })
    const refusedOne = await s.call('POST', '/api/users', bearer(t.token))
    expect(await requestLog(s, refusedOne)).toMatchObject({ status: 403, uid: u.uid, token: t.id })
    const bySession = await requestLog(s, await s.call('GET', '/api/info/whoami', { jwt: u.jwt, ...bearer(t.token) }))
    expect(bySession.uid).toBe(u.uid)
    expect(bySession).not.toHaveProperty('token')
    const unknown = await requestLog(s, await s.call('GET', '/api/info/whoami', bearer(`${t.token}x`)))
    expect(unknown.status).toBe(401)
    expect(unknown).not.toHaveProperty('token')
    expect(await requestLog(s, refreshed)).toMatchObject({ method: 'PATCH', token: t.id })

    const all = s.logs.join('')
    for (const secret of [t.token, child.token, refreshed.body.token as string, `${t.token}x`]) expect(all).not.toContain(secret)
  })
})

describe('permission lists', () => {
  test('GET /api/tokens/capabilities lists every permission name, to any caller', async () => {
    const s = await setup()
    const u = await s.createUser()
    const res = await s.call('GET', '/api/tokens/capabilities', { jwt: u.jwt })
    expect(res.status).toBe(200)
    expect(res.body).toEqual(CAPABILITY_NAMES)
    expect([...res.body].sort()).toEqual([...SPEC_NAMES].sort())
    // also to a token holding none of the token permissions
    const t = await makeToken(s, u.jwt, { name: 'x', capabilities: ['Search'] })
    expect((await s.call('GET', '/api/tokens/capabilities', bearer(t.token))).body).toEqual(CAPABILITY_NAMES)
  })

  test('GET /api/info/capabilities gives Name, Desc and Category of each, grouped as docs/api.md "Permissions"', async () => {
    const s = await setup()
    const u = await s.createUser()
    const res = await s.call('GET', '/api/info/capabilities', { jwt: u.jwt })
    expect(res.status).toBe(200)
    const info = res.body as { Name: string; Desc: string; Category: string }[]
    expect(info.map((c) => c.Name)).toEqual(CAPABILITY_NAMES)
    expect(info.map((c) => c.Name).sort()).toEqual([...SPEC_NAMES].sort())
    for (const c of info) {
      expect(Object.keys(c).sort()).toEqual(['Category', 'Desc', 'Name'])
      expect(c.Desc).toBeString()
      expect(c.Desc.length).toBeGreaterThan(0)
      expect(c.Category).toBeString()
      expect(c.Category.length).toBeGreaterThan(0)
    }
    const category = Object.fromEntries(info.map((c) => [c.Name, c.Category]))
    expect({
      DashboardRead: category.DashboardRead,
      ResourceWrite: category.ResourceWrite,
      UserFileRead: category.UserFileRead,
      LibraryWrite: category.LibraryWrite,
      TokenRead: category.TokenRead,
      TokenWrite: category.TokenWrite,
      Search: category.Search,
      SearchAllHistory: category.SearchAllHistory,
      ListUsers: category.ListUsers,
      ListGroupMembers: category.ListGroupMembers,
      Stats: category.Stats,
      SystemInfoRead: category.SystemInfoRead,
    }).toEqual({
      DashboardRead: 'Dashboards',
      ResourceWrite: 'Resources',
      UserFileRead: 'Files',
      LibraryWrite: 'Query Library',
      TokenRead: 'Tokens',
      TokenWrite: 'Tokens',
      Search: 'Search',
      SearchAllHistory: 'Search',
      ListUsers: 'Users and Groups',
      ListGroupMembers: 'Users and Groups',
      Stats: 'System and Stats',
      SystemInfoRead: 'System and Stats',
    })
    // each read/write pair shares its category
    for (const name of CAPABILITY_NAMES.filter((n) => n.endsWith('Read') && n !== 'LicenseRead' && n !== 'SystemInfoRead')) {
      const write = name.replace(/Read$/, 'Write')
      expect({ name, category: category[write] }).toEqual({ name, category: category[name] })
    }
    // a token holding no permission of the token API may read it too
    const t = await makeToken(s, u.jwt, { name: 'x', capabilities: ['Search'] })
    expect((await s.call('GET', '/api/info/capabilities', bearer(t.token))).body).toEqual(info)
  })

  test('a name no client knows (PreferenceRead/Write) is refused on create and change', async () => {
    const s = await setup()
    const u = await s.createUser()
    for (const name of ['PreferenceRead', 'PreferenceWrite']) {
      await refused(s, 400, 'POST', '/api/tokens', { jwt: u.jwt, json: { name: 'x', capabilities: [name] } })
      const t = await makeToken(s, u.jwt, { name: 'x', capabilities: ['Search'] })
      await refused(s, 400, 'PUT', `/api/tokens/${t.id}`, { jwt: u.jwt, json: { capabilities: ['Search', name] } })
    }
  })

  test('a stored token that still lists PreferenceRead/Write loads, keeps its other permissions and lists only those', async () => {
    const s = await setup()
    const u = await s.createUser()
    await s.call('PUT', `/api/users/${u.uid}/preferences`, { jwt: u.jwt, json: { mine: 1 } })
    const t = await makeToken(s, u.jwt, { name: 'old', capabilities: ['DashboardRead', 'TokenRead'] })
    const only = await makeToken(s, u.jwt, { name: 'prefs only', capabilities: ['Search'] })
    // what a store written by an older server holds: the preference permissions among the others
    await s.rows('UPDATE tokens SET capabilities = ? WHERE id = ?', [JSON.stringify(['DashboardRead', 'PreferenceRead', 'PreferenceWrite', 'TokenRead']), t.id])
    await s.rows('UPDATE tokens SET capabilities = ? WHERE id = ?', [JSON.stringify(['PreferenceRead']), only.id])
    await s.restart()
    expect((await s.call('GET', '/api/dashboards', bearer(t.token))).status).toBe(200)
    expect((await s.call('GET', `/api/tokens/${t.id}`, bearer(t.token))).body.capabilities).toEqual(['DashboardRead', 'TokenRead'])
    const listed = (await s.call('GET', '/api/tokens', { jwt: u.jwt })).body as { id: string; capabilities: string[] }[]
    expect(Object.fromEntries(listed.map((r) => [r.id, r.capabilities]))).toEqual({ [t.id]: ['DashboardRead', 'TokenRead'], [only.id]: [] })
    // the preferences stay out of reach of both
    for (const secret of [t.token, only.token]) {
      await refused(s, 403, 'GET', `/api/users/${u.uid}/preferences`, bearer(secret))
      await refused(s, 403, 'PUT', `/api/users/${u.uid}/preferences`, { ...bearer(secret), json: { stolen: 1 } })
    }
    expect((await s.call('GET', '/api/info/whoami', bearer(only.token))).body.UID).toBe(u.uid)
    // a change of the token answers only permissions the clients know
    const changed = await s.call('PUT', `/api/tokens/${t.id}`, { jwt: u.jwt, json: { name: 'renamed' } })
    expect(changed.body.capabilities).toEqual(['DashboardRead', 'TokenRead'])
  })
})

// What the js-client (gravwell/js-client, src/functions/tokens) sends: toRawCreatableToken and toRawUpdatableToken
// always carry description and expiresAt, null when there is none; updates go to ?admin=true with the id in the
// body. Answers are checked against its RawToken / RawTokenWithSecret types.
describe('tokens as the js-client sends them', () => {
  /** The fields RawToken declares, with the types its toToken() relies on. */
  function expectRawToken(body: Record<string, unknown>) {
    expect(body).toEqual({
      id: expect.stringMatching(UUID),
      uid: expect.any(Number),
      name: expect.any(String),
      description: expect.any(String),
      capabilities: expect.any(Array),
      createdAt: expect.stringMatching(ISO),
      expiresAt: expect.any(String),
      ...(body.token === undefined ? {} : { token: expect.any(String) }),
    })
    for (const c of body.capabilities as unknown[]) expect(c).toBeString()
  }

  test('createOneToken: description and expiresAt null', async () => {
    const s = await setup()
    const u = await s.createUser()
    const res = await s.call('POST', '/api/tokens', { jwt: u.jwt, json: { name: 'Current name', description: null, capabilities: ['KitWrite'], expiresAt: null } })
    expect(res.status).toBe(200)
    expectRawToken(res.body)
    expect(res.body).toMatchObject({ name: 'Current name', description: '', capabilities: ['KitWrite'], expiresAt: ZERO, uid: u.uid })
  })

  test('updateOneToken: the whole token back, with description null and an expiry of "now"', async () => {
    const s = await setup()
    const u = await s.createUser()
    const t = await makeToken(s, u.jwt, { name: 'Current name', description: null, capabilities: ['KitWrite'], expiresAt: null })
    const body = { id: t.id, name: t.name, description: null, capabilities: t.capabilities, expiresAt: null }
    for (const changes of [{ name: 'New Name' }, { description: 'New description' }, { description: null }, { capabilities: ['Stats'] }, { expiresAt: null }]) {
      const res = await s.call('PUT', `/api/tokens/${t.id}?admin=true`, { jwt: u.jwt, json: { ...body, ...changes } })
      expect({ status: res.status, text: res.text }).toMatchObject({ status: 200 })
      expectRawToken(res.body)
      expect(res.body).toMatchObject({ ...changes, description: changes.description ?? '', expiresAt: ZERO })
    }
    // `{ expiresAt: new Date() }`: already past when the server reads it
    const now = new Date(s.clock.now()).toISOString()
    s.clock.advance(5)
    const res = await s.call('PUT', `/api/tokens/${t.id}?admin=true`, { jwt: u.jwt, json: { ...body, expiresAt: now } })
    expect(res.status).toBe(200)
    expectRawToken(res.body)
    expect(res.body.expiresAt).toBe(now)
    expect((await s.call('GET', '/api/tokens', { jwt: u.jwt })).body.map((x: { id: string }) => x.id)).toEqual([t.id])
  })
})
