// HTTP-level tests of the users API (docs/api.md "Users and groups", "Errors", "Logging in and sessions",
// "Conventions"), through the real app on a temporary store.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { migrate } from '../../server/store/db'
import { MIGRATIONS } from '../../server/store/migrations'
import { CAPABILITY_NAMES } from '../../server/rules/permissions'
import { SqliteUsersRepo } from './repo'
import { ADMIN_PASSWORD, type CallOptions, type CallResult, createTestServer, expectError, heldGuessBurst, refused, storeSnapshot, type TestServer } from '../../test/helpers'

const ZERO_TIME = '0001-01-01T00:00:00Z'
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d+Z$/
const USER_KEYS = ['Admin', 'Email', 'Groups', 'Locked', 'Name', 'Synced', 'TS', 'UID', 'User']
const GROUP_KEYS = ['Desc', 'GID', 'Name', 'Synced']

let unique = 0
/** A user name no other test uses. */
const freshName = (prefix = 'u') => `${prefix}-${++unique}`

/** A successful request answering `{}`. */
async function okEmpty(s: TestServer, method: string, path: string, opts: CallOptions = {}) {
  const res = await s.call(method, path, opts)
  expect({ status: res.status, text: res.text }).toEqual({ status: 200, text: '{}' })
  expect(res.headers.get('content-type') ?? '').toContain('application/json')
  return res
}

async function ok(s: TestServer, method: string, path: string, opts: CallOptions = {}) {
  const res = await s.call(method, path, opts)
  expect({ status: res.status, text: res.text }).toMatchObject({ status: 200 })
  expect(res.headers.get('content-type') ?? '').toContain('application/json')
  return res
}

async function userRecord(s: TestServer, uid: number) {
  return (await ok(s, 'GET', `/api/users/${uid}`, { jwt: s.adminJwt })).body
}

async function loginStatus(s: TestServer, user: string, pass: string) {
  return s.call('POST', '/api/login', { json: { User: user, Pass: pass } })
}

function expectUserShape(u: any) {
  const keys = Object.keys(u).sort()
  expect(keys).toEqual(u.DefaultGID === undefined ? USER_KEYS : [...USER_KEYS, 'DefaultGID'].sort())
  expect(typeof u.UID).toBe('number')
  expect(typeof u.User).toBe('string')
  expect(typeof u.Name).toBe('string')
  expect(typeof u.Email).toBe('string')
  expect(typeof u.Admin).toBe('boolean')
  expect(typeof u.Locked).toBe('boolean')
  expect(u.Synced).toBe(false)
  expect(u.TS === ZERO_TIME || RFC3339.test(u.TS)).toBe(true)
  expect(Array.isArray(u.Groups)).toBe(true)
  for (const g of u.Groups) {
    expect(Object.keys(g).sort()).toEqual(GROUP_KEYS)
    expect(g.Synced).toBe(false)
  }
}

describe('authentication', () => {
  let s: TestServer
  beforeAll(async () => void (s = await createTestServer()))
  afterAll(() => s.close())

  const routes: [string, string, unknown?][] = [
    ['GET', '/api/info/whoami'],
    ['GET', '/api/users'],
    ['POST', '/api/users', { User: 'anon', Pass: 'password-anon', Name: 'A', Email: 'a@example.com', Admin: true }],
    ['GET', '/api/users/preferences'],
    ['GET', '/api/users/1'],
    ['PUT', '/api/users/1', { Name: 'x' }],
    ['DELETE', '/api/users/2'],
    ['PUT', '/api/users/2/lock'],
    ['DELETE', '/api/users/2/lock'],
    ['PUT', '/api/users/1/pwd', { NewPass: 'password-new' }],
    ['GET', '/api/users/1/admin'],
    ['PUT', '/api/users/2/admin'],
    ['DELETE', '/api/users/1/admin'],
    ['GET', '/api/users/1/searchgroup'],
    ['PUT', '/api/users/1/searchgroup', { GID: 1 }],
    ['DELETE', '/api/users/1/searchgroup'],
    ['GET', '/api/users/1/preferences'],
    ['PUT', '/api/users/1/preferences', { a: 1 }],
    ['DELETE', '/api/users/1/preferences'],
    ['GET', '/api/users/1/group'],
    ['POST', '/api/users/1/group', { GIDs: [1] }],
    ['DELETE', '/api/users/1/group/1'],
    ['GET', '/api/users/1/sessions'],
  ]

  test('every users route answers 401 without a JWT or with a bad one, and changes nothing', async () => {
    const user = await s.createUser()
    await s.createGroup(freshName('g'), [user.uid])
    for (const [method, path, json] of routes) {
      const p = path.replace('/2', `/${user.uid}`)
      await refused(s, 401, method, p, { json })
      await refused(s, 401, method, p, { json, jwt: 'not.a.jwt' })
    }
  })

  test('a logged-out session is refused', async () => {
    const user = await s.createUser()
    await okEmpty(s, 'PUT', '/api/logout', { jwt: user.jwt })
    await refused(s, 401, 'GET', '/api/info/whoami', { jwt: user.jwt })
  })
})

describe('whoami and reading users', () => {
  let s: TestServer
  beforeAll(async () => void (s = await createTestServer()))
  afterAll(() => s.close())

  test('whoami answers the caller\'s own details', async () => {
    const user = await s.createUser({ Name: 'Who Am I', Email: 'who@example.com' })
    const gid = await s.createGroup(freshName('g'), [user.uid])
    const res = await ok(s, 'GET', '/api/info/whoami', { jwt: user.jwt })
    expectUserShape(res.body)
    expect(res.body).toMatchObject({
      UID: user.uid, User: user.User, Name: 'Who Am I', Email: 'who@example.com', Admin: false, Locked: false, Synced: false,
    })
    expect(res.body.Groups.map((g: any) => g.GID)).toEqual([gid])
    expect(RFC3339.test(res.body.TS)).toBe(true)

    const admin = await ok(s, 'GET', '/api/info/whoami/', { jwt: s.adminJwt })
    expect(admin.body).toMatchObject({ UID: 1, User: 'admin', Admin: true, Locked: false, Groups: [] })
  })

  test('TS is the zero time before the first login and an RFC 3339 time after it', async () => {
    const name = freshName()
    const created = await ok(s, 'POST', '/api/users', {
      jwt: s.adminJwt,
      json: { User: name, Pass: 'password-ts', Name: 'TS user', Email: 'ts@example.com', Admin: false },
    })
    const uid = created.body as number
    expect((await userRecord(s, uid)).TS).toBe(ZERO_TIME)
    const listed = (await ok(s, 'GET', '/api/users', { jwt: s.adminJwt })).body.find((u: any) => u.UID === uid)
    expect(listed.TS).toBe(ZERO_TIME)

    s.clock.advance(60_000)
    const loginAt = s.clock.now()
    await s.login(name, 'password-ts')
    const after = await userRecord(s, uid)
    expect(after.TS).toMatch(RFC3339)
    expect(after.TS).toBe(new Date(loginAt).toISOString())
  })

  test('GET /api/users lists every account with all fields; Groups always an array; DefaultGID only when set', async () => {
    const plain = await s.createUser()
    const grouped = await s.createUser({ Admin: true })
    const gid1 = await s.createGroup(freshName('g'), [grouped.uid])
    const gid2 = await s.createGroup(freshName('g'), [grouped.uid])
    await okEmpty(s, 'PUT', `/api/users/${grouped.uid}/searchgroup`, { jwt: s.adminJwt, json: { GID: gid2 } })

    // every user holds ListUsers: a non-admin sees the same list
    for (const jwt of [s.adminJwt, plain.jwt]) {
      const res = await ok(s, 'GET', '/api/users', { jwt })
      expect(Array.isArray(res.body)).toBe(true)
      for (const u of res.body) expectUserShape(u)
      const uids = res.body.map((u: any) => u.UID)
      const all = (await s.rows('SELECT uid FROM users ORDER BY uid')).map((r) => r.uid)
      expect([...uids].sort((a: number, b: number) => a - b)).toEqual(all)

      const p = res.body.find((u: any) => u.UID === plain.uid)
      expect(p).toEqual({
        UID: plain.uid, User: plain.User, Name: plain.Name, Email: plain.Email, Admin: false, Locked: false,
        TS: p.TS, Synced: false, Groups: [],
      })
      expect('DefaultGID' in p).toBe(false)

      const g = res.body.find((u: any) => u.UID === grouped.uid)
      expect(g).toMatchObject({ UID: grouped.uid, User: grouped.User, Admin: true, DefaultGID: gid2 })
      expect(g.Groups).toEqual([
        { GID: gid1, Name: expect.any(String), Desc: expect.any(String), Synced: false },
        { GID: gid2, Name: expect.any(String), Desc: expect.any(String), Synced: false },
      ])
    }
  })

  test('a non-admin reads only their own record', async () => {
    const a = await s.createUser()
    const b = await s.createUser()
    const own = await ok(s, 'GET', `/api/users/${a.uid}`, { jwt: a.jwt })
    expectUserShape(own.body)
    expect(own.body).toMatchObject({ UID: a.uid, User: a.User, Name: a.Name, Email: a.Email, Admin: false })
    // the clients write the path with a trailing slash
    expect((await ok(s, 'GET', `/api/users/${a.uid}/`, { jwt: a.jwt })).body).toEqual(own.body)

    await refused(s, 403, 'GET', `/api/users/${b.uid}`, { jwt: a.jwt })
    await refused(s, 403, 'GET', `/api/users/${b.uid}/`, { jwt: a.jwt })
    await refused(s, 403, 'GET', '/api/users/1', { jwt: a.jwt })
    // ?admin=true is accepted everywhere and gives a non-admin nothing more
    expect((await ok(s, 'GET', `/api/users/${a.uid}?admin=true`, { jwt: a.jwt })).body).toEqual(own.body)
    await refused(s, 403, 'GET', `/api/users/${b.uid}?admin=true`, { jwt: a.jwt })
  })

  test('an admin reads any record; an unknown UID is 404; a malformed one 400', async () => {
    const a = await s.createUser({ Name: 'Anyone', Email: 'anyone@example.com' })
    const res = await ok(s, 'GET', `/api/users/${a.uid}/`, { jwt: s.adminJwt })
    expectUserShape(res.body)
    expect(res.body).toMatchObject({ UID: a.uid, User: a.User, Name: 'Anyone', Email: 'anyone@example.com', Admin: false, Groups: [] })
    await refused(s, 404, 'GET', '/api/users/999999', { jwt: s.adminJwt })
    await refused(s, 400, 'GET', '/api/users/abc', { jwt: s.adminJwt })
    await refused(s, 400, 'GET', '/api/users/0', { jwt: s.adminJwt })
  })
})

describe('POST /api/users', () => {
  let s: TestServer
  beforeAll(async () => void (s = await createTestServer()))
  afterAll(() => s.close())

  const valid = () => ({ User: freshName(), Pass: 'password-create', Name: 'New User', Email: 'new@example.com', Admin: false })

  test('an admin creates a user: 200 with the bare UID, the user exists and can log in', async () => {
    const body = valid()
    const res = await ok(s, 'POST', '/api/users', { jwt: s.adminJwt, json: body })
    expect(res.text).toMatch(/^[1-9]\d*$/)
    const uid = res.body as number
    const rec = await userRecord(s, uid)
    expect(rec).toEqual({
      UID: uid, User: body.User, Name: 'New User', Email: 'new@example.com', Admin: false, Locked: false,
      TS: ZERO_TIME, Synced: false, Groups: [],
    })
    expect((await loginStatus(s, body.User, body.Pass)).status).toBe(200)
    // the password is not kept in plain text
    const [row] = await s.rows('SELECT password_hash FROM users WHERE uid = ?', [uid])
    expect(row!.password_hash).not.toContain(body.Pass)
  })

  test('unknown keys in the body are ignored (also a UID)', async () => {
    const body = { ...valid(), UID: 1, Locked: true, Extra: { nested: 1 } }
    const uid = (await ok(s, 'POST', '/api/users', { jwt: s.adminJwt, json: body })).body
    expect(uid).not.toBe(1)
    expect(await userRecord(s, uid)).toMatchObject({ UID: uid, User: body.User, Locked: false, Admin: false })
  })

  test('Admin: true creates an admin; UIDs are distinct', async () => {
    const a = valid()
    const b = { ...valid(), Admin: true }
    const uidA = (await ok(s, 'POST', '/api/users', { jwt: s.adminJwt, json: a })).body
    const uidB = (await ok(s, 'POST', '/api/users', { jwt: s.adminJwt, json: b })).body
    expect(uidA).not.toBe(uidB)
    expect((await userRecord(s, uidB)).Admin).toBe(true)
    expect((await userRecord(s, uidA)).Admin).toBe(false)
  })

  for (const field of ['User', 'Pass', 'Name', 'Email', 'Admin'] as const) {
    test(`a missing ${field} is 400 naming the field, and nothing is created`, async () => {
      const body: Record<string, unknown> = valid()
      delete body[field]
      const res = await refused(s, 400, 'POST', '/api/users', { jwt: s.adminJwt, json: body })
      expect(res.body.Error).toContain(field)
    })
  }

  for (const field of ['User', 'Pass', 'Name', 'Email'] as const) {
    test(`an empty ${field} is 400 naming the field, and nothing is created`, async () => {
      const body = { ...valid(), [field]: '' }
      const res = await refused(s, 400, 'POST', '/api/users', { jwt: s.adminJwt, json: body })
      expect(res.body.Error).toContain(field)
    })
  }

  test('an empty or absent body is 400', async () => {
    await refused(s, 400, 'POST', '/api/users', { jwt: s.adminJwt, json: {} })
    await refused(s, 400, 'POST', '/api/users', { jwt: s.adminJwt, body: '', headers: { 'content-type': 'application/json' } })
    await refused(s, 400, 'POST', '/api/users', { jwt: s.adminJwt, body: '{"User":', headers: { 'content-type': 'application/json' } })
  })

  test('a duplicate user name is 409 (also when it differs only in case)', async () => {
    const body = valid()
    await ok(s, 'POST', '/api/users', { jwt: s.adminJwt, json: body })
    await refused(s, 409, 'POST', '/api/users', { jwt: s.adminJwt, json: { ...valid(), User: body.User } })
    await refused(s, 409, 'POST', '/api/users', { jwt: s.adminJwt, json: { ...valid(), User: body.User.toUpperCase() } })
    await refused(s, 409, 'POST', '/api/users', { jwt: s.adminJwt, json: { ...valid(), User: 'admin' } })
  })

  test('a password shorter than the minimum is 400; the minimum itself is accepted', async () => {
    const min = s.config.minPasswordLength
    await refused(s, 400, 'POST', '/api/users', { jwt: s.adminJwt, json: { ...valid(), Pass: 'x'.repeat(min - 1) } })
    const body = { ...valid(), Pass: 'y'.repeat(min) }
    await ok(s, 'POST', '/api/users', { jwt: s.adminJwt, json: body })
    expect((await loginStatus(s, body.User, body.Pass)).status).toBe(200)
  })

  test('a non-admin may not create users', async () => {
    const user = await s.createUser()
    await refused(s, 403, 'POST', '/api/users', { jwt: user.jwt, json: valid() })
    await refused(s, 403, 'POST', '/api/users', { jwt: user.jwt, json: { ...valid(), Admin: true } })
  })
})

describe('PUT /api/users/{id}', () => {
  let s: TestServer
  beforeAll(async () => void (s = await createTestServer()))
  afterAll(() => s.close())

  test('a user changes their own User, Name and Email', async () => {
    const user = await s.createUser()
    const name = freshName('renamed')
    await okEmpty(s, 'PUT', `/api/users/${user.uid}`, { jwt: user.jwt, json: { User: name, Name: 'New Name', Email: 'new@example.org' } })
    expect(await userRecord(s, user.uid)).toMatchObject({ User: name, Name: 'New Name', Email: 'new@example.org', Admin: false, Locked: false })
    // the session stays valid and the new name logs in
    expect((await ok(s, 'GET', '/api/info/whoami', { jwt: user.jwt })).body.User).toBe(name)
    expect((await loginStatus(s, name, user.Pass)).status).toBe(200)
    expect((await loginStatus(s, user.User, user.Pass)).status).toBe(422)
  })

  test('empty strings and absent fields are ignored', async () => {
    const user = await s.createUser()
    const before = await userRecord(s, user.uid)
    await okEmpty(s, 'PUT', `/api/users/${user.uid}`, { jwt: user.jwt, json: { User: '', Name: '', Email: '' } })
    await okEmpty(s, 'PUT', `/api/users/${user.uid}`, { jwt: user.jwt, json: {} })
    await okEmpty(s, 'PUT', `/api/users/${user.uid}/`, { jwt: user.jwt, body: '', headers: { 'content-type': 'application/json' } })
    expect(await userRecord(s, user.uid)).toEqual(before)

    await okEmpty(s, 'PUT', `/api/users/${user.uid}`, { jwt: user.jwt, json: { Name: 'Only Name' } })
    expect(await userRecord(s, user.uid)).toEqual({ ...before, Name: 'Only Name' })
    await okEmpty(s, 'PUT', `/api/users/${user.uid}`, { jwt: user.jwt, json: { Email: 'only@example.com', Name: '' } })
    expect(await userRecord(s, user.uid)).toEqual({ ...before, Name: 'Only Name', Email: 'only@example.com' })
  })

  test('a non-admin may send back their unchanged Admin and Locked (a full record) with a change', async () => {
    const user = await s.createUser()
    const rec = await userRecord(s, user.uid)
    await okEmpty(s, 'PUT', `/api/users/${user.uid}`, { jwt: user.jwt, json: { ...rec, Name: 'Full Record' } })
    expect(await userRecord(s, user.uid)).toEqual({ ...rec, Name: 'Full Record' })
  })

  test('a non-admin may not set Admin or Locked, even on their own account, and nothing else changes', async () => {
    const user = await s.createUser()
    const other = await s.createUser()
    await refused(s, 403, 'PUT', `/api/users/${user.uid}`, { jwt: user.jwt, json: { Admin: true } })
    await refused(s, 403, 'PUT', `/api/users/${user.uid}`, { jwt: user.jwt, json: { Name: 'Sneaky', Admin: true } })
    await refused(s, 403, 'PUT', `/api/users/${user.uid}`, { jwt: user.jwt, json: { Name: 'Sneaky', Locked: true } })
    await refused(s, 403, 'PUT', `/api/users/${other.uid}`, { jwt: user.jwt, json: { Locked: true } })
  })

  test('a non-admin changing another account is 403 and nothing changes', async () => {
    const a = await s.createUser()
    const b = await s.createUser()
    await refused(s, 403, 'PUT', `/api/users/${b.uid}`, { jwt: a.jwt, json: { Name: 'Hijacked' } })
    await refused(s, 403, 'PUT', `/api/users/${b.uid}`, { jwt: a.jwt, json: { User: freshName('hijack') } })
    await refused(s, 403, 'PUT', '/api/users/1', { jwt: a.jwt, json: { Email: 'evil@example.com' } })
  })

  test('an admin changes any account, including Admin and Locked', async () => {
    const user = await s.createUser()
    const name = freshName('byadmin')
    await okEmpty(s, 'PUT', `/api/users/${user.uid}`, { jwt: s.adminJwt, json: { User: name, Name: 'By Admin', Email: 'by@admin.com' } })
    expect(await userRecord(s, user.uid)).toMatchObject({ User: name, Name: 'By Admin', Email: 'by@admin.com' })

    await okEmpty(s, 'PUT', `/api/users/${user.uid}`, { jwt: s.adminJwt, json: { Admin: true } })
    expect((await userRecord(s, user.uid)).Admin).toBe(true)
    // the new rights hold at once on the user's existing session
    expect((await s.call('GET', '/api/users/preferences', { jwt: user.jwt })).status).toBe(200)
    await okEmpty(s, 'PUT', `/api/users/${user.uid}`, { jwt: s.adminJwt, json: { Admin: false } })
    expect((await userRecord(s, user.uid)).Admin).toBe(false)
    expectError(await s.call('GET', '/api/users/preferences', { jwt: user.jwt }), 403)

    await okEmpty(s, 'PUT', `/api/users/${user.uid}`, { jwt: s.adminJwt, json: { Locked: true } })
    expect((await userRecord(s, user.uid)).Locked).toBe(true)
    expectError(await s.call('GET', '/api/info/whoami', { jwt: user.jwt }), 401)
    expect((await loginStatus(s, name, user.Pass)).status).toBe(423)
    await okEmpty(s, 'PUT', `/api/users/${user.uid}`, { jwt: s.adminJwt, json: { Locked: false } })
    expect((await userRecord(s, user.uid)).Locked).toBe(false)
    expect((await loginStatus(s, name, user.Pass)).status).toBe(200)
  })

  test('renaming to a taken name is 409 and nothing changes', async () => {
    const a = await s.createUser()
    const b = await s.createUser()
    await refused(s, 409, 'PUT', `/api/users/${a.uid}`, { jwt: a.jwt, json: { User: b.User, Name: 'Changed' } })
    await refused(s, 409, 'PUT', `/api/users/${a.uid}`, { jwt: a.jwt, json: { User: b.User.toUpperCase() } })
    await refused(s, 409, 'PUT', `/api/users/${a.uid}`, { jwt: s.adminJwt, json: { User: 'admin' } })
    await refused(s, 409, 'PUT', `/api/users/${a.uid}`, { jwt: s.adminJwt, json: { User: b.User, Locked: true } })
  })

  test('the account named admin cannot be renamed, demoted or locked', async () => {
    const other = await s.createUser({ Admin: true })
    for (const jwt of [s.adminJwt, other.jwt]) {
      await refused(s, 403, 'PUT', '/api/users/1', { jwt, json: { User: freshName('notadmin') } })
      await refused(s, 403, 'PUT', '/api/users/1', { jwt, json: { User: 'ADMIN' } })
      await refused(s, 403, 'PUT', '/api/users/1', { jwt, json: { Admin: false } })
      await refused(s, 403, 'PUT', '/api/users/1', { jwt, json: { Name: 'Changed', Admin: false } })
    }
    await refused(s, 403, 'PUT', '/api/users/1', { jwt: other.jwt, json: { Locked: true } })
    // its other fields may change
    await okEmpty(s, 'PUT', '/api/users/1', { jwt: s.adminJwt, json: { User: 'admin', Name: 'The Admin', Admin: true } })
    expect(await userRecord(s, 1)).toMatchObject({ User: 'admin', Name: 'The Admin', Admin: true })
  })

  test('an admin cannot lock themselves through an update', async () => {
    const admin2 = await s.createUser({ Admin: true })
    await refused(s, 403, 'PUT', `/api/users/${admin2.uid}`, { jwt: admin2.jwt, json: { Locked: true } })
  })

  test('invalid values are 400 and an unknown user 404', async () => {
    const user = await s.createUser()
    await refused(s, 400, 'PUT', `/api/users/${user.uid}`, { jwt: user.jwt, json: { User: 'has space' } })
    await refused(s, 400, 'PUT', `/api/users/${user.uid}`, { jwt: user.jwt, json: { Name: 42 } })
    await refused(s, 400, 'PUT', `/api/users/${user.uid}`, { jwt: user.jwt, json: { Email: 'not-an-email' } })
    await refused(s, 400, 'PUT', `/api/users/${user.uid}`, { jwt: s.adminJwt, json: { Admin: 'yes' } })
    await refused(s, 400, 'PUT', `/api/users/${user.uid}`, { jwt: user.jwt, body: '{"Name":', headers: { 'content-type': 'application/json' } })
    await refused(s, 404, 'PUT', '/api/users/999999', { jwt: s.adminJwt, json: { Name: 'Nobody' } })
  })
})

describe('lock and unlock', () => {
  let s: TestServer
  beforeAll(async () => void (s = await createTestServer()))
  afterAll(() => s.close())

  test('locking ends every session at once, refuses logins with 423; unlocking lets the user in again', async () => {
    const user = await s.createUser()
    const second = await s.login(user.User, user.Pass)
    await ok(s, 'GET', '/api/info/whoami', { jwt: second })

    // the Go client sends an empty body with a JSON content type
    await okEmpty(s, 'PUT', `/api/users/${user.uid}/lock`, { jwt: s.adminJwt, body: '', headers: { 'content-type': 'application/json' } })
    expectError(await s.call('GET', '/api/info/whoami', { jwt: user.jwt }), 401)
    expectError(await s.call('GET', '/api/info/whoami', { jwt: second }), 401)
    expect(await s.rows('SELECT id FROM sessions WHERE uid = ?', [user.uid])).toEqual([])
    expect((await userRecord(s, user.uid)).Locked).toBe(true)

    const refusedLogin = await loginStatus(s, user.User, user.Pass)
    expect(refusedLogin.status).toBe(423)
    expect(refusedLogin.body).toEqual({ LoginStatus: false, Reason: expect.any(String) })
    expect(refusedLogin.body.Reason.length).toBeGreaterThan(0)
    expect(await s.rows('SELECT id FROM sessions WHERE uid = ?', [user.uid])).toEqual([])

    await okEmpty(s, 'DELETE', `/api/users/${user.uid}/lock`, { jwt: s.adminJwt })
    expect((await userRecord(s, user.uid)).Locked).toBe(false)
    const login = await loginStatus(s, user.User, user.Pass)
    expect(login.status).toBe(200)
    expect(login.body.LoginStatus).toBe(true)
    await ok(s, 'GET', '/api/info/whoami', { jwt: login.body.JWT })
    // sessions ended by the lock stay ended
    expectError(await s.call('GET', '/api/info/whoami', { jwt: user.jwt }), 401)
  })

  test('locking a locked account and unlocking an unlocked one succeed', async () => {
    const user = await s.createUser()
    await okEmpty(s, 'DELETE', `/api/users/${user.uid}/lock`, { jwt: s.adminJwt })
    expect((await userRecord(s, user.uid)).Locked).toBe(false)
    await okEmpty(s, 'PUT', `/api/users/${user.uid}/lock`, { jwt: s.adminJwt })
    await okEmpty(s, 'PUT', `/api/users/${user.uid}/lock`, { jwt: s.adminJwt })
    expect((await userRecord(s, user.uid)).Locked).toBe(true)
    await okEmpty(s, 'DELETE', `/api/users/${user.uid}/lock`, { jwt: s.adminJwt })
    await okEmpty(s, 'DELETE', `/api/users/${user.uid}/lock`, { jwt: s.adminJwt })
    expect((await userRecord(s, user.uid)).Locked).toBe(false)
  })

  test('nobody locks themselves or the admin account', async () => {
    const admin2 = await s.createUser({ Admin: true })
    await refused(s, 403, 'PUT', '/api/users/1/lock', { jwt: s.adminJwt })
    await refused(s, 403, 'PUT', '/api/users/1/lock', { jwt: admin2.jwt })
    await refused(s, 403, 'PUT', `/api/users/${admin2.uid}/lock`, { jwt: admin2.jwt })
  })

  test('only admins lock and unlock; an unknown user is 404', async () => {
    const user = await s.createUser()
    const other = await s.createUser()
    await refused(s, 403, 'PUT', `/api/users/${other.uid}/lock`, { jwt: user.jwt })
    await okEmpty(s, 'PUT', `/api/users/${other.uid}/lock`, { jwt: s.adminJwt })
    await refused(s, 403, 'DELETE', `/api/users/${other.uid}/lock`, { jwt: user.jwt })
    await refused(s, 404, 'PUT', '/api/users/999999/lock', { jwt: s.adminJwt })
    await refused(s, 404, 'DELETE', '/api/users/999999/lock', { jwt: s.adminJwt })
  })
})

describe('PUT /api/users/{id}/pwd', () => {
  let s: TestServer
  beforeAll(async () => void (s = await createTestServer()))
  afterAll(() => s.close())

  test('a user changes their own password with the right OrigPass; the new one works, the old one not', async () => {
    const user = await s.createUser()
    await okEmpty(s, 'PUT', `/api/users/${user.uid}/pwd`, { jwt: user.jwt, json: { OrigPass: user.Pass, NewPass: 'brand-new-password' } })
    expect((await loginStatus(s, user.User, 'brand-new-password')).status).toBe(200)
    const old = await loginStatus(s, user.User, user.Pass)
    expect(old.status).toBe(422)
    expect(old.body.LoginStatus).toBe(false)
  })

  test('OrigPass is required for one\'s own password, and a wrong one is refused', async () => {
    const user = await s.createUser()
    await refused(s, 403, 'PUT', `/api/users/${user.uid}/pwd`, { jwt: user.jwt, json: { NewPass: 'another-password' } })
    await refused(s, 403, 'PUT', `/api/users/${user.uid}/pwd`, { jwt: user.jwt, json: { OrigPass: '', NewPass: 'another-password' } })
    await refused(s, 403, 'PUT', `/api/users/${user.uid}/pwd`, { jwt: user.jwt, json: { OrigPass: 'wrong-password', NewPass: 'another-password' } })
    expect((await loginStatus(s, user.User, user.Pass)).status).toBe(200)
  })

  test('an admin also needs OrigPass for their own password', async () => {
    const admin2 = await s.createUser({ Admin: true })
    await refused(s, 403, 'PUT', `/api/users/${admin2.uid}/pwd`, { jwt: admin2.jwt, json: { NewPass: 'admin2-new-password' } })
    await refused(s, 403, 'PUT', `/api/users/${admin2.uid}/pwd`, { jwt: admin2.jwt, json: { OrigPass: 'nope-nope', NewPass: 'admin2-new-password' } })
    await okEmpty(s, 'PUT', `/api/users/${admin2.uid}/pwd`, { jwt: admin2.jwt, json: { OrigPass: admin2.Pass, NewPass: 'admin2-new-password' } })
    expect((await loginStatus(s, admin2.User, 'admin2-new-password')).status).toBe(200)
    expect((await loginStatus(s, admin2.User, admin2.Pass)).status).toBe(422)
  })

  test('the primary admin needs OrigPass for its own password', async () => {
    const t = await createTestServer()
    try {
      await refused(t, 403, 'PUT', '/api/users/1/pwd', { jwt: t.adminJwt, json: { NewPass: 'primary-new-password' } })
      await okEmpty(t, 'PUT', '/api/users/1/pwd', { jwt: t.adminJwt, json: { OrigPass: ADMIN_PASSWORD, NewPass: 'primary-new-password' } })
      expect((await loginStatus(t, 'admin', 'primary-new-password')).status).toBe(200)
      expect((await loginStatus(t, 'admin', ADMIN_PASSWORD)).status).toBe(422)
    } finally {
      t.close()
    }
  })

  test('an admin changes another user\'s password without OrigPass', async () => {
    const user = await s.createUser()
    await okEmpty(s, 'PUT', `/api/users/${user.uid}/pwd`, { jwt: s.adminJwt, json: { NewPass: 'set-by-admin' } })
    expect((await loginStatus(s, user.User, 'set-by-admin')).status).toBe(200)
    expect((await loginStatus(s, user.User, user.Pass)).status).toBe(422)
    // a wrong OrigPass is irrelevant then
    await okEmpty(s, 'PUT', `/api/users/${user.uid}/pwd/`, { jwt: s.adminJwt, json: { OrigPass: 'whatever', NewPass: 'set-by-admin-2' } })
    expect((await loginStatus(s, user.User, 'set-by-admin-2')).status).toBe(200)
  })

  test('a non-admin may not change another user\'s password, even knowing it', async () => {
    const a = await s.createUser()
    const b = await s.createUser()
    await refused(s, 403, 'PUT', `/api/users/${b.uid}/pwd`, { jwt: a.jwt, json: { OrigPass: b.Pass, NewPass: 'stolen-password' } })
    await refused(s, 403, 'PUT', '/api/users/1/pwd', { jwt: a.jwt, json: { OrigPass: ADMIN_PASSWORD, NewPass: 'stolen-password' } })
  })

  test('a new password ends the account\'s other sessions; whoever changed their own keeps theirs', async () => {
    const user = await s.createUser()
    const second = await s.login(user.User, user.Pass)
    await okEmpty(s, 'PUT', `/api/users/${user.uid}/pwd`, { jwt: user.jwt, json: { OrigPass: user.Pass, NewPass: 'changed-by-self' } })
    expect((await s.call('GET', '/api/info/whoami', { jwt: user.jwt })).status).toBe(200)
    expectError(await s.call('GET', '/api/info/whoami', { jwt: second }), 401)

    const fresh = await s.login(user.User, 'changed-by-self')
    await okEmpty(s, 'PUT', `/api/users/${user.uid}/pwd`, { jwt: s.adminJwt, json: { NewPass: 'changed-by-admin' } })
    expectError(await s.call('GET', '/api/info/whoami', { jwt: fresh }), 401)
    expectError(await s.call('GET', '/api/info/whoami', { jwt: user.jwt }), 401)
    expect((await s.call('GET', '/api/info/whoami', { jwt: s.adminJwt })).status).toBe(200)
  })

  test('wrong OrigPass guesses are throttled like logins, so a stolen session cannot guess the password', async () => {
    const t = await createTestServer()
    try {
      const user = await t.createUser()
      for (let i = 0; i < t.config.loginMaxFailures; i++)
        await refused(t, 403, 'PUT', `/api/users/${user.uid}/pwd`, { jwt: user.jwt, json: { OrigPass: `guess-${i}`, NewPass: 'never-set-pass' } })
      // now even the right password is refused until the window has passed
      await refused(t, 429, 'PUT', `/api/users/${user.uid}/pwd`, { jwt: user.jwt, json: { OrigPass: user.Pass, NewPass: 'never-set-pass' } })
      expect((await loginStatus(t, user.User, user.Pass)).status).toBe(429)
      t.clock.advance(t.config.loginFailureWindowMs)
      await okEmpty(t, 'PUT', `/api/users/${user.uid}/pwd`, { jwt: await t.login(user.User, user.Pass), json: { OrigPass: user.Pass, NewPass: 'finally-set-pass' } })
      expect((await loginStatus(t, user.User, 'finally-set-pass')).status).toBe(200)
    } finally {
      t.close()
    }
  })

  test('parallel OrigPass guesses: at most loginMaxFailures are checked, the rest 429 unchecked, the right one too', async () => {
    const t = await createTestServer()
    try {
      const user = await t.createUser()
      const path = `/api/users/${user.uid}/pwd`
      const { statuses, checks, last } = await heldGuessBurst(
        t,
        30,
        (i) => t.call('PUT', path, { jwt: user.jwt, json: { OrigPass: `guess-${i}`, NewPass: 'never-set-pass' } }),
        () => t.call('PUT', path, { jwt: user.jwt, json: { OrigPass: user.Pass, NewPass: 'never-set-pass' } }),
      )
      expect(last.status).toBe(429)
      expect(statuses).toEqual({ 403: 5, 429: 26 })
      expect(checks).toBe(5)
      t.clock.advance(t.config.loginFailureWindowMs)
      expect((await loginStatus(t, user.User, 'never-set-pass')).status).toBe(422)
    } finally {
      t.close()
    }
  })

  test('a short or missing NewPass is 400; an unknown user 404', async () => {
    const user = await s.createUser()
    const short = 'z'.repeat(s.config.minPasswordLength - 1)
    await refused(s, 400, 'PUT', `/api/users/${user.uid}/pwd`, { jwt: user.jwt, json: { OrigPass: user.Pass, NewPass: short } })
    await refused(s, 400, 'PUT', `/api/users/${user.uid}/pwd`, { jwt: user.jwt, json: { OrigPass: user.Pass } })
    await refused(s, 400, 'PUT', `/api/users/${user.uid}/pwd`, { jwt: user.jwt, json: { OrigPass: user.Pass, NewPass: '' } })
    await refused(s, 400, 'PUT', `/api/users/${user.uid}/pwd`, { jwt: s.adminJwt, json: { NewPass: short } })
    await refused(s, 404, 'PUT', '/api/users/999999/pwd', { jwt: s.adminJwt, json: { NewPass: 'long-enough-password' } })
    expect((await loginStatus(s, user.User, user.Pass)).status).toBe(200)
  })
})

describe('DELETE /api/users/{id}', () => {
  let s: TestServer
  beforeAll(async () => void (s = await createTestServer()))
  afterAll(() => s.close())

  test('an admin deletes a user with their sessions, memberships and preferences', async () => {
    const user = await s.createUser()
    const bystander = await s.createUser()
    const gid = await s.createGroup(freshName('g'), [user.uid, bystander.uid])
    await okEmpty(s, 'PUT', `/api/users/${user.uid}/preferences`, { jwt: user.jwt, json: { theme: 'dark' } })
    await okEmpty(s, 'PUT', `/api/users/${bystander.uid}/preferences`, { jwt: bystander.jwt, json: { theme: 'light' } })

    await okEmpty(s, 'DELETE', `/api/users/${user.uid}/`, { jwt: s.adminJwt })

    expectError(await s.call('GET', `/api/users/${user.uid}`, { jwt: s.adminJwt }), 404)
    expect((await ok(s, 'GET', '/api/users', { jwt: s.adminJwt })).body.some((u: any) => u.UID === user.uid)).toBe(false)
    expectError(await s.call('GET', '/api/info/whoami', { jwt: user.jwt }), 401)
    expect((await loginStatus(s, user.User, user.Pass)).status).toBe(422)

    expect(await s.rows('SELECT * FROM sessions WHERE uid = ?', [user.uid])).toEqual([])
    expect(await s.rows('SELECT * FROM user_groups WHERE uid = ?', [user.uid])).toEqual([])
    expect(await s.rows('SELECT * FROM preferences WHERE uid = ?', [user.uid])).toEqual([])
    const prefs = (await ok(s, 'GET', '/api/users/preferences', { jwt: s.adminJwt })).body
    expect(prefs.map((p: any) => p.UID)).not.toContain(user.uid)
    expect(prefs.map((p: any) => p.UID)).toContain(bystander.uid)
    const members = (await ok(s, 'GET', `/api/groups/${gid}/members`, { jwt: s.adminJwt })).body
    expect(members.map((m: any) => m.UID)).toEqual([bystander.uid])
    // the others are untouched
    await ok(s, 'GET', '/api/info/whoami', { jwt: bystander.jwt })
  })

  test('nobody deletes their own account, and the admin account cannot be deleted', async () => {
    const admin2 = await s.createUser({ Admin: true })
    await refused(s, 403, 'DELETE', `/api/users/${admin2.uid}`, { jwt: admin2.jwt })
    await refused(s, 403, 'DELETE', '/api/users/1', { jwt: s.adminJwt })
    await refused(s, 403, 'DELETE', '/api/users/1/', { jwt: admin2.jwt })
  })

  test('only admins delete; an unknown user is 404', async () => {
    const user = await s.createUser()
    const other = await s.createUser()
    await refused(s, 403, 'DELETE', `/api/users/${other.uid}`, { jwt: user.jwt })
    await refused(s, 403, 'DELETE', `/api/users/${user.uid}`, { jwt: user.jwt })
    await refused(s, 404, 'DELETE', '/api/users/999999', { jwt: s.adminJwt })
    const gone = await s.createUser()
    await okEmpty(s, 'DELETE', `/api/users/${gone.uid}`, { jwt: s.adminJwt })
    await refused(s, 404, 'DELETE', `/api/users/${gone.uid}`, { jwt: s.adminJwt })
  })
})

describe('admin status', () => {
  let s: TestServer
  beforeAll(async () => void (s = await createTestServer()))
  afterAll(() => s.close())

  test('GET answers {UID, Admin}: own for anyone, any for admins', async () => {
    const user = await s.createUser()
    const other = await s.createUser()
    expect((await ok(s, 'GET', `/api/users/${user.uid}/admin`, { jwt: user.jwt })).body).toEqual({ UID: user.uid, Admin: false })
    expect((await ok(s, 'GET', `/api/users/${user.uid}/admin`, { jwt: s.adminJwt })).body).toEqual({ UID: user.uid, Admin: false })
    expect((await ok(s, 'GET', '/api/users/1/admin', { jwt: s.adminJwt })).body).toEqual({ UID: 1, Admin: true })
    await refused(s, 403, 'GET', `/api/users/${other.uid}/admin`, { jwt: user.jwt })
    await refused(s, 404, 'GET', '/api/users/999999/admin', { jwt: s.adminJwt })
  })

  test('PUT promotes; DELETE answers {} and demotes at once on the same JWT', async () => {
    const user = await s.createUser()
    const promoted = await ok(s, 'PUT', `/api/users/${user.uid}/admin`, { jwt: s.adminJwt, body: '', headers: { 'content-type': 'application/json' } })
    expect(promoted.body).toEqual({ UID: user.uid, Admin: true })
    expect((await ok(s, 'GET', `/api/users/${user.uid}/admin`, { jwt: user.jwt })).body).toEqual({ UID: user.uid, Admin: true })
    // promoting an admin again is fine
    expect((await ok(s, 'PUT', `/api/users/${user.uid}/admin`, { jwt: s.adminJwt })).body).toEqual({ UID: user.uid, Admin: true })
    // admin rights hold on the existing session
    await ok(s, 'GET', '/api/users/preferences', { jwt: user.jwt })
    await ok(s, 'GET', '/api/users/1', { jwt: user.jwt })

    await okEmpty(s, 'DELETE', `/api/users/${user.uid}/admin`, { jwt: s.adminJwt })
    expect((await userRecord(s, user.uid)).Admin).toBe(false)
    await refused(s, 403, 'GET', '/api/users/preferences', { jwt: user.jwt })
    await refused(s, 403, 'GET', '/api/users/1', { jwt: user.jwt })
    await refused(s, 403, 'POST', '/api/users', {
      jwt: user.jwt,
      json: { User: freshName(), Pass: 'password-x', Name: 'X', Email: 'x@example.com', Admin: false },
    })
    // demoting a non-admin succeeds too
    await okEmpty(s, 'DELETE', `/api/users/${user.uid}/admin`, { jwt: s.adminJwt })
  })

  test('an admin demoted by another admin loses rights on their open session', async () => {
    const admin2 = await s.createUser({ Admin: true })
    const victim = await s.createUser()
    await okEmpty(s, 'DELETE', `/api/users/${admin2.uid}/admin`, { jwt: s.adminJwt })
    await refused(s, 403, 'PUT', `/api/users/${victim.uid}/lock`, { jwt: admin2.jwt })
    await refused(s, 403, 'PUT', `/api/users/${admin2.uid}/admin`, { jwt: admin2.jwt })
  })

  test('the admin account cannot be demoted; non-admins cannot promote or demote', async () => {
    const admin2 = await s.createUser({ Admin: true })
    const user = await s.createUser()
    await refused(s, 403, 'DELETE', '/api/users/1/admin', { jwt: s.adminJwt })
    await refused(s, 403, 'DELETE', '/api/users/1/admin', { jwt: admin2.jwt })
    await refused(s, 403, 'PUT', `/api/users/${user.uid}/admin`, { jwt: user.jwt })
    await refused(s, 403, 'DELETE', `/api/users/${admin2.uid}/admin`, { jwt: user.jwt })
    await refused(s, 404, 'PUT', '/api/users/999999/admin', { jwt: s.adminJwt })
    await refused(s, 404, 'DELETE', '/api/users/999999/admin', { jwt: s.adminJwt })
  })
})

describe('searchgroup', () => {
  let s: TestServer
  beforeAll(async () => void (s = await createTestServer()))
  afterAll(() => s.close())

  test('GET answers a bare 0 when unset and the GID once set; DELETE clears it', async () => {
    const user = await s.createUser()
    const gid = await s.createGroup(freshName('g'), [user.uid])
    const unset = await ok(s, 'GET', `/api/users/${user.uid}/searchgroup`, { jwt: user.jwt })
    expect(unset.text).toBe('0')

    await okEmpty(s, 'PUT', `/api/users/${user.uid}/searchgroup`, { jwt: user.jwt, json: { GID: gid } })
    const set = await ok(s, 'GET', `/api/users/${user.uid}/searchgroup`, { jwt: user.jwt })
    expect(set.text).toBe(String(gid))
    expect((await userRecord(s, user.uid)).DefaultGID).toBe(gid)

    await okEmpty(s, 'DELETE', `/api/users/${user.uid}/searchgroup`, { jwt: user.jwt })
    expect((await ok(s, 'GET', `/api/users/${user.uid}/searchgroup`, { jwt: user.jwt })).text).toBe('0')
    expect('DefaultGID' in (await userRecord(s, user.uid))).toBe(false)
    // clearing an unset one succeeds
    await okEmpty(s, 'DELETE', `/api/users/${user.uid}/searchgroup`, { jwt: user.jwt })
  })

  test('a non-admin names only a group of theirs: another group or one that does not exist is 403, nothing changes', async () => {
    const user = await s.createUser()
    const mine = await s.createGroup(freshName('g'), [user.uid])
    const notMine = await s.createGroup(freshName('g'))
    await okEmpty(s, 'PUT', `/api/users/${user.uid}/searchgroup`, { jwt: user.jwt, json: { GID: mine } })
    for (const GID of [notMine, 999999]) {
      const res = await refused(s, 403, 'PUT', `/api/users/${user.uid}/searchgroup`, { jwt: user.jwt, json: { GID } })
      expect(res.body.Error).toContain(String(GID))
    }
    expect((await ok(s, 'GET', `/api/users/${user.uid}/searchgroup`, { jwt: user.jwt })).text).toBe(String(mine))
    // an API token of an admin acts as its user: the same rule
    const token = (await ok(s, 'POST', '/api/tokens', { jwt: s.adminJwt, json: { name: 't', capabilities: ['SetSearchGroup'] } })).body.token
    await refused(s, 403, 'PUT', '/api/users/1/searchgroup', { headers: { 'Service-Token': token }, json: { GID: notMine } })
  })

  test('an admin names any positive GID for anyone: a group the user is not in, or one that does not exist yet', async () => {
    const user = await s.createUser()
    const notMine = await s.createGroup(freshName('g'))
    await okEmpty(s, 'PUT', `/api/users/${user.uid}/searchgroup`, { jwt: s.adminJwt, json: { GID: notMine } })
    expect((await userRecord(s, user.uid)).DefaultGID).toBe(notMine)
    await okEmpty(s, 'PUT', `/api/users/${user.uid}/searchgroup`, { jwt: s.adminJwt, json: { GID: 777777 } })
    expect((await ok(s, 'GET', `/api/users/${user.uid}/searchgroup`, { jwt: user.jwt })).text).toBe('777777')
    expect((await userRecord(s, user.uid)).DefaultGID).toBe(777777)
    await okEmpty(s, 'PUT', '/api/users/1/searchgroup', { jwt: s.adminJwt, json: { GID: 2147483647 } })
    expect((await ok(s, 'GET', '/api/users/1/searchgroup', { jwt: s.adminJwt })).text).toBe('2147483647')
    await okEmpty(s, 'DELETE', '/api/users/1/searchgroup', { jwt: s.adminJwt })
  })

  test('what the js-client does on a fresh server: admin sets GID 1 (no group 1 yet), reads DefaultGID, clears it with GID null', async () => {
    const fresh = await createTestServer()
    try {
      expect((await fresh.call('GET', '/api/groups', { jwt: fresh.adminJwt })).body).toEqual([])
      const user = await fresh.createUser()
      await okEmpty(fresh, 'PUT', `/api/users/${user.uid}/searchgroup`, { jwt: fresh.adminJwt, json: { GID: 1 } })
      const record = await ok(fresh, 'GET', `/api/users/${user.uid}`, { jwt: fresh.adminJwt })
      expect(record.body.DefaultGID).toBe(1)
      expect((await ok(fresh, 'GET', `/api/users/${user.uid}/searchgroup`, { jwt: fresh.adminJwt })).text).toBe('1')
      // updateOneUserSearchGroup(id, null) sends {"GID": null}
      await okEmpty(fresh, 'PUT', `/api/users/${user.uid}/searchgroup`, { jwt: fresh.adminJwt, json: { GID: null } })
      expect('DefaultGID' in (await ok(fresh, 'GET', `/api/users/${user.uid}`, { jwt: fresh.adminJwt })).body).toBe(false)
      expect((await ok(fresh, 'GET', `/api/users/${user.uid}/searchgroup`, { jwt: user.jwt })).text).toBe('0')
      // and DELETE clears it too
      await okEmpty(fresh, 'PUT', `/api/users/${user.uid}/searchgroup`, { jwt: fresh.adminJwt, json: { GID: 1 } })
      await okEmpty(fresh, 'DELETE', `/api/users/${user.uid}/searchgroup`, { jwt: fresh.adminJwt })
      expect('DefaultGID' in (await ok(fresh, 'GET', `/api/users/${user.uid}`, { jwt: fresh.adminJwt })).body).toBe(false)
      // a group created later under that GID, then deleted, clears a default that names it
      await okEmpty(fresh, 'PUT', `/api/users/${user.uid}/searchgroup`, { jwt: fresh.adminJwt, json: { GID: 1 } })
      expect(await fresh.createGroup('later')).toBe(1)
      expect((await ok(fresh, 'GET', `/api/users/${user.uid}`, { jwt: fresh.adminJwt })).body.DefaultGID).toBe(1)
      await okEmpty(fresh, 'DELETE', '/api/groups/1', { jwt: fresh.adminJwt })
      expect('DefaultGID' in (await ok(fresh, 'GET', `/api/users/${user.uid}`, { jwt: fresh.adminJwt })).body).toBe(false)
    } finally {
      fresh.close()
    }
  })

  test('a non-admin clears their own with GID null', async () => {
    const user = await s.createUser()
    const mine = await s.createGroup(freshName('g'), [user.uid])
    await okEmpty(s, 'PUT', `/api/users/${user.uid}/searchgroup`, { jwt: user.jwt, json: { GID: mine } })
    await okEmpty(s, 'PUT', `/api/users/${user.uid}/searchgroup`, { jwt: user.jwt, json: { GID: null } })
    expect((await ok(s, 'GET', `/api/users/${user.uid}/searchgroup`, { jwt: user.jwt })).text).toBe('0')
  })

  test('malformed bodies are 400', async () => {
    const user = await s.createUser()
    await s.createGroup(freshName('g'), [user.uid])
    for (const json of [{}, { GID: 0 }, { GID: -1 }, { GID: 'one' }, { GID: 1.5 }, { GID: 2147483648 }, { GID: [1] }]) {
      await refused(s, 400, 'PUT', `/api/users/${user.uid}/searchgroup`, { jwt: user.jwt, json })
      await refused(s, 400, 'PUT', `/api/users/${user.uid}/searchgroup`, { jwt: s.adminJwt, json })
    }
  })

  test('only the user or an admin reads or changes it', async () => {
    const user = await s.createUser()
    const other = await s.createUser()
    const gid = await s.createGroup(freshName('g'), [user.uid, other.uid])
    await refused(s, 403, 'GET', `/api/users/${other.uid}/searchgroup`, { jwt: user.jwt })
    await refused(s, 403, 'PUT', `/api/users/${other.uid}/searchgroup`, { jwt: user.jwt, json: { GID: gid } })
    await okEmpty(s, 'PUT', `/api/users/${other.uid}/searchgroup`, { jwt: s.adminJwt, json: { GID: gid } })
    expect((await ok(s, 'GET', `/api/users/${other.uid}/searchgroup`, { jwt: s.adminJwt })).text).toBe(String(gid))
    await refused(s, 403, 'DELETE', `/api/users/${other.uid}/searchgroup`, { jwt: user.jwt })
    await okEmpty(s, 'DELETE', `/api/users/${other.uid}/searchgroup`, { jwt: s.adminJwt })
    expect((await ok(s, 'GET', `/api/users/${other.uid}/searchgroup`, { jwt: other.jwt })).text).toBe('0')
    await refused(s, 404, 'GET', '/api/users/999999/searchgroup', { jwt: s.adminJwt })
  })

  test('a store from before migration 9 keeps its default search groups', async () => {
    const db = new Database(':memory:', { strict: true })
    db.run('PRAGMA foreign_keys = ON')
    db.run('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied INTEGER NOT NULL)')
    for (const m of MIGRATIONS.filter((m) => m.version < 9)) {
      db.run(m.sql)
      db.run('INSERT INTO schema_migrations (version, name, applied) VALUES (?, ?, 0)', [m.version, m.name])
    }
    db.run("INSERT INTO groups (name) VALUES ('g')")
    db.run("INSERT INTO users (username, name, email, password_hash, created, default_gid) VALUES ('a', 'a', 'a@x', 'h', 0, 1), ('b', 'b', 'b@x', 'h', 0, NULL)")
    migrate(db)
    const users = new SqliteUsersRepo(db)
    expect([(await users.get(1))!.defaultGid, (await users.get(2))!.defaultGid]).toEqual([1, null])
    db.close()
  })

  test('leaving the group, or its deletion, clears the default search group', async () => {
    const user = await s.createUser()
    const g1 = await s.createGroup(freshName('g'), [user.uid])
    const g2 = await s.createGroup(freshName('g'), [user.uid])
    await okEmpty(s, 'PUT', `/api/users/${user.uid}/searchgroup`, { jwt: user.jwt, json: { GID: g1 } })
    // leaving another group keeps it
    await okEmpty(s, 'DELETE', `/api/users/${user.uid}/group/${g2}`, { jwt: s.adminJwt })
    expect((await ok(s, 'GET', `/api/users/${user.uid}/searchgroup`, { jwt: user.jwt })).text).toBe(String(g1))
    await okEmpty(s, 'DELETE', `/api/users/${user.uid}/group/${g1}`, { jwt: s.adminJwt })
    expect((await ok(s, 'GET', `/api/users/${user.uid}/searchgroup`, { jwt: user.jwt })).text).toBe('0')
    expect('DefaultGID' in (await userRecord(s, user.uid))).toBe(false)

    const g3 = await s.createGroup(freshName('g'), [user.uid])
    await okEmpty(s, 'PUT', `/api/users/${user.uid}/searchgroup`, { jwt: user.jwt, json: { GID: g3 } })
    await okEmpty(s, 'DELETE', `/api/groups/${g3}`, { jwt: s.adminJwt })
    expect((await ok(s, 'GET', `/api/users/${user.uid}/searchgroup`, { jwt: user.jwt })).text).toBe('0')
  })
})

describe('preferences', () => {
  let s: TestServer
  beforeAll(async () => void (s = await createTestServer()))
  afterAll(() => s.close())

  const json = { 'content-type': 'application/json' }
  const verbatim = '{"zeta":1,"alpha":12345678901234567890,"nested":{"b":[1.50,2e3,true,null],"a":"\\u00e9\u00e9"},"mid":-0.0}'

  test('stored verbatim: large integers, number forms and key order survive', async () => {
    const user = await s.createUser()
    await okEmpty(s, 'PUT', `/api/users/${user.uid}/preferences`, { jwt: user.jwt, body: verbatim, headers: json })
    const res = await ok(s, 'GET', `/api/users/${user.uid}/preferences`, { jwt: user.jwt })
    expect(res.text).toBe(verbatim)
    // replaced by the next PUT
    await okEmpty(s, 'PUT', `/api/users/${user.uid}/preferences`, { jwt: user.jwt, body: '[1, 2, 3]', headers: json })
    expect((await ok(s, 'GET', `/api/users/${user.uid}/preferences`, { jwt: user.jwt })).text).toBe('[1, 2, 3]')
  })

  test('GET answers null when none are stored; DELETE answers {} and clears them', async () => {
    const user = await s.createUser()
    const none = await ok(s, 'GET', `/api/users/${user.uid}/preferences`, { jwt: user.jwt })
    expect(none.text).toBe('null')
    await okEmpty(s, 'PUT', `/api/users/${user.uid}/preferences`, { jwt: user.jwt, json: { a: 1 } })
    expect((await ok(s, 'GET', `/api/users/${user.uid}/preferences`, { jwt: user.jwt })).body).toEqual({ a: 1 })
    await okEmpty(s, 'DELETE', `/api/users/${user.uid}/preferences`, { jwt: user.jwt })
    expect((await ok(s, 'GET', `/api/users/${user.uid}/preferences`, { jwt: user.jwt })).text).toBe('null')
    expect(await s.rows('SELECT * FROM preferences WHERE uid = ?', [user.uid])).toEqual([])
    await okEmpty(s, 'DELETE', `/api/users/${user.uid}/preferences`, { jwt: user.jwt })
  })

  test('an empty body (the Go client sends one) is no error: it stores nothing', async () => {
    const user = await s.createUser()
    await okEmpty(s, 'PUT', `/api/users/${user.uid}/preferences`, { jwt: user.jwt, json: { a: 1 } })
    await okEmpty(s, 'PUT', `/api/users/${user.uid}/preferences`, { jwt: user.jwt, body: '', headers: json })
    expect((await ok(s, 'GET', `/api/users/${user.uid}/preferences`, { jwt: user.jwt })).text).toBe('null')
  })

  test('invalid JSON is 400 and keeps what was stored', async () => {
    const user = await s.createUser()
    await okEmpty(s, 'PUT', `/api/users/${user.uid}/preferences`, { jwt: user.jwt, json: { keep: true } })
    await refused(s, 400, 'PUT', `/api/users/${user.uid}/preferences`, { jwt: user.jwt, body: '{"keep":', headers: json })
    await refused(s, 400, 'PUT', `/api/users/${user.uid}/preferences`, { jwt: user.jwt, body: '{keep: true}', headers: json })
    await refused(s, 400, 'PUT', `/api/users/${user.uid}/preferences`, { jwt: user.jwt, body: 'not json', headers: { 'content-type': 'text/plain' } })
    expect((await ok(s, 'GET', `/api/users/${user.uid}/preferences`, { jwt: user.jwt })).body).toEqual({ keep: true })
  })

  test('a multipart form is not JSON: 415 (only upload routes take forms), and what was stored is kept', async () => {
    const user = await s.createUser()
    await okEmpty(s, 'PUT', `/api/users/${user.uid}/preferences`, { jwt: user.jwt, json: { keep: 'me' } })
    const form = new FormData()
    form.append('prefs', '{"replaced":true}')
    const before = storeSnapshot(s)
    const res = await s.app.handle(
      new Request(`http://localhost/api/users/${user.uid}/preferences`, { method: 'PUT', headers: { authorization: `Bearer ${user.jwt}` }, body: form }),
    )
    const text = await res.text()
    expectError({ status: res.status, headers: res.headers, text, body: JSON.parse(text) }, 415)
    expect(storeSnapshot(s)).toEqual(before)
    expect((await ok(s, 'GET', `/api/users/${user.uid}/preferences`, { jwt: user.jwt })).body).toEqual({ keep: 'me' })
  })

  test('only the user or an admin may set, read or clear them', async () => {
    const user = await s.createUser()
    const other = await s.createUser()
    await okEmpty(s, 'PUT', `/api/users/${other.uid}/preferences`, { jwt: other.jwt, json: { mine: 1 } })
    await refused(s, 403, 'PUT', `/api/users/${other.uid}/preferences`, { jwt: user.jwt, json: { yours: 1 } })
    await refused(s, 403, 'GET', `/api/users/${other.uid}/preferences`, { jwt: user.jwt })
    await refused(s, 403, 'DELETE', `/api/users/${other.uid}/preferences`, { jwt: user.jwt })
    await refused(s, 403, 'GET', '/api/users/1/preferences', { jwt: user.jwt })

    await okEmpty(s, 'PUT', `/api/users/${other.uid}/preferences`, { jwt: s.adminJwt, body: '{"by":"admin"}', headers: json })
    expect((await ok(s, 'GET', `/api/users/${other.uid}/preferences`, { jwt: s.adminJwt })).text).toBe('{"by":"admin"}')
    expect((await ok(s, 'GET', `/api/users/${other.uid}/preferences`, { jwt: other.jwt })).text).toBe('{"by":"admin"}')
    await okEmpty(s, 'DELETE', `/api/users/${other.uid}/preferences`, { jwt: s.adminJwt })
    expect((await ok(s, 'GET', `/api/users/${other.uid}/preferences`, { jwt: other.jwt })).text).toBe('null')
    await refused(s, 404, 'GET', '/api/users/999999/preferences', { jwt: s.adminJwt })
    await refused(s, 404, 'PUT', '/api/users/999999/preferences', { jwt: s.adminJwt, json: { a: 1 } })
  })

  test('preferences are a session\'s: every API token is refused with 403, whatever it holds, and nothing changes', async () => {
    const user = await s.createUser()
    await okEmpty(s, 'PUT', `/api/users/${user.uid}/preferences`, { jwt: user.jwt, json: { mine: 1 } })
    const token = async (capabilities: string[]) =>
      ({ 'Service-Token': (await ok(s, 'POST', '/api/tokens', { jwt: user.jwt, json: { name: 'prefs', capabilities } })).body.token as string })
    const path = `/api/users/${user.uid}/preferences`
    /** A refusal of a token as such: 403 naming no permission (none would let it in), and nothing changed. */
    const sessionOnly = async (method: string, at: string, opts: CallOptions) => {
      const before = storeSnapshot(s)
      const res = await s.call(method, at, opts)
      expectError(res, 403)
      expect(res.body.Cap).toBeUndefined()
      expect(storeSnapshot(s)).toEqual(before)
    }
    /** A refusal for want of `cap`: 403 naming it, and nothing changed. */
    const lacks = async (cap: string, method: string, at: string, opts: CallOptions) => {
      const before = storeSnapshot(s)
      expectError(await s.call(method, at, opts), 403, { Cap: cap })
      expect(storeSnapshot(s)).toEqual(before)
    }
    const stats = await token(['Stats'])
    // every permission a user may give a token (reading all users' history is an admin's)
    const everything = await token(CAPABILITY_NAMES.filter((c) => c !== 'SearchAllHistory'))
    for (const headers of [stats, everything]) {
      await sessionOnly('GET', path, { headers })
      await sessionOnly('PUT', path, { headers, json: { stolen: 1 } })
      await sessionOnly('DELETE', path, { headers })
    }
    // an admin's token neither reaches another user's preferences nor the listing of all of them
    const adminToken = { 'Service-Token': (await ok(s, 'POST', '/api/tokens', { jwt: s.adminJwt, json: { name: 'a', capabilities: [...CAPABILITY_NAMES] } })).body.token as string }
    await sessionOnly('GET', path, { headers: adminToken })
    await sessionOnly('GET', '/api/users/preferences', { headers: adminToken })
    expect((await ok(s, 'GET', path, { jwt: user.jwt })).body).toEqual({ mine: 1 })
    // the other reads of the owner's account need the permission that lists the same facts (ListUsers, ListGroups)
    for (const suffix of ['', '/admin', '/searchgroup']) {
      await lacks('ListUsers', 'GET', `/api/users/${user.uid}${suffix}`, { headers: stats })
      expect((await s.call('GET', `/api/users/${user.uid}${suffix}`, { headers: await token(['ListUsers']) })).status).toBe(200)
    }
    await lacks('ListGroups', 'GET', `/api/users/${user.uid}/group`, { headers: stats })
    // who the token acts for stays open to any token
    expect((await ok(s, 'GET', '/api/info/whoami', { headers: stats })).body.UID).toBe(user.uid)
  })

  test('admin listing: Data is the stored JSON base64-encoded, Name "prefs"', async () => {
    const user = await s.createUser()
    s.clock.advance(1000)
    await okEmpty(s, 'PUT', `/api/users/${user.uid}/preferences`, { jwt: user.jwt, body: verbatim, headers: json })
    const res = await ok(s, 'GET', '/api/users/preferences', { jwt: s.adminJwt })
    expect(Array.isArray(res.body)).toBe(true)
    const mine = res.body.filter((p: any) => p.UID === user.uid)
    expect(mine).toEqual([{ Data: expect.any(String), Name: 'prefs', Synced: false, UID: user.uid, Updated: new Date(s.clock.now()).toISOString() }])
    expect(Buffer.from(mine[0].Data, 'base64').toString('utf8')).toBe(verbatim)
    for (const p of res.body) expect(Object.keys(p).sort()).toEqual(['Data', 'Name', 'Synced', 'UID', 'Updated'])

    await okEmpty(s, 'DELETE', `/api/users/${user.uid}/preferences`, { jwt: user.jwt })
    const after = await ok(s, 'GET', '/api/users/preferences', { jwt: s.adminJwt })
    expect(after.body.some((p: any) => p.UID === user.uid)).toBe(false)

    await refused(s, 403, 'GET', '/api/users/preferences', { jwt: user.jwt })
  })
})

describe('group membership', () => {
  let s: TestServer
  beforeAll(async () => void (s = await createTestServer()))
  afterAll(() => s.close())

  test('an admin adds groups to existing memberships; the user and admins list them', async () => {
    const user = await s.createUser()
    const g1 = await s.createGroup(freshName('g'))
    const g2 = await s.createGroup(freshName('g'))
    const g3 = await s.createGroup(freshName('g'))
    expect((await ok(s, 'GET', `/api/users/${user.uid}/group`, { jwt: user.jwt })).body).toEqual([])

    await okEmpty(s, 'POST', `/api/users/${user.uid}/group`, { jwt: s.adminJwt, json: { GIDs: [g1, g2] } })
    await okEmpty(s, 'POST', `/api/users/${user.uid}/group`, { jwt: s.adminJwt, json: { GIDs: [g3, g1, g3] } })
    const own = await ok(s, 'GET', `/api/users/${user.uid}/group`, { jwt: user.jwt })
    expect(own.body.map((g: any) => g.GID).sort((a: number, b: number) => a - b)).toEqual([g1, g2, g3])
    for (const g of own.body) {
      expect(Object.keys(g).sort()).toEqual(GROUP_KEYS)
      expect(g).toEqual({ GID: g.GID, Name: expect.any(String), Desc: expect.any(String), Synced: false })
    }
    const byAdmin = await ok(s, 'GET', `/api/users/${user.uid}/group/`, { jwt: s.adminJwt })
    expect(byAdmin.body).toEqual(own.body)
    expect((await userRecord(s, user.uid)).Groups).toEqual(own.body)
    // an empty list adds nothing
    await okEmpty(s, 'POST', `/api/users/${user.uid}/group`, { jwt: s.adminJwt, json: { GIDs: [] } })
    expect((await ok(s, 'GET', `/api/users/${user.uid}/group`, { jwt: user.jwt })).body).toEqual(own.body)
  })

  test('an unknown GID is 404 and none of the listed groups is added', async () => {
    const user = await s.createUser()
    const g1 = await s.createGroup(freshName('g'))
    const g2 = await s.createGroup(freshName('g'))
    await refused(s, 404, 'POST', `/api/users/${user.uid}/group`, { jwt: s.adminJwt, json: { GIDs: [g1, 999999, g2] } })
    await refused(s, 404, 'POST', `/api/users/${user.uid}/group`, { jwt: s.adminJwt, json: { GIDs: [g1, g2, 999999] } })
    expect((await ok(s, 'GET', `/api/users/${user.uid}/group`, { jwt: user.jwt })).body).toEqual([])
    await refused(s, 404, 'POST', '/api/users/999999/group', { jwt: s.adminJwt, json: { GIDs: [g1] } })
  })

  test('malformed bodies are 400', async () => {
    const user = await s.createUser()
    const g1 = await s.createGroup(freshName('g'))
    for (const body of [{}, { GIDs: g1 }, { GIDs: [0] }, { GIDs: ['x'] }, { GIDs: null }]) {
      await refused(s, 400, 'POST', `/api/users/${user.uid}/group`, { jwt: s.adminJwt, json: body })
    }
  })

  test('GIDs must be JSON numbers: "" and "5" are 400, not [] and [5] (found by the fuzz test)', async () => {
    const user = await s.createUser()
    const g1 = await s.createGroup(freshName('g'))
    for (const GIDs of ['', String(g1), [String(g1)], `[${g1}]`])
      await refused(s, 400, 'POST', `/api/users/${user.uid}/group`, { jwt: s.adminJwt, json: { GIDs } })
    await refused(s, 400, 'PUT', `/api/users/${user.uid}/searchgroup`, { jwt: s.adminJwt, json: { GID: String(g1) } })
  })

  test('only admins add and remove memberships', async () => {
    const user = await s.createUser()
    const g1 = await s.createGroup(freshName('g'), [user.uid])
    const g2 = await s.createGroup(freshName('g'))
    await refused(s, 403, 'POST', `/api/users/${user.uid}/group`, { jwt: user.jwt, json: { GIDs: [g2] } })
    await refused(s, 403, 'DELETE', `/api/users/${user.uid}/group/${g1}`, { jwt: user.jwt })
  })

  test('an admin removes a membership; removing a non-membership succeeds; unknown group or user 404', async () => {
    const user = await s.createUser()
    const g1 = await s.createGroup(freshName('g'), [user.uid])
    const g2 = await s.createGroup(freshName('g'), [user.uid])
    await okEmpty(s, 'DELETE', `/api/users/${user.uid}/group/${g1}`, { jwt: s.adminJwt })
    expect((await ok(s, 'GET', `/api/users/${user.uid}/group`, { jwt: user.jwt })).body.map((g: any) => g.GID)).toEqual([g2])
    await okEmpty(s, 'DELETE', `/api/users/${user.uid}/group/${g1}/`, { jwt: s.adminJwt })
    await refused(s, 404, 'DELETE', `/api/users/${user.uid}/group/999999`, { jwt: s.adminJwt })
    await refused(s, 404, 'DELETE', `/api/users/999999/group/${g2}`, { jwt: s.adminJwt })
    await refused(s, 400, 'DELETE', `/api/users/${user.uid}/group/abc`, { jwt: s.adminJwt })
  })

  test('a non-admin lists only their own groups', async () => {
    const user = await s.createUser()
    const other = await s.createUser()
    await s.createGroup(freshName('g'), [other.uid])
    await refused(s, 403, 'GET', `/api/users/${other.uid}/group`, { jwt: user.jwt })
    await refused(s, 404, 'GET', '/api/users/999999/group', { jwt: s.adminJwt })
  })
})

describe('session list', () => {
  let s: TestServer
  beforeAll(async () => void (s = await createTestServer()))
  afterAll(() => s.close())

  test('a user lists their own sessions', async () => {
    const user = await s.createUser()
    s.clock.advance(5000)
    const second = await s.login(user.User, user.Pass)
    const res = await ok(s, 'GET', `/api/users/${user.uid}/sessions`, { jwt: second })
    expect(Object.keys(res.body).sort()).toEqual(['Sessions', 'UID', 'User'])
    expect(res.body.UID).toBe(user.uid)
    expect(res.body.User).toBe(user.User)
    expect(res.body.Sessions).toHaveLength(2)
    for (const entry of res.body.Sessions) {
      expect(Object.keys(entry).sort()).toEqual(['LastHit', 'Origin', 'Synced', 'TempSession'])
      expect(typeof entry.Origin).toBe('string')
      expect(entry.LastHit).toMatch(RFC3339)
      expect(entry.TempSession).toBe(false)
      expect(entry.Synced).toBe(false)
    }
    expect(res.body.Sessions.map((e: any) => e.LastHit)).toContain(new Date(s.clock.now()).toISOString())

    // a download session shows as temporary
    const tmp = await ok(s, 'GET', '/api/login/tmptoken', { jwt: second })
    expect(tmp.body.LoginStatus).toBe(true)
    const withTemp = await ok(s, 'GET', `/api/users/${user.uid}/sessions/`, { jwt: second })
    expect(withTemp.body.Sessions.map((e: any) => e.TempSession).sort()).toEqual([false, false, true])

    // logging out one session removes it from the list
    await okEmpty(s, 'PUT', '/api/logout', { jwt: user.jwt })
    expect((await ok(s, 'GET', `/api/users/${user.uid}/sessions`, { jwt: second })).body.Sessions).toHaveLength(2)
  })

  test('an admin lists anyone\'s sessions; a non-admin only their own', async () => {
    const user = await s.createUser()
    const other = await s.createUser()
    const res = await ok(s, 'GET', `/api/users/${other.uid}/sessions`, { jwt: s.adminJwt })
    expect(res.body).toEqual({
      UID: other.uid,
      User: other.User,
      Sessions: [{ Origin: expect.any(String), LastHit: expect.stringMatching(RFC3339), TempSession: false, Synced: false }],
    })
    await refused(s, 403, 'GET', `/api/users/${other.uid}/sessions`, { jwt: user.jwt })
    await refused(s, 403, 'GET', '/api/users/1/sessions', { jwt: user.jwt })
    await refused(s, 404, 'GET', '/api/users/999999/sessions', { jwt: s.adminJwt })
  })

  test('sessions past the idle timeout are not listed', async () => {
    // moves the clock past every session's idle timeout, so it gets a server of its own
    const t = await createTestServer()
    try {
      const user = await t.createUser()
      const idle = t.config.sessionIdleMs
      t.clock.advance(idle / 2)
      const fresh = await t.login(user.User, user.Pass)
      t.clock.advance(idle / 2 + 1)
      // user.jwt has now been idle for longer than the timeout; fresh has not
      expect(await t.rows('SELECT id FROM sessions WHERE uid = ?', [user.uid])).toHaveLength(2)
      const res = await ok(t, 'GET', `/api/users/${user.uid}/sessions`, { jwt: fresh })
      expect(res.body.Sessions).toHaveLength(1)
      expect(res.body.Sessions[0].LastHit).toBe(new Date(t.clock.now()).toISOString())
      expectError(await t.call('GET', '/api/info/whoami', { jwt: user.jwt }), 401)
    } finally {
      t.close()
    }
  })

  test('a user without sessions has an empty list', async () => {
    const user = await s.createUser()
    await okEmpty(s, 'PUT', `/api/users/${user.uid}/lock`, { jwt: s.adminJwt })
    expect((await ok(s, 'GET', `/api/users/${user.uid}/sessions`, { jwt: s.adminJwt })).body.Sessions).toEqual([])
  })
})
