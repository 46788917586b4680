// The route × caller matrix. Every route the app registers must be either public or declare a permission,
// and must appear in MATRIX below; each row is then called as every kind of caller on a fresh store:
// anonymous → 401, callers without the right → 403, callers with it → 200.
import { describe, expect, test } from 'bun:test'
import { PUBLIC_ROUTES } from '../server/permissions'
import { createTestServer, type TestServer } from './helpers'

/**
 * Who may call a route:
 * - any: every authenticated caller;
 * - self: the user named by :id, and admins;
 * - member: members of the group named by :gid, and admins;
 * - admin: admins only.
 */
type Who = 'any' | 'self' | 'member' | 'admin'

interface Row {
  who: Who
  /** A valid body, so that a permitted call succeeds with 200. */
  body?: (f: Fixture) => unknown
}

const MATRIX: Record<string, Row> = {
  'GET /api/testauth': { who: 'any' },
  'GET /api/settings': { who: 'any' },
  'GET /api/login/refreshtoken': { who: 'any' },
  'GET /api/login/tmptoken': { who: 'any' },
  'PUT /api/logout': { who: 'any' },
  'DELETE /api/logout': { who: 'any' },
  'GET /api/info/whoami': { who: 'any' },
  'GET /api/users': { who: 'any' },
  'POST /api/users': { who: 'admin', body: () => ({ User: 'newbie', Pass: 'newbie-password', Name: 'New', Email: 'n@example.com', Admin: false }) },
  'GET /api/users/preferences': { who: 'admin' },
  'GET /api/users/:id': { who: 'self' },
  'PUT /api/users/:id': { who: 'self', body: () => ({ Name: 'Renamed' }) },
  'DELETE /api/users/:id': { who: 'admin' },
  'PUT /api/users/:id/lock': { who: 'admin' },
  'DELETE /api/users/:id/lock': { who: 'admin' },
  'PUT /api/users/:id/pwd': { who: 'self', body: (f) => ({ OrigPass: f.ownerPass, NewPass: 'another-password' }) },
  'GET /api/users/:id/admin': { who: 'self' },
  'PUT /api/users/:id/admin': { who: 'admin' },
  'DELETE /api/users/:id/admin': { who: 'admin' },
  'GET /api/users/:id/searchgroup': { who: 'self' },
  'PUT /api/users/:id/searchgroup': { who: 'self', body: (f) => ({ GID: f.gid }) },
  'DELETE /api/users/:id/searchgroup': { who: 'self' },
  'GET /api/users/:id/preferences': { who: 'self' },
  'PUT /api/users/:id/preferences': { who: 'self', body: () => ({ theme: 'dark' }) },
  'DELETE /api/users/:id/preferences': { who: 'self' },
  'GET /api/users/:id/group': { who: 'self' },
  'POST /api/users/:id/group': { who: 'admin', body: (f) => ({ GIDs: [f.gid] }) },
  'DELETE /api/users/:id/group/:gid': { who: 'admin' },
  'GET /api/users/:id/sessions': { who: 'self' },
  'POST /api/groups': { who: 'admin', body: () => ({ Name: 'brand-new', Desc: '' }) },
  'GET /api/groups': { who: 'any' },
  'GET /api/groups/:gid': { who: 'member' },
  'PUT /api/groups/:gid': { who: 'admin', body: () => ({ Desc: 'changed' }) },
  'DELETE /api/groups/:gid': { who: 'admin' },
  'GET /api/groups/:gid/members': { who: 'member' },
}

type Role = 'stranger' | 'member' | 'owner' | 'admin'
/** Admin last: its call may delete the fixtures the others need. */
const ROLES: Role[] = ['stranger', 'member', 'owner', 'admin']

function allowed(who: Who, role: Role): boolean {
  switch (who) {
    case 'any':
      return true
    case 'admin':
      return role === 'admin'
    case 'self':
      return role === 'owner' || role === 'admin'
    case 'member':
      return role !== 'stranger'
  }
}

interface Fixture {
  server: TestServer
  /** JWT per role. */
  jwt: Record<Role, string>
  ownerUid: number
  ownerPass: string
  gid: number
}

/** owner and member share group gid; stranger is in no group; admin is UID 1. */
async function fixture(): Promise<Fixture> {
  const server = await createTestServer()
  const owner = await server.createUser()
  const member = await server.createUser()
  const stranger = await server.createUser()
  const gid = await server.createGroup('shared', [owner.uid, member.uid])
  return {
    server,
    jwt: { stranger: stranger.jwt, member: member.jwt, owner: owner.jwt, admin: server.adminJwt },
    ownerUid: owner.uid,
    ownerPass: owner.Pass,
    gid,
  }
}

const probe = await createTestServer()
const routes = probe.app.routes.map((r) => ({
  key: `${r.method} ${r.path.length > 1 ? r.path.replace(/\/$/, '') : r.path}`,
  permission: (r.hooks as { detail?: Record<string, unknown> }).detail?.['x-permission'],
}))
probe.close()

describe('every route is accounted for', () => {
  test('each route is public or declares a permission, never both', () => {
    for (const r of routes) {
      const isPublic = PUBLIC_ROUTES.has(r.key)
      expect({ route: r.key, declared: isPublic !== (r.permission !== undefined) }).toEqual({ route: r.key, declared: true })
    }
  })

  test('each protected route has a row in the matrix, and each row names a route', () => {
    const protectedKeys = routes.filter((r) => !PUBLIC_ROUTES.has(r.key)).map((r) => r.key).sort()
    expect(protectedKeys).toEqual(Object.keys(MATRIX).sort())
  })

  test('rows that say admin match routes declaring the admin permission', () => {
    for (const r of routes.filter((r) => !PUBLIC_ROUTES.has(r.key)))
      expect({ route: r.key, admin: r.permission === 'admin' }).toEqual({ route: r.key, admin: MATRIX[r.key]!.who === 'admin' })
  })
})

describe('public routes answer anonymous callers', () => {
  for (const key of PUBLIC_ROUTES) {
    test(key, async () => {
      const server = await createTestServer()
      const [method, path] = key.split(' ') as [string, string]
      const res = await server.call(method, path, method === 'POST' ? { json: { User: 'admin', Pass: 'wrong' } } : {})
      expect(res.status).not.toBe(401)
      expect(res.status).not.toBe(403)
      server.close()
    })
  }
})

describe('route × caller matrix', () => {
  for (const [key, row] of Object.entries(MATRIX)) {
    test(key, async () => {
      const f = await fixture()
      const [method, pattern] = key.split(' ') as [string, string]
      const path = pattern.replace(':id', String(f.ownerUid)).replace(':gid', String(f.gid))
      const json = row.body?.(f)
      const outcome: Record<string, number> = {}
      const expected: Record<string, number> = {}

      outcome.anonymous = (await f.server.call(method, path, { json })).status
      expected.anonymous = 401
      outcome.garbageJwt = (await f.server.call(method, path, { json, jwt: 'not.a.jwt' })).status
      expected.garbageJwt = 401
      for (const role of ROLES) {
        const res = await f.server.call(method, path, { json, jwt: f.jwt[role] })
        outcome[role] = res.status
        expected[role] = allowed(row.who, role) ? 200 : 403
        if (res.status >= 400) expect(typeof res.body?.Error).toBe('string')
      }
      expect(outcome).toEqual(expected)
      f.server.close()
    })
  }
})
