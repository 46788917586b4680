// Dashboards over HTTP (docs/api.md "Dashboards and the search library", "Conventions", "Sharing items with groups").
// The route × caller matrix in test/security.test.ts covers anonymous callers and tokens on every route; this file
// covers the rules of the dashboard API itself: create rules 1-5, the update rule, who reads, changes and deletes, GUID
// resolution, the per-user and per-group listings, and Data kept byte for byte.
import { describe, expect, test } from 'bun:test'
import { type CallResult, type TestServer, expectError, itemWorld, refused, serverPerTest, storeSnapshot } from '../../test/helpers'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const KEYS = ['Created', 'Data', 'Description', 'GIDs', 'GUID', 'Global', 'ID', 'Labels', 'Name', 'Synced', 'UID', 'Updated'].sort()
const setup = serverPerTest()
const world = async () => itemWorld(await setup())

/** POST /api/dashboards with a JSON value or raw JSON text; expects success and answers the new ID. */
async function create(s: TestServer, jwt: string, body: Record<string, unknown> | string = {}): Promise<number> {
  const res = await s.call('POST', '/api/dashboards', typeof body === 'string' ? { jwt, body, headers: { 'content-type': 'application/json' } } : { jwt, json: body })
  expect({ status: res.status, text: res.text }).toMatchObject({ status: 200 })
  expect(res.headers.get('content-type')).toContain('application/json')
  expect(res.text).toMatch(/^\d+$/)
  return res.body as number
}

const get = (s: TestServer, jwt: string, id: number | string) => s.call('GET', `/api/dashboards/${id}`, { jwt })
const put = (s: TestServer, jwt: string, id: number | string, json: unknown) => s.call('PUT', `/api/dashboards/${id}`, { jwt, json })
const names = (res: CallResult) => (res.body as { Name: string }[]).map((d) => d.Name).sort()

async function fetched(s: TestServer, jwt: string, id: number | string) {
  const res = await get(s, jwt, id)
  expect({ status: res.status, text: res.text }).toMatchObject({ status: 200 })
  return res.body as Record<string, any>
}

describe('POST /api/dashboards', () => {
  test('answers a new numeric ID; the dashboard has every field, owned by the caller, not shared', async () => {
    const { s, owner } = await world()
    const now = s.clock.now()
    const id = await create(s, owner.jwt, { Name: 'ops', Description: 'operations', Labels: ['a', 'b'], Data: { tiles: [] } })
    expect(Number.isSafeInteger(id) && id > 0).toBe(true)
    const d = await fetched(s, owner.jwt, id)
    expect(Object.keys(d).sort()).toEqual(KEYS)
    expect(d).toEqual({
      ID: id, GUID: d.GUID, Name: 'ops', Description: 'operations', UID: owner.uid, GIDs: [], Global: false,
      Created: new Date(now).toISOString(), Updated: new Date(now).toISOString(), Labels: ['a', 'b'], Data: { tiles: [] }, Synced: false,
    })
    expect(d.GUID).toMatch(UUID)
    // a second one gets another ID and GUID
    const other = await create(s, owner.jwt, {})
    expect(other).not.toBe(id)
    expect((await fetched(s, owner.jwt, other)).GUID).not.toBe(d.GUID)
  })

  test('rule 5: Data may be left blank (absent, null or "": an empty object); strings are never null', async () => {
    const { s, owner } = await world()
    for (const body of [{}, { Data: '' }, { Data: null, Name: null, Description: null, Labels: null, GIDs: null, Global: null, UID: null, GUID: null }]) {
      const d = await fetched(s, owner.jwt, await create(s, owner.jwt, body))
      expect(d).toMatchObject({ Data: {}, Name: '', Description: '', Labels: [], GIDs: [], Global: false, UID: owner.uid })
    }
  })

  test('rule 1: UID omitted or 0 is the caller; only admins set another (an existing user)', async () => {
    const { s, owner, stranger, admin } = await world()
    expect((await fetched(s, owner.jwt, await create(s, owner.jwt, { UID: 0 }))).UID).toBe(owner.uid)
    expect((await fetched(s, owner.jwt, await create(s, owner.jwt, { UID: owner.uid }))).UID).toBe(owner.uid)
    await refused(s, 403, 'POST', '/api/dashboards', { jwt: owner.jwt, json: { UID: stranger.uid } })
    await refused(s, 403, 'POST', '/api/dashboards', { jwt: owner.jwt, json: { UID: 1 } })
    const id = await create(s, admin, { UID: stranger.uid, Name: 'given' })
    expect((await fetched(s, stranger.jwt, id)).UID).toBe(stranger.uid)
    await refused(s, 400, 'POST', '/api/dashboards', { jwt: admin, json: { UID: 9999 } })
  })

  test('rule 2: empty or null GIDs means not shared; a list is kept sorted, each GID once (also unknown groups)', async () => {
    const { s, owner, member, gid, admin } = await world()
    for (const GIDs of [[], null]) {
      const id = await create(s, owner.jwt, { GIDs })
      expect((await fetched(s, owner.jwt, id)).GIDs).toEqual([])
      expectError(await get(s, member.jwt, id), 404)
    }
    // a group that does not exist (yet) only by an admin (docs/api.md "Sharing items with groups")
    const id = await create(s, admin, { UID: owner.uid, GIDs: [4242, gid, gid] })
    expect((await fetched(s, member.jwt, id)).GIDs).toEqual([gid, 4242])
    for (const GIDs of [[0], [-1], ['x'], 5]) await refused(s, 400, 'POST', '/api/dashboards', { jwt: owner.jwt, json: { GIDs } })
  })

  test('rule 3: only admins set Global', async () => {
    const { s, owner, stranger, admin } = await world()
    await refused(s, 403, 'POST', '/api/dashboards', { jwt: owner.jwt, json: { Global: true } })
    expect((await fetched(s, owner.jwt, await create(s, owner.jwt, { Global: false }))).Global).toBe(false)
    const id = await create(s, admin, { Global: true, Name: 'everyone' })
    expect((await fetched(s, stranger.jwt, id)).Global).toBe(true)
  })

  test('rule 4: a GUID that is a valid UUID is kept (lower case); otherwise one is generated', async () => {
    const { s, owner } = await world()
    const guid = crypto.randomUUID()
    expect((await fetched(s, owner.jwt, await create(s, owner.jwt, { GUID: guid.toUpperCase() }))).GUID).toBe(guid)
    for (const GUID of ['not-a-uuid', '', '00000000-0000-0000-0000-000000000000', `${guid}0`]) {
      const got = (await fetched(s, owner.jwt, await create(s, owner.jwt, { GUID }))).GUID
      expect(got).toMatch(UUID)
      expect(got).not.toBe(guid)
      expect(got).not.toBe('00000000-0000-0000-0000-000000000000')
    }
    // the same GUID may be used again (kits): each dashboard still has its own ID
    const a = await create(s, owner.jwt, { GUID: guid, Name: 'again' })
    const mine = (await s.call('GET', '/api/dashboards', { jwt: owner.jwt })).body.filter((d: { GUID: string }) => d.GUID === guid)
    expect(mine).toHaveLength(2)
    expect(new Set(mine.map((d: { ID: number }) => d.ID)).size).toBe(2)
    expect((await fetched(s, owner.jwt, a)).GUID).toBe(guid)
  })

  test('ID, Created, Updated and Synced in the body are ignored', async () => {
    const { s, owner } = await world()
    const id = await create(s, owner.jwt, { ID: 5, Created: '2001-01-01T00:00:00Z', Updated: '2001-01-01T00:00:00Z', Synced: true })
    expect(id).not.toBe(5)
    const d = await fetched(s, owner.jwt, id)
    expect(d.Created).toBe(new Date(s.clock.now()).toISOString())
    expect(d.Synced).toBe(false)
  })

  test('bad bodies: 400 and nothing stored', async () => {
    const { s, owner } = await world()
    const raw = (body: string) => ({ jwt: owner.jwt, body, headers: { 'content-type': 'application/json' } })
    await refused(s, 400, 'POST', '/api/dashboards', raw('{"Name": "x", "Data": {bad}}'))
    await refused(s, 400, 'POST', '/api/dashboards', raw('{"Name": "x", "Data": {"a": 1,}}'))
    await refused(s, 400, 'POST', '/api/dashboards', raw('{"Name": "x", "Data": {"a": 1}'))
    for (const Data of [[1, 2], 'a string', 42, true, '{"looks": "like json"}'])
      await refused(s, 400, 'POST', '/api/dashboards', { jwt: owner.jwt, json: { Name: 'x', Data } })
    await refused(s, 400, 'POST', '/api/dashboards', { jwt: owner.jwt, json: { Name: 'x'.repeat(257) } })
    await refused(s, 400, 'POST', '/api/dashboards', { jwt: owner.jwt, json: { Labels: [1] } })
    await refused(s, 400, 'POST', '/api/dashboards', { jwt: owner.jwt, json: { Global: 'yes' } })
    await refused(s, 400, 'POST', '/api/dashboards', raw('[]'))
  })
})

describe('Data is stored and answered byte for byte', () => {
  // Large integers, key order, white space, escapes, and strings that hold JSON punctuation.
  const DATA = '{ "zeta": 12345678901234567890123,\n\t"alpha" : [1.50, -0e0, 1E+2, {"deep": {"b": null, "a": false}}],\r\n "s": "q\\"uo}te]{\\\\ \\u00e9 é \u2028",   "": {} }'

  test('in the answers of GET by ID and GUID, the listings and PUT', async () => {
    const { s, owner, gid } = await world()
    const id = await create(s, owner.jwt, `{"Name": "raw", "GIDs": [${gid}], "Data": ${DATA}}`)
    const expectRaw = (res: CallResult) => {
      expect(res.status).toBe(200)
      expect(res.text).toContain(`"Data":${DATA},"Synced":false}`)
    }
    expectRaw(await get(s, owner.jwt, id))
    const guid = (await fetched(s, owner.jwt, id)).GUID
    expectRaw(await get(s, owner.jwt, guid))
    for (const path of ['/api/dashboards', '/api/dashboards/all', `/api/users/${owner.uid}/dashboards`, `/api/groups/${gid}/dashboards`])
      expectRaw(await s.call('GET', path, { jwt: owner.jwt }))
    // an update that sends other fields only keeps Data as it was
    expectRaw(await put(s, owner.jwt, id, { Name: 'renamed' }))
    // and a new Data replaces it, again verbatim
    const next = '{"b":1,"a":99999999999999999999}'
    const res = await s.call('PUT', `/api/dashboards/${id}`, { jwt: owner.jwt, body: `{"Name":"x","Data":${next}}`, headers: { 'content-type': 'application/json' } })
    expect(res.text).toContain(`"Data":${next},`)
    expect((await get(s, owner.jwt, id)).text).toContain(`"Data":${next},`)
  })

  test('a key written with escapes is the same key, and a repeated key counts once, the last one (as JSON.parse)', async () => {
    const { s, owner } = await world()
    const a = await create(s, owner.jwt, '{"D\\u0061ta": {"x": 1}}')
    expect((await get(s, owner.jwt, a)).text).toContain('"Data":{"x": 1},')
    const b = await create(s, owner.jwt, '{"Data": {"first": 1}, "Name": "{\\"Data\\": 5}", "Data": {"last": 2}}')
    const got = await get(s, owner.jwt, b)
    expect(got.text).toContain('"Data":{"last": 2},')
    expect(got.body.Name).toBe('{"Data": 5}')
    // a nested Data is not the member
    const c = await create(s, owner.jwt, '{"Name": "n", "Labels": [], "X": {"Data": [1]}, "Data": {"y": "z"}}')
    expect((await get(s, owner.jwt, c)).text).toContain('"Data":{"y": "z"},')
  })
})

describe('who reads, changes and deletes', () => {
  async function items() {
    const w = await world()
    const own = await create(w.s, w.owner.jwt, { Name: 'own' })
    const shared = await create(w.s, w.owner.jwt, { Name: 'shared', GIDs: [w.gid] })
    const global = await create(w.s, w.admin, { Name: 'global', Global: true })
    const adminsOwn = await create(w.s, w.admin, { Name: 'admin-only' })
    return { ...w, own, shared, global, adminsOwn }
  }

  test('GET /api/dashboards: owned, group-shared and global; /all: every dashboard for admins only', async () => {
    const w = await items()
    const list = (jwt: string, path = '/api/dashboards') => w.s.call('GET', path, { jwt })
    expect(names(await list(w.owner.jwt))).toEqual(['global', 'own', 'shared'])
    expect(names(await list(w.member.jwt))).toEqual(['global', 'shared'])
    expect(names(await list(w.stranger.jwt))).toEqual(['global'])
    expect(names(await list(w.admin))).toEqual(['admin-only', 'global'])
    expect(names(await list(w.admin, '/api/dashboards/all'))).toEqual(['admin-only', 'global', 'own', 'shared'])
    for (const u of [w.owner, w.member, w.stranger]) expect((await list(u.jwt, '/api/dashboards/all')).body).toEqual((await list(u.jwt)).body)
    const fresh = await w.s.createUser()
    expect((await list(fresh.jwt)).body).toHaveLength(1)
  })

  test('GET one: readers 200; callers who may not see it 404 like a missing one', async () => {
    const w = await items()
    expect((await get(w.s, w.owner.jwt, w.own)).status).toBe(200)
    expectError(await get(w.s, w.member.jwt, w.own), 404)
    expectError(await get(w.s, w.stranger.jwt, w.own), 404)
    expect((await get(w.s, w.member.jwt, w.shared)).status).toBe(200)
    expectError(await get(w.s, w.stranger.jwt, w.shared), 404)
    expect((await get(w.s, w.stranger.jwt, w.global)).status).toBe(200)
    expect((await get(w.s, w.admin, w.own)).status).toBe(200)
    expectError(await get(w.s, w.owner.jwt, w.adminsOwn), 404)
  })

  test('owner and admin change and delete; readers get 403, others 404; nothing changes on refusal', async () => {
    const w = await items()
    await refused(w.s, 403, 'PUT', `/api/dashboards/${w.shared}`, { jwt: w.member.jwt, json: { Name: 'taken' } })
    await refused(w.s, 403, 'DELETE', `/api/dashboards/${w.shared}`, { jwt: w.member.jwt })
    await refused(w.s, 403, 'PUT', `/api/dashboards/${w.global}`, { jwt: w.owner.jwt, json: { Name: 'taken' } })
    await refused(w.s, 403, 'DELETE', `/api/dashboards/${w.global}`, { jwt: w.stranger.jwt })
    await refused(w.s, 404, 'PUT', `/api/dashboards/${w.own}`, { jwt: w.stranger.jwt, json: { Name: 'taken' } })
    await refused(w.s, 404, 'DELETE', `/api/dashboards/${w.shared}`, { jwt: w.stranger.jwt })
    expect((await put(w.s, w.owner.jwt, w.shared, { Name: 'mine' })).body.Name).toBe('mine')
    expect((await put(w.s, w.admin, w.own, { Name: 'admins' })).body.Name).toBe('admins')
    expect((await w.s.call('DELETE', `/api/dashboards/${w.own}`, { jwt: w.admin })).body).toEqual({})
    expectError(await get(w.s, w.owner.jwt, w.own), 404)
    const del = await w.s.call('DELETE', `/api/dashboards/${w.shared}`, { jwt: w.owner.jwt })
    expect({ status: del.status, body: del.body }).toEqual({ status: 200, body: {} })
    expectError(await get(w.s, w.member.jwt, w.shared), 404)
  })

  test("an admin's token acts as a normal user", async () => {
    const w = await items()
    const tok = await w.s.call('POST', '/api/tokens', { jwt: w.admin, json: { name: 't', capabilities: ['DashboardRead', 'DashboardWrite'] } })
    const headers = { 'Service-Token': tok.body.token as string }
    expect(names(await w.s.call('GET', '/api/dashboards/all', { headers }))).toEqual(['admin-only', 'global'])
    expectError(await w.s.call('GET', `/api/dashboards/${w.own}`, { headers }), 404)
    await refused(w.s, 403, 'POST', '/api/dashboards', { headers, json: { UID: w.owner.uid } })
  })

  test('unknown and malformed ids', async () => {
    const w = await items()
    for (const id of ['1', '9007199254740991', '9007199254740993', '99999999999999999999999', crypto.randomUUID()]) {
      expectError(await get(w.s, w.admin, id), 404)
      await refused(w.s, 404, 'PUT', `/api/dashboards/${id}`, { jwt: w.admin, json: { Name: 'x' } })
      await refused(w.s, 404, 'DELETE', `/api/dashboards/${id}`, { jwt: w.admin })
    }
    for (const id of ['abc', '-5', '1.5', '0x10', 'not-a-uuid-at-all']) {
      expectError(await get(w.s, w.admin, id), 400)
      await refused(w.s, 400, 'DELETE', `/api/dashboards/${id}`, { jwt: w.admin })
    }
  })
})

describe('several dashboards with one GUID', () => {
  test('GET, PUT and DELETE by GUID use the caller\'s own, else one shared with a group, else a global one', async () => {
    const { s, owner, member, stranger, admin, gid } = await world()
    const GUID = crypto.randomUUID()
    const global = await create(s, admin, { GUID, Global: true, Name: 'global' })
    const shared = await create(s, owner.jwt, { GUID, GIDs: [gid], Name: 'shared' })
    const membersOwn = await create(s, member.jwt, { GUID, Name: 'members-own' })
    const strangersOther = await create(s, await s.createUser().then((u) => u.jwt), { GUID, Name: 'invisible' })
    expect((await fetched(s, member.jwt, GUID)).ID).toBe(membersOwn)
    expect((await fetched(s, owner.jwt, GUID)).ID).toBe(shared)
    expect((await fetched(s, stranger.jwt, GUID)).ID).toBe(global)
    expect((await fetched(s, admin, GUID)).ID).toBe(global) // the admin's own
    // a change by GUID goes to the one resolved
    expect((await put(s, owner.jwt, GUID, { Description: 'changed' })).body.ID).toBe(shared)
    // a reader who resolves to one it may not change gets 403
    await refused(s, 403, 'DELETE', `/api/dashboards/${GUID}`, { jwt: stranger.jwt })
    expect((await s.call('DELETE', `/api/dashboards/${GUID}`, { jwt: member.jwt })).status).toBe(200)
    // the member's own is gone: now the group-shared one
    expect((await fetched(s, member.jwt, GUID)).ID).toBe(shared)
    await refused(s, 403, 'PUT', `/api/dashboards/${GUID}`, { jwt: member.jwt, json: { Name: 'x' } })
    expect((await fetched(s, admin, strangersOther)).Name).toBe('invisible')
    // GUIDs in any case
    expect((await fetched(s, owner.jwt, GUID.toUpperCase())).ID).toBe(shared)
  })
})

describe('PUT /api/dashboards/{id}: the update rule', () => {
  test('the structure as fetched comes back with changes; Updated moves, Created stays', async () => {
    const { s, owner, gid } = await world()
    const id = await create(s, owner.jwt, { Name: 'v1', Data: { version: 1 } })
    const before = await fetched(s, owner.jwt, id)
    s.clock.advance(60_000)
    const changed = { ...before, Name: 'v2', Description: 'd', Labels: ['x'], GIDs: [gid], Data: { version: 2, tiles: [] } }
    const res = await put(s, owner.jwt, id, changed)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ ...changed, Updated: new Date(s.clock.now()).toISOString() })
    expect(res.body.Created).toBe(before.Created)
    expect(await fetched(s, owner.jwt, id)).toEqual(res.body)
  })

  test('what the caller may not change is kept: ID, GUID, Created, and for non-admins UID and Global', async () => {
    const { s, owner, stranger } = await world()
    const id = await create(s, owner.jwt, { Name: 'mine' })
    const before = await fetched(s, owner.jwt, id)
    const res = await put(s, owner.jwt, id, {
      ...before, ID: 77, GUID: crypto.randomUUID(), Created: '2001-01-01T00:00:00Z', UID: stranger.uid, Global: true, Name: 'renamed',
    })
    expect(res.body).toEqual({ ...before, Name: 'renamed', Updated: res.body.Updated })
  })

  test('absent fields keep their value; null empties them (Data null: an empty object)', async () => {
    const { s, owner, gid } = await world()
    const id = await create(s, owner.jwt, { Name: 'n', Description: 'd', Labels: ['l'], GIDs: [gid], Data: { a: 1 } })
    expect((await put(s, owner.jwt, id, {})).body).toMatchObject({ Name: 'n', Description: 'd', Labels: ['l'], GIDs: [gid], Data: { a: 1 } })
    expect((await put(s, owner.jwt, id, { Name: null, Description: null, Labels: null, GIDs: null, Data: null })).body).toMatchObject({
      Name: '', Description: '', Labels: [], GIDs: [], Data: {},
    })
  })

  test('admins also change UID (to an existing user) and Global', async () => {
    const { s, owner, stranger, admin } = await world()
    const id = await create(s, owner.jwt, { Name: 'given away' })
    const res = await put(s, admin, id, { ...(await fetched(s, owner.jwt, id)), UID: stranger.uid, Global: true })
    expect(res.body).toMatchObject({ UID: stranger.uid, Global: true })
    await refused(s, 400, 'PUT', `/api/dashboards/${id}`, { jwt: admin, json: { UID: 9999 } })
    expect((await put(s, admin, id, { Global: false })).body.Global).toBe(false)
    expectError(await get(s, owner.jwt, id), 404)
  })

  test('bad bodies: 400 and nothing changed', async () => {
    const { s, owner } = await world()
    const id = await create(s, owner.jwt, { Name: 'n', Data: { a: 1 } })
    const raw = (body: string) => ({ jwt: owner.jwt, body, headers: { 'content-type': 'application/json' } })
    await refused(s, 400, 'PUT', `/api/dashboards/${id}`, raw('{"Data": {"a": }}'))
    await refused(s, 400, 'PUT', `/api/dashboards/${id}`, raw('{"Data": [1]}'))
    await refused(s, 400, 'PUT', `/api/dashboards/${id}`, raw('{"Data": "{}"}'))
    await refused(s, 400, 'PUT', `/api/dashboards/${id}`, raw('{"GIDs": [0]}'))
  })
})

describe('per-user and per-group listings', () => {
  test('GET /api/users/{uid}/dashboards: owned by that UID only; the user or an admin', async () => {
    const { s, owner, member, stranger, admin, gid } = await world()
    await create(s, owner.jwt, { Name: 'o1' })
    await create(s, owner.jwt, { Name: 'o2', GIDs: [gid] })
    await create(s, member.jwt, { Name: 'm1', GIDs: [gid] })
    await create(s, admin, { Name: 'g', Global: true })
    expect(names(await s.call('GET', `/api/users/${owner.uid}/dashboards`, { jwt: owner.jwt }))).toEqual(['o1', 'o2'])
    expect(names(await s.call('GET', `/api/users/${member.uid}/dashboards`, { jwt: member.jwt }))).toEqual(['m1'])
    expect(names(await s.call('GET', `/api/users/${owner.uid}/dashboards`, { jwt: admin }))).toEqual(['o1', 'o2'])
    expect((await s.call('GET', `/api/users/${stranger.uid}/dashboards`, { jwt: stranger.jwt })).body).toEqual([])
    expectError(await s.call('GET', `/api/users/${owner.uid}/dashboards`, { jwt: member.jwt }), 403)
    expectError(await s.call('GET', '/api/users/9999/dashboards', { jwt: admin }), 404)
    expectError(await s.call('GET', '/api/users/abc/dashboards', { jwt: admin }), 400)
  })

  test('GET /api/groups/{gid}/dashboards: shared with that group (a dashboard may be in several); members and admins', async () => {
    const { s, owner, member, stranger, admin, gid } = await world()
    const other = await s.createGroup('other', [stranger.uid, owner.uid])
    await create(s, owner.jwt, { Name: 'both', GIDs: [gid, other] })
    await create(s, member.jwt, { Name: 'team', GIDs: [gid] })
    await create(s, owner.jwt, { Name: 'unshared' })
    await create(s, admin, { Name: 'global', Global: true })
    expect(names(await s.call('GET', `/api/groups/${gid}/dashboards`, { jwt: member.jwt }))).toEqual(['both', 'team'])
    expect(names(await s.call('GET', `/api/groups/${other}/dashboards`, { jwt: stranger.jwt }))).toEqual(['both'])
    expect(names(await s.call('GET', `/api/groups/${gid}/dashboards`, { jwt: admin }))).toEqual(['both', 'team'])
    expectError(await s.call('GET', `/api/groups/${gid}/dashboards`, { jwt: stranger.jwt }), 403)
    expectError(await s.call('GET', '/api/groups/4242/dashboards', { jwt: admin }), 404)
  })
})

describe('sharing lists and groups', () => {
  test('a deleted group leaves every sharing list, and its members lose access', async () => {
    const { s, owner, member, admin, gid } = await world()
    const other = await s.createGroup('other', [member.uid])
    const id = await create(s, admin, { UID: owner.uid, GIDs: [gid, other, 4242] })
    expect((await s.call('DELETE', `/api/groups/${gid}`, { jwt: admin })).status).toBe(200)
    expect((await fetched(s, owner.jwt, id)).GIDs).toEqual([other, 4242])
    await s.store.groups.delete(other)
    expect((await fetched(s, owner.jwt, id)).GIDs).toEqual([4242])
    expectError(await get(s, member.jwt, id), 404)
  })

  test('a GID of a group created later grants access once it exists', async () => {
    const { s, owner, stranger, gid, admin } = await world()
    const id = await create(s, admin, { UID: owner.uid, GIDs: [gid + 1] })
    expectError(await get(s, stranger.jwt, id), 404)
    const later = await s.createGroup('later', [stranger.uid])
    expect(later).toBe(gid + 1)
    expect((await get(s, stranger.jwt, id)).status).toBe(200)
  })

  test("deleting a user deletes the user's dashboards", async () => {
    const { s, owner, admin } = await world()
    await create(s, owner.jwt, { Name: 'gone' })
    expect((await s.call('DELETE', `/api/users/${owner.uid}`, { jwt: admin })).status).toBe(200)
    expect((await s.call('GET', '/api/dashboards/all', { jwt: admin })).body).toEqual([])
    expect(storeSnapshot(s).dashboard_gids).toEqual([])
  })

  test('routes also answer with a trailing slash', async () => {
    const { s, owner } = await world()
    const id = await create(s, owner.jwt, { Name: 't' })
    expect((await s.call('GET', '/api/dashboards/', { jwt: owner.jwt })).body).toHaveLength(1)
    expect((await s.call('GET', `/api/dashboards/${id}/`, { jwt: owner.jwt })).body.ID).toBe(id)
    expect((await s.call('PUT', `/api/dashboards/${id}/`, { jwt: owner.jwt, json: { Name: 'u' } })).body.Name).toBe('u')
  })
})

describe('the admin flag', () => {
  test('?admin=true is accepted on every dashboard route and changes nothing (admins reach every dashboard anyway)', async () => {
    const { s, owner, stranger, admin } = await world()
    const id = await create(s, owner.jwt, { Name: 'flagged' })
    expect((await s.call('GET', '/api/dashboards?admin=true', { jwt: owner.jwt })).body).toHaveLength(1)
    expect((await s.call('GET', `/api/dashboards/${id}?admin=true`, { jwt: admin })).body.ID).toBe(id)
    expectError(await s.call('GET', `/api/dashboards/${id}?admin=true`, { jwt: stranger.jwt }), 404)
    expect((await s.call('PUT', `/api/dashboards/${id}?admin=true`, { jwt: owner.jwt, json: { Name: 'x' } })).body.Name).toBe('x')
    expect((await s.call('DELETE', `/api/dashboards/${id}?admin=true`, { jwt: admin })).status).toBe(200)
  })
})
