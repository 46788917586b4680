// The search library over HTTP (docs/api.md "Dashboards and the search library", "Conventions",
// "Sharing items with groups"). The route × caller matrix in test/security.test.ts covers anonymous callers and tokens
// on every route; this file covers the rules of the library API itself for owner, group member, stranger and admin,
// with and without the admin flag, GUID collisions, and Metadata kept byte for byte.
import { describe, expect, test } from 'bun:test'
import { type CallResult, type TestServer, expectError, itemWorld, refused, serverPerTest } from '../../test/helpers'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const setup = serverPerTest()
const world = async () => itemWorld(await setup())
const ALL_CAN = { Delete: true, Modify: true, Share: true }
const NO_CAN = { Delete: false, Modify: false, Share: false }
const WRITE_ACCESS = { Global: false, GIDs: [] }

type Entry = Record<string, any> & { ThingUUID: string; GUID: string }

/** POST /api/library with a JSON value or raw JSON text; expects success. */
async function create(s: TestServer, jwt: string, body: Record<string, unknown> | string = {}): Promise<Entry & { text: string }> {
  const res = await s.call('POST', '/api/library', typeof body === 'string' ? { jwt, body, headers: { 'content-type': 'application/json' } } : { jwt, json: body })
  expect({ status: res.status, text: res.text }).toMatchObject({ status: 200 })
  expect(res.headers.get('content-type')).toContain('application/json')
  return Object.assign(res.body as Entry, { text: res.text })
}

const get = (s: TestServer, jwt: string, id: string, q = '') => s.call('GET', `/api/library/${id}${q}`, { jwt })
const put = (s: TestServer, jwt: string, id: string, json: unknown, q = '') => s.call('PUT', `/api/library/${id}${q}`, { jwt, json })
const del = (s: TestServer, jwt: string, id: string, q = '') => s.call('DELETE', `/api/library/${id}${q}`, { jwt })
const names = (res: CallResult) => (res.body as { Name: string }[]).map((e) => e.Name).sort()

describe('POST /api/library', () => {
  test('answers the entry with ThingUUID and a generated GUID; empty GIDs, Labels and Metadata are omitted', async () => {
    const { s, owner } = await world()
    const now = s.clock.now()
    const e = await create(s, owner.jwt, { Name: 'errors', Description: 'all errors', Query: 'tag=syslog grep error' })
    expect(e.text).toBe(
      JSON.stringify({
        ThingUUID: e.ThingUUID, GUID: e.GUID, UID: owner.uid, Global: false, Name: 'errors', Description: 'all errors',
        Query: 'tag=syslog grep error', WriteAccess: WRITE_ACCESS, Can: ALL_CAN, Updated: new Date(now).toISOString(),
      }),
    )
    expect(e.ThingUUID).toMatch(UUID)
    expect(e.GUID).toMatch(UUID)
    expect(e.GUID).not.toBe(e.ThingUUID)
    // a POST answer equals a later GET of the same entry, by ThingUUID and by GUID
    expect((await get(s, owner.jwt, e.ThingUUID)).text).toBe(e.text)
    expect((await get(s, owner.jwt, e.GUID)).text).toBe(e.text)
  })

  test('GIDs, Labels and Metadata are answered when set; a given GUID is kept (lower case)', async () => {
    const { s, owner, gid, admin } = await world()
    const GUID = crypto.randomUUID()
    // a group that does not exist (yet) only by an admin (docs/api.md "Sharing items with groups")
    const e = await create(s, admin, { UID: owner.uid, GUID: GUID.toUpperCase(), GIDs: [4242, gid, gid], Labels: ['a'], Metadata: { k: 'v' }, Name: 'n', Query: 'q' })
    expect(e).toMatchObject({ GUID, GIDs: [gid, 4242], Labels: ['a'], Metadata: { k: 'v' } })
    expect(Object.keys(e).filter((k) => k !== 'text')).toEqual([
      'ThingUUID', 'GUID', 'UID', 'GIDs', 'Global', 'Name', 'Description', 'Query', 'Labels', 'Metadata', 'WriteAccess', 'Can', 'Updated',
    ])
    // nulls and zero values mean absent
    const z = await create(s, owner.jwt, { GUID: '00000000-0000-0000-0000-000000000000', UID: 0, GIDs: null, Labels: null, Metadata: null, Name: null })
    expect(z.GUID).toMatch(UUID)
    expect(z.GUID).not.toBe('00000000-0000-0000-0000-000000000000')
    expect(z).toMatchObject({ UID: owner.uid, Name: '', Query: '' })
    for (const k of ['GIDs', 'Labels', 'Metadata']) expect(k in z).toBe(false)
    // ThingUUID in the body is ignored
    const t = await create(s, owner.jwt, { ThingUUID: e.ThingUUID, Name: 'copy' })
    expect(t.ThingUUID).not.toBe(e.ThingUUID)
  })

  test('only admins set Global or another UID (an existing user)', async () => {
    const { s, owner, stranger, admin } = await world()
    await refused(s, 403, 'POST', '/api/library', { jwt: owner.jwt, json: { Name: 'g', Global: true } })
    await refused(s, 403, 'POST', '/api/library', { jwt: owner.jwt, json: { Name: 'u', UID: stranger.uid } })
    await refused(s, 400, 'POST', '/api/library', { jwt: admin, json: { Name: 'u', UID: 9999 } })
    const g = await create(s, admin, { Name: 'g', Global: true, UID: stranger.uid })
    expect(g).toMatchObject({ Global: true, UID: stranger.uid })
    expect((await get(s, owner.jwt, g.ThingUUID)).body.Global).toBe(true)
  })

  test('bad bodies: 400 and nothing stored', async () => {
    const { s, owner } = await world()
    const raw = (body: string) => ({ jwt: owner.jwt, body, headers: { 'content-type': 'application/json' } })
    await refused(s, 400, 'POST', '/api/library', raw('{"Name": "x", "Metadata": {bad}}'))
    await refused(s, 400, 'POST', '/api/library', raw('{"Name": "x", "Metadata": [1,]}'))
    await refused(s, 400, 'POST', '/api/library', raw('{"Name": "x", "Metadata": nul}'))
    await refused(s, 400, 'POST', '/api/library', { jwt: owner.jwt, json: { GUID: 'not-a-uuid' } })
    await refused(s, 400, 'POST', '/api/library', { jwt: owner.jwt, json: { GIDs: [0] } })
    await refused(s, 400, 'POST', '/api/library', { jwt: owner.jwt, json: { Labels: 'a' } })
    await refused(s, 400, 'POST', '/api/library', { jwt: owner.jwt, json: { Query: 5 } })
    await refused(s, 400, 'POST', '/api/library', raw('"just a string"'))
  })
})

describe('Metadata is any JSON, stored and answered as sent', () => {
  test('objects, arrays, numbers and strings, with large integers, key order and white space', async () => {
    const { s, owner } = await world()
    for (const meta of ['{ "z": 1,\n "a": 12345678901234567890123 }', '[1, "two", {"3": [4]}]', '1.000', '"text with } and ]"', '{}', 'false']) {
      const e = await create(s, owner.jwt, `{"Name": "m", "Metadata": ${meta}, "Query": "q"}`)
      expect(e.text).toContain(`"Metadata":${meta},"WriteAccess"`)
      expect((await get(s, owner.jwt, e.ThingUUID)).text).toBe(e.text)
      expect((await s.call('GET', '/api/library', { jwt: owner.jwt })).text).toContain(`"Metadata":${meta},`)
    }
  })

  test('PUT replaces it verbatim, keeps it when absent, and null removes it', async () => {
    const { s, owner } = await world()
    const e = await create(s, owner.jwt, '{"Name": "m", "Metadata": {"b": 2, "a": 1}}')
    const kept = await put(s, owner.jwt, e.ThingUUID, { Name: 'renamed' })
    expect(kept.text).toContain('"Metadata":{"b": 2, "a": 1},')
    const next = '[ 98765432109876543210 ]'
    const res = await s.call('PUT', `/api/library/${e.ThingUUID}`, { jwt: owner.jwt, body: `{"Metadata": ${next}}`, headers: { 'content-type': 'application/json' } })
    expect(res.text).toContain(`"Metadata":${next},`)
    const cleared = await put(s, owner.jwt, e.ThingUUID, { Metadata: null })
    expect('Metadata' in cleared.body).toBe(false)
    await refused(s, 400, 'PUT', `/api/library/${e.ThingUUID}`, { jwt: owner.jwt, body: '{"Metadata": {"a": }', headers: { 'content-type': 'application/json' } })
  })
})

describe('who lists, reads, changes and deletes', () => {
  async function items() {
    const w = await world()
    const own = await create(w.s, w.owner.jwt, { Name: 'own', Query: 'q1' })
    const shared = await create(w.s, w.owner.jwt, { Name: 'shared', Query: 'q2', GIDs: [w.gid] })
    const global = await create(w.s, w.admin, { Name: 'global', Query: 'q3', Global: true })
    const membersOwn = await create(w.s, w.member.jwt, { Name: 'members-own', Query: 'q4' })
    return { ...w, own, shared, global, membersOwn }
  }

  test("GET /api/library: the caller's own only; every entry with ?admin=true by an admin; the flag from others is ignored", async () => {
    const w = await items()
    const list = (jwt: string, q = '') => w.s.call('GET', `/api/library${q}`, { jwt })
    expect(names(await list(w.owner.jwt))).toEqual(['own', 'shared'])
    expect(names(await list(w.member.jwt))).toEqual(['members-own'])
    expect((await list(w.stranger.jwt)).body).toEqual([])
    expect((await list(w.stranger.jwt, '?admin=true')).body).toEqual([])
    expect(names(await list(w.owner.jwt, '?admin=true'))).toEqual(['own', 'shared'])
    expect(names(await list(w.admin))).toEqual(['global'])
    const all = await list(w.admin, '?admin=true')
    expect(names(all)).toEqual(['global', 'members-own', 'own', 'shared'])
    for (const e of all.body) expect(e.Can).toEqual(ALL_CAN)
    expect((await list(w.owner.jwt)).body.map((e: Entry) => e.Can)).toEqual([ALL_CAN, ALL_CAN])
  })

  test('GET one: owner, group members, everyone for global, admins with the flag; 403 without access, 404 when missing', async () => {
    const w = await items()
    expect((await get(w.s, w.owner.jwt, w.own.ThingUUID)).body.Can).toEqual(ALL_CAN)
    const asMember = await get(w.s, w.member.jwt, w.shared.ThingUUID)
    expect(asMember.body).toMatchObject({ Name: 'shared', Can: NO_CAN })
    expect((await get(w.s, w.stranger.jwt, w.global.GUID)).body).toMatchObject({ Name: 'global', Can: NO_CAN })
    expectError(await get(w.s, w.member.jwt, w.own.ThingUUID), 403)
    expectError(await get(w.s, w.stranger.jwt, w.shared.GUID), 403)
    expectError(await get(w.s, w.stranger.jwt, w.own.GUID, '?admin=true'), 403)
    // an admin without the flag is a normal user; with it, reaches every entry
    expectError(await get(w.s, w.admin, w.own.ThingUUID), 403)
    expect((await get(w.s, w.admin, w.own.ThingUUID, '?admin=true')).body).toMatchObject({ Name: 'own', Can: ALL_CAN })
    expect((await get(w.s, w.admin, w.own.GUID, '?admin=true')).body.Name).toBe('own')
    expectError(await get(w.s, w.admin, crypto.randomUUID(), '?admin=true'), 404)
    expectError(await get(w.s, w.owner.jwt, crypto.randomUUID()), 404)
    for (const bad of ['nope', '12345', `${w.own.ThingUUID}0`]) expectError(await get(w.s, w.owner.jwt, bad), 400)
  })

  test('PUT: the owner (or an admin with the flag) changes the complete entry; others get 403 and nothing changes', async () => {
    const w = await items()
    const before = (await get(w.s, w.owner.jwt, w.shared.ThingUUID)).body
    w.s.clock.advance(60_000)
    const changed = { ...before, Name: 'renamed', Description: 'd', Query: 'tag=new', Labels: ['l'], GIDs: [], Metadata: { x: 1 } }
    const res = await put(w.s, w.owner.jwt, w.shared.GUID, changed)
    expect(res.status).toBe(200)
    const expected: Record<string, unknown> = { ...changed, Updated: new Date(w.s.clock.now()).toISOString() }
    delete expected.GIDs
    expect(res.body).toEqual(expected)
    expect((await get(w.s, w.owner.jwt, w.shared.ThingUUID)).text).toBe(res.text)
    const refusals: [jwt: string, id: string, query: string][] = [
      [w.member.jwt, w.own.ThingUUID, ''],
      [w.stranger.jwt, w.global.ThingUUID, ''],
      [w.stranger.jwt, w.own.ThingUUID, '?admin=true'],
      [w.admin, w.own.ThingUUID, ''],
    ]
    for (const [jwt, id, q] of refusals) {
      await refused(w.s, 403, 'PUT', `/api/library/${id}${q}`, { jwt, json: { Name: 'taken' } })
    }
    // a group member reads but does not change
    const sharedAgain = await create(w.s, w.owner.jwt, { Name: 'team', GIDs: [w.gid] })
    await refused(w.s, 403, 'PUT', `/api/library/${sharedAgain.ThingUUID}`, { jwt: w.member.jwt, json: { Name: 'taken' } })
    expect((await put(w.s, w.admin, w.own.ThingUUID, { Name: 'by admin' }, '?admin=true')).body).toMatchObject({ Name: 'by admin', UID: w.owner.uid })
    await refused(w.s, 404, 'PUT', `/api/library/${crypto.randomUUID()}`, { jwt: w.owner.jwt, json: { Name: 'x' } })
  })

  test('PUT keeps ThingUUID and GUID; UID changes only by an admin with the flag; only admins set Global', async () => {
    const w = await items()
    const before = (await get(w.s, w.owner.jwt, w.own.ThingUUID)).body
    const res = await put(w.s, w.owner.jwt, w.own.ThingUUID, { ...before, ThingUUID: crypto.randomUUID(), GUID: crypto.randomUUID(), UID: w.stranger.uid, Name: 'n2' })
    expect(res.body).toEqual({ ...before, Name: 'n2', Updated: res.body.Updated })
    await refused(w.s, 403, 'PUT', `/api/library/${w.own.ThingUUID}`, { jwt: w.owner.jwt, json: { Global: true } })
    expect((await put(w.s, w.owner.jwt, w.own.ThingUUID, { Global: false })).status).toBe(200)
    await refused(w.s, 400, 'PUT', `/api/library/${w.own.ThingUUID}?admin=true`, { jwt: w.admin, json: { UID: 9999 } })
    const moved = await put(w.s, w.admin, w.own.ThingUUID, { UID: w.stranger.uid, Global: true }, '?admin=true')
    expect(moved.body).toMatchObject({ UID: w.stranger.uid, Global: true })
    expect(names(await w.s.call('GET', '/api/library', { jwt: w.stranger.jwt }))).toEqual(['n2'])
    // the admin's own entries change without the flag, Global included
    expect((await put(w.s, w.admin, w.global.ThingUUID, { Global: false })).body.Global).toBe(false)
  })

  test('DELETE: owner only, or admin with the flag (rules 2 and 4); 403 otherwise and nothing removed', async () => {
    const w = await items()
    await refused(w.s, 403, 'DELETE', `/api/library/${w.shared.ThingUUID}`, { jwt: w.member.jwt })
    await refused(w.s, 403, 'DELETE', `/api/library/${w.shared.ThingUUID}?admin=true`, { jwt: w.member.jwt })
    await refused(w.s, 403, 'DELETE', `/api/library/${w.global.GUID}`, { jwt: w.stranger.jwt })
    await refused(w.s, 403, 'DELETE', `/api/library/${w.own.ThingUUID}`, { jwt: w.admin })
    await refused(w.s, 404, 'DELETE', `/api/library/${crypto.randomUUID()}?admin=true`, { jwt: w.admin })
    await refused(w.s, 400, 'DELETE', '/api/library/nope', { jwt: w.owner.jwt })
    // the owner deletes (the flag from a non-admin is ignored, not refused)
    const ok = await del(w.s, w.owner.jwt, w.shared.GUID, '?admin=true')
    expect({ status: ok.status, body: ok.body }).toEqual({ status: 200, body: {} })
    expectError(await get(w.s, w.owner.jwt, w.shared.ThingUUID), 404)
    expect((await del(w.s, w.admin, w.membersOwn.ThingUUID, '?admin=true')).status).toBe(200)
    expect(names(await w.s.call('GET', '/api/library', { jwt: w.member.jwt }))).toEqual([])
  })

  test("an admin's token acts as a normal user, also with the flag", async () => {
    const w = await items()
    const tok = await w.s.call('POST', '/api/tokens', { jwt: w.admin, json: { name: 't', capabilities: ['LibraryRead', 'LibraryWrite'] } })
    const headers = { 'Service-Token': tok.body.token as string }
    expect(names(await w.s.call('GET', '/api/library?admin=true', { headers }))).toEqual(['global'])
    expectError(await w.s.call('GET', `/api/library/${w.own.ThingUUID}?admin=true`, { headers }), 403)
    await refused(w.s, 403, 'DELETE', `/api/library/${w.own.ThingUUID}?admin=true`, { headers })
  })
})

describe('several entries with one GUID', () => {
  test("paths resolve to the caller's own, else group-shared, else global; admin deletions by ThingUUID", async () => {
    const { s, owner, member, stranger, admin, gid } = await world()
    const GUID = crypto.randomUUID()
    const global = await create(s, admin, { GUID, Global: true, Name: 'global' })
    const shared = await create(s, owner.jwt, { GUID, GIDs: [gid], Name: 'shared' })
    const membersOwn = await create(s, member.jwt, { GUID, Name: 'members-own' })
    const hidden = await create(s, (await s.createUser()).jwt, { GUID, Name: 'hidden' })
    expect((await get(s, member.jwt, GUID)).body.ThingUUID).toBe(membersOwn.ThingUUID)
    expect((await get(s, owner.jwt, GUID)).body.ThingUUID).toBe(shared.ThingUUID)
    expect((await get(s, stranger.jwt, GUID)).body.ThingUUID).toBe(global.ThingUUID)
    // a ThingUUID names exactly one entry, reached or not
    expectError(await get(s, stranger.jwt, hidden.ThingUUID), 403)
    expect((await put(s, owner.jwt, GUID, { Description: 'changed' })).body.ThingUUID).toBe(shared.ThingUUID)
    expect((await del(s, member.jwt, GUID)).status).toBe(200)
    expect((await get(s, member.jwt, GUID)).body.ThingUUID).toBe(shared.ThingUUID)
    await refused(s, 403, 'DELETE', `/api/library/${GUID}`, { jwt: member.jwt })
    // the admin deletes one exact entry by its ThingUUID; the others with that GUID stay
    expect((await del(s, admin, hidden.ThingUUID, '?admin=true')).status).toBe(200)
    const left = (await s.call('GET', '/api/library?admin=true', { jwt: admin })).body.map((e: Entry) => e.ThingUUID).sort()
    expect(left).toEqual([global.ThingUUID, shared.ThingUUID].sort())
  })
})

describe('sharing lists and groups', () => {
  test('a deleted group leaves every sharing list, and its members lose access', async () => {
    const { s, owner, member, admin, gid } = await world()
    const other = await s.createGroup('other', [member.uid])
    const e = await create(s, admin, { UID: owner.uid, Name: 'x', GIDs: [gid, other, 4242] })
    expect((await get(s, member.jwt, e.ThingUUID)).status).toBe(200)
    expect((await s.call('DELETE', `/api/groups/${gid}`, { jwt: admin })).status).toBe(200)
    expect((await get(s, owner.jwt, e.ThingUUID)).body.GIDs).toEqual([other, 4242])
    await s.store.groups.delete(other)
    expect((await get(s, owner.jwt, e.ThingUUID)).body.GIDs).toEqual([4242])
    expectError(await get(s, member.jwt, e.ThingUUID), 403)
  })

  test('routes also answer with a trailing slash', async () => {
    const { s, owner } = await world()
    const e = await create(s, owner.jwt, { Name: 't' })
    expect((await s.call('GET', '/api/library/', { jwt: owner.jwt })).body).toHaveLength(1)
    expect((await s.call('GET', `/api/library/${e.GUID}/`, { jwt: owner.jwt })).body.Name).toBe('t')
    expect((await s.call('DELETE', `/api/library/${e.GUID}/`, { jwt: owner.jwt })).status).toBe(200)
  })
})
