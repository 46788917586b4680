// Groups over HTTP (docs/api.md "Conventions", "Users and groups").
import { describe, expect, test } from 'bun:test'
import { type TestServer, expectError, serverPerTest } from '../../test/helpers'

const setup = serverPerTest()

const listGroups = async (s: TestServer) => {
  const res = await s.call('GET', '/api/groups', { jwt: s.adminJwt })
  expect(res.status).toBe(200)
  return res.body as { GID: number; Name: string; Desc: string; Synced: boolean }[]
}
const getGroup = async (s: TestServer, gid: number) => {
  const res = await s.call('GET', `/api/groups/${gid}`, { jwt: s.adminJwt })
  expect(res.status).toBe(200)
  return res.body
}
const addMember = async (s: TestServer, uid: number, gid: number) =>
  expect((await s.call('POST', `/api/users/${uid}/group`, { jwt: s.adminJwt, json: { GIDs: [gid] } })).status).toBe(200)

describe('POST /api/groups', () => {
  test('an admin creates a group and gets the bare GID', async () => {
    const s = await setup()
    const res = await s.call('POST', '/api/groups', { jwt: s.adminJwt, json: { Name: 'ops', Desc: 'Operations' } })
    expect(res.status).toBe(200)
    expect(res.text).toMatch(/^\d+$/)
    const gid = res.body as number
    expect(Number.isInteger(gid) && gid >= 1).toBe(true)
    expect(await getGroup(s, gid)).toEqual({ GID: gid, Name: 'ops', Desc: 'Operations', Synced: false })
    const second = await s.call('POST', '/api/groups', { jwt: s.adminJwt, json: { Name: 'dev' } })
    expect(second.status).toBe(200)
    expect(second.body).not.toBe(gid)
    // Desc is optional and then an empty string, never null
    expect(await getGroup(s, second.body)).toEqual({ GID: second.body, Name: 'dev', Desc: '', Synced: false })
  })

  test('non-admins get 403, anonymous callers 401, and nothing is created', async () => {
    const s = await setup()
    const u = await s.createUser()
    expectError(await s.call('POST', '/api/groups', { jwt: u.jwt, json: { Name: 'sneaky' } }), 403)
    expectError(await s.call('POST', '/api/groups', { json: { Name: 'anon' } }), 401)
    expect(await listGroups(s)).toEqual([])
  })

  test('a missing, empty or mistyped Name is 400 and nothing is created', async () => {
    const s = await setup()
    for (const json of [{}, { Desc: 'no name' }, { Name: '' }, { Name: '   ' }, { Name: 7 }, { Name: null }, { Name: 'x'.repeat(257) }, { Name: 'ok', Desc: 5 }, [], 'ops'])
      expectError(await s.call('POST', '/api/groups', { jwt: s.adminJwt, json }), 400)
    expect(await listGroups(s)).toEqual([])
  })

  test('a duplicate name is 409, also in another letter case, and nothing changes', async () => {
    const s = await setup()
    const gid = await s.createGroup('Alpha')
    for (const Name of ['Alpha', 'alpha', 'ALPHA'])
      expectError(await s.call('POST', '/api/groups', { jwt: s.adminJwt, json: { Name, Desc: 'dup' } }), 409)
    expect(await listGroups(s)).toEqual([{ GID: gid, Name: 'Alpha', Desc: 'Alpha group', Synced: false }])
  })
})

describe('GET /api/groups', () => {
  test('any user lists every group; anonymous is 401', async () => {
    const s = await setup()
    const u = await s.createUser()
    expect((await s.call('GET', '/api/groups', { jwt: u.jwt })).body).toEqual([])
    const a = await s.createGroup('a')
    const b = await s.createGroup('b')
    const res = await s.call('GET', '/api/groups', { jwt: u.jwt })
    expect(res.status).toBe(200)
    expect(res.body).toEqual([
      { GID: a, Name: 'a', Desc: 'a group', Synced: false },
      { GID: b, Name: 'b', Desc: 'b group', Synced: false },
    ])
    expectError(await s.call('GET', '/api/groups'), 401)
  })
})

describe('GET /api/groups/{gid}', () => {
  test('members and admins read it; non-members 403; unknown 404; bad id 400', async () => {
    const s = await setup()
    const member = await s.createUser()
    const outsider = await s.createUser()
    const gid = await s.createGroup('team', [member.uid])
    const expected = { GID: gid, Name: 'team', Desc: 'team group', Synced: false }
    for (const jwt of [member.jwt, s.adminJwt]) {
      const res = await s.call('GET', `/api/groups/${gid}`, { jwt })
      expect(res.status).toBe(200)
      expect(res.body).toEqual(expected)
    }
    expectError(await s.call('GET', `/api/groups/${gid}`, { jwt: outsider.jwt }), 403)
    expectError(await s.call('GET', `/api/groups/${gid + 100}`, { jwt: s.adminJwt }), 404)
    expectError(await s.call('GET', `/api/groups/${gid + 100}`, { jwt: member.jwt }), 404)
    for (const bad of ['abc', '0', '-1', '1.5', '99999999999'])
      expectError(await s.call('GET', `/api/groups/${bad}`, { jwt: s.adminJwt }), 400)
    expectError(await s.call('GET', `/api/groups/${gid}`), 401)
  })
})

describe('PUT /api/groups/{gid}', () => {
  test('changes Name and Desc; absent or empty-string fields keep their value', async () => {
    const s = await setup()
    const gid = await s.createGroup('orig')
    const put = async (json: unknown) => {
      const res = await s.call('PUT', `/api/groups/${gid}`, { jwt: s.adminJwt, json })
      expect(res.status).toBe(200)
      expect(res.body).toEqual({})
    }
    await put({ Name: 'renamed' })
    expect(await getGroup(s, gid)).toEqual({ GID: gid, Name: 'renamed', Desc: 'orig group', Synced: false })
    await put({ Desc: 'new description' })
    expect(await getGroup(s, gid)).toEqual({ GID: gid, Name: 'renamed', Desc: 'new description', Synced: false })
    await put({ Name: '', Desc: '' })
    await put({})
    expect(await getGroup(s, gid)).toEqual({ GID: gid, Name: 'renamed', Desc: 'new description', Synced: false })
    await put({ Name: 'both', Desc: 'changed' })
    expect(await getGroup(s, gid)).toEqual({ GID: gid, Name: 'both', Desc: 'changed', Synced: false })
    // a change of letter case of its own name is not a duplicate
    await put({ Name: 'BOTH' })
    expect((await getGroup(s, gid)).Name).toBe('BOTH')
  })

  test('a name taken by another group is 409, in any letter case, and nothing changes', async () => {
    const s = await setup()
    const a = await s.createGroup('first')
    const b = await s.createGroup('second')
    const before = await listGroups(s)
    for (const Name of ['first', 'FIRST'])
      expectError(await s.call('PUT', `/api/groups/${b}`, { jwt: s.adminJwt, json: { Name, Desc: 'would change' } }), 409)
    expect(await listGroups(s)).toEqual(before)
    expect((await getGroup(s, a)).Name).toBe('first')
  })

  test('non-admins get 403 (members too), unknown 404, bad input 400, and nothing changes', async () => {
    const s = await setup()
    const member = await s.createUser()
    const gid = await s.createGroup('keep', [member.uid])
    const before = await getGroup(s, gid)
    expectError(await s.call('PUT', `/api/groups/${gid}`, { jwt: member.jwt, json: { Name: 'mine' } }), 403)
    expectError(await s.call('PUT', `/api/groups/${gid}`, { json: { Name: 'anon' } }), 401)
    expectError(await s.call('PUT', `/api/groups/${gid + 100}`, { jwt: s.adminJwt, json: { Name: 'ghost' } }), 404)
    for (const json of [{ Name: 5 }, { Desc: false }, { Name: 'y'.repeat(257) }, { Name: ' \t ' }])
      expectError(await s.call('PUT', `/api/groups/${gid}`, { jwt: s.adminJwt, json }), 400)
    expectError(await s.call('PUT', '/api/groups/abc', { jwt: s.adminJwt, json: { Name: 'x' } }), 400)
    expect(await getGroup(s, gid)).toEqual(before)
    expect((await listGroups(s)).map((g) => g.Name)).toEqual(['keep'])
  })
})

describe('DELETE /api/groups/{gid}', () => {
  test('removes the group, its memberships and default search groups that pointed to it', async () => {
    const s = await setup()
    const u = await s.createUser()
    const gone = await s.createGroup('gone', [u.uid])
    const stays = await s.createGroup('stays', [u.uid])
    expect((await s.call('PUT', `/api/users/${u.uid}/searchgroup`, { jwt: u.jwt, json: { GID: gone } })).status).toBe(200)
    expect((await s.call('GET', `/api/users/${u.uid}/searchgroup`, { jwt: u.jwt })).body).toBe(gone)

    const res = await s.call('DELETE', `/api/groups/${gone}`, { jwt: s.adminJwt })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({})

    expectError(await s.call('GET', `/api/groups/${gone}`, { jwt: s.adminJwt }), 404)
    expect((await listGroups(s)).map((g) => g.GID)).toEqual([stays])
    const sg = await s.call('GET', `/api/users/${u.uid}/searchgroup`, { jwt: u.jwt })
    expect(sg.status).toBe(200)
    expect(sg.body).toBe(0)
    const me = await s.call('GET', '/api/info/whoami', { jwt: u.jwt })
    expect(me.body.Groups.map((g: { GID: number }) => g.GID)).toEqual([stays])
    expect(me.body.DefaultGID).toBeUndefined()
    expect((await s.call('GET', `/api/users/${u.uid}/group`, { jwt: u.jwt })).body.map((g: { GID: number }) => g.GID)).toEqual([stays])
    // deleting it again: 404
    expectError(await s.call('DELETE', `/api/groups/${gone}`, { jwt: s.adminJwt }), 404)
    // a new group of the same name starts empty
    const reborn = await s.createGroup('gone')
    expect((await s.call('GET', `/api/groups/${reborn}/members`, { jwt: s.adminJwt })).body).toEqual([])
  })

  test('non-admins get 403 (members too), unknown 404, bad id 400, and nothing changes', async () => {
    const s = await setup()
    const member = await s.createUser()
    const gid = await s.createGroup('solid', [member.uid])
    expectError(await s.call('DELETE', `/api/groups/${gid}`, { jwt: member.jwt }), 403)
    expectError(await s.call('DELETE', `/api/groups/${gid}`), 401)
    expectError(await s.call('DELETE', `/api/groups/${gid + 100}`, { jwt: s.adminJwt }), 404)
    expectError(await s.call('DELETE', '/api/groups/zero', { jwt: s.adminJwt }), 400)
    expect(await getGroup(s, gid)).toEqual({ GID: gid, Name: 'solid', Desc: 'solid group', Synced: false })
    const members = await s.call('GET', `/api/groups/${gid}/members`, { jwt: s.adminJwt })
    expect(members.body.map((u: { UID: number }) => u.UID)).toEqual([member.uid])
  })
})

describe('GET /api/groups/{gid}/members', () => {
  test('answers user records of the members to members and admins', async () => {
    const s = await setup()
    const a = await s.createUser({ Name: 'Ann', Email: 'ann@example.com' })
    const b = await s.createUser()
    const outsider = await s.createUser()
    const gid = await s.createGroup('crew', [a.uid, b.uid])
    const other = await s.createGroup('other', [a.uid])
    const empty = await s.createGroup('empty')
    for (const jwt of [a.jwt, s.adminJwt]) {
      const res = await s.call('GET', `/api/groups/${gid}/members`, { jwt })
      expect(res.status).toBe(200)
      expect(res.body.map((u: { UID: number }) => u.UID)).toEqual([a.uid, b.uid])
      const ann = res.body[0]
      expect(ann).toEqual({
        UID: a.uid,
        User: a.User,
        Name: 'Ann',
        Email: 'ann@example.com',
        Admin: false,
        Locked: false,
        TS: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d+Z$/),
        Synced: false,
        Groups: [
          { GID: gid, Name: 'crew', Desc: 'crew group', Synced: false },
          { GID: other, Name: 'other', Desc: 'other group', Synced: false },
        ],
      })
      expect(JSON.stringify(res.body)).not.toContain('pass')
    }
    expect((await s.call('GET', `/api/groups/${empty}/members`, { jwt: s.adminJwt })).body).toEqual([])
    expectError(await s.call('GET', `/api/groups/${gid}/members`, { jwt: outsider.jwt }), 403)
    expectError(await s.call('GET', `/api/groups/${gid + 100}/members`, { jwt: s.adminJwt }), 404)
    expectError(await s.call('GET', `/api/groups/${gid}/members`), 401)
  })

  test('follows membership changes', async () => {
    const s = await setup()
    const u = await s.createUser()
    const gid = await s.createGroup('moving')
    expect((await s.call('GET', `/api/groups/${gid}/members`, { jwt: s.adminJwt })).body).toEqual([])
    await addMember(s, u.uid, gid)
    expect((await s.call('GET', `/api/groups/${gid}/members`, { jwt: u.jwt })).body.map((x: { UID: number }) => x.UID)).toEqual([u.uid])
    expect((await s.call('DELETE', `/api/users/${u.uid}/group/${gid}`, { jwt: s.adminJwt })).status).toBe(200)
    expectError(await s.call('GET', `/api/groups/${gid}/members`, { jwt: u.jwt }), 403)
    expect((await s.call('GET', `/api/groups/${gid}/members`, { jwt: s.adminJwt })).body).toEqual([])
  })
})
