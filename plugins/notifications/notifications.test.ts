// Notifications over HTTP (docs/api.md, "Notifications"), sent as the published clients send them and read back as they
// parse them: the js-client (src/functions/notifications, src/models/notification) and the Go client
// (client/notifications.go, client/types Notification). The route × caller matrix of test/security.test.ts covers
// anonymous callers, tokens with and without the permission, admins' tokens on the broadcast route and the
// owner/stranger split; this file covers the targeting rules, updates, expiry, limits and bad input.
import { describe, expect, test } from 'bun:test'
import { type CallOptions, type TestServer, refused, serverPerTest } from '../../test/helpers'

const setup = serverPerTest()
const ZERO = '0001-01-01T00:00:00Z'
const NIL_UUID = '00000000-0000-0000-0000-000000000000'
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const MINUTE = 60_000
const HOUR = 60 * MINUTE
const DAY = 24 * HOUR

/**
 * The js-client's RawTargetedNotification / RawBroadcastedNotification, with the Go client's Notification fields:
 * every key, and the JSON type of each. Level and Link appear only when set (Go's omitempty).
 */
function expectClientShape(raw: Record<string, unknown>) {
  const types: Record<string, string> = {}
  for (const [k, v] of Object.entries(raw)) types[k] = typeof v
  const base = { UID: 'number', GID: 'number', Sender: 'number', Type: 'number', Broadcast: 'boolean', Sent: 'string', Expires: 'string', IgnoreUntil: 'string', Msg: 'string', Origin: 'string' }
  expect(types).toEqual({ ...base, ...('Level' in raw ? { Level: 'string' } : {}), ...('Link' in raw ? { Link: 'string' } : {}) })
  for (const k of ['UID', 'GID', 'Sender', 'Type']) expect(Number.isInteger(raw[k])).toBe(true)
  expect(raw.Sent).toMatch(ISO)
  expect(raw.Expires).toMatch(ISO)
  expect(raw.IgnoreUntil === ZERO || ISO.test(raw.IgnoreUntil as string)).toBe(true)
  expect(raw.Origin).toBe(NIL_UUID)
}

/** The js-client's toNotification (get-my-notifications.ts): how it classifies what it reads. */
function jsTargetOf(raw: Record<string, any>): string {
  if (raw.Broadcast) return 'broadcasted'
  if (raw.GID > 0) return `group:${raw.GID}`
  if (raw.UID === raw.Sender) return 'myself'
  return `user:${raw.UID}`
}

async function list(s: TestServer, jwt: string, query = ''): Promise<Record<string, Record<string, any>>> {
  const res = await s.call('GET', `/api/notifications${query}`, { jwt })
  expect({ status: res.status, text: res.text }).toMatchObject({ status: 200 })
  for (const [id, raw] of Object.entries(res.body)) {
    expect(id).toMatch(/^[1-9][0-9]*$/)
    expectClientShape(raw as Record<string, unknown>)
  }
  return res.body
}

async function send(s: TestServer, path: string, opts: CallOptions): Promise<string> {
  const res = await s.call('POST', `/api/notifications/${path}`, opts)
  expect({ status: res.status, text: res.text }).toMatchObject({ status: 200 })
  expect(Number.isInteger(res.body)).toBe(true)
  return String(res.body)
}

async function world() {
  const s = await setup()
  const alice = await s.createUser()
  const bob = await s.createUser()
  const carol = await s.createUser() // in no group
  const gid = await s.createGroup('team', [alice.uid, bob.uid])
  const other = await s.createGroup('others', [carol.uid])
  return { s, alice, bob, carol, gid, other, admin: s.adminJwt }
}

describe('the js-client', () => {
  test('createOneTargetedNotification myself, then getMyNotifications (GET /api/notifications/ with its slash)', async () => {
    const { s, alice, bob } = await world()
    // toRawCreatableTargetedNotification for 'myself': UID 0, GID 0, Broadcast false, undefined fields left out
    const id = await send(s, 'targeted/self', { jwt: alice.jwt, json: { Msg: 'test myself', Broadcast: false, UID: 0, GID: 0 } })
    const mine = await list(s, alice.jwt, '/')
    expect(Object.keys(mine)).toEqual([id])
    expect(mine[id]).toMatchObject({ UID: alice.uid, GID: 0, Sender: alice.uid, Type: 0, Broadcast: false, Msg: 'test myself', IgnoreUntil: ZERO })
    expect(jsTargetOf(mine[id]!)).toBe('myself')
    expect(Date.parse(mine[id]!.Expires) - Date.parse(mine[id]!.Sent)).toBe(7 * DAY)
    expect(await list(s, bob.jwt)).toEqual({})
    // its fetch sends the JSON string without a Content-Type of its own: text/plain
    const body = JSON.stringify({ Msg: 'as fetch sends it', Broadcast: false, UID: 0, GID: 0 })
    const res = await s.call('POST', '/api/notifications/targeted/self', { jwt: alice.jwt, body, headers: { 'content-type': 'text/plain;charset=UTF-8' } })
    expect(res.status).toBe(200)
    expect(Object.keys(await list(s, alice.jwt))).toEqual([id, String(res.body)])
  })

  test('createOneTargetedNotification to a group and to a user, createOneBroadcastedNotification', async () => {
    const { s, alice, bob, carol, gid, admin } = await world()
    const group = await send(s, 'targeted', { jwt: alice.jwt, json: { Msg: 'test group', Broadcast: false, UID: 0, GID: gid, Type: 12 } })
    const user = await send(s, 'targeted', { jwt: admin, json: { Msg: 'test user', Broadcast: false, UID: carol.uid, GID: 0 } })
    const all = await send(s, 'broadcast', { jwt: admin, json: { Msg: 'to all', Broadcast: true, Expires: new Date(s.clock.now() + HOUR).toISOString() } })
    const ofBob = await list(s, bob.jwt)
    expect(Object.keys(ofBob).sort()).toEqual([group, all].sort())
    expect(jsTargetOf(ofBob[group]!)).toBe(`group:${gid}`)
    expect(ofBob[group]!.Type).toBe(12)
    expect(jsTargetOf(ofBob[all]!)).toBe('broadcasted')
    expect(ofBob[all]).toMatchObject({ UID: 0, GID: 0, Sender: 1, Expires: new Date(s.clock.now() + HOUR).toISOString() })
    const ofCarol = await list(s, carol.jwt)
    expect(Object.keys(ofCarol).sort()).toEqual([user, all].sort())
    expect(jsTargetOf(ofCarol[user]!)).toBe(`user:${carol.uid}`)
    expect(Object.keys(await list(s, alice.jwt)).sort()).toEqual([group, all].sort())
  })

  test('updateOneNotification sends the whole record back; deleteOneNotification', async () => {
    const { s, alice } = await world()
    const id = await send(s, 'targeted/self', { jwt: alice.jwt, json: { Msg: 'first', Broadcast: false, UID: 0, GID: 0 } })
    const current = (await list(s, alice.jwt))[id]!
    const res = await s.call('PUT', `/api/notifications/${id}`, { jwt: alice.jwt, json: { ...current, Msg: 'second', Level: 'warn', Link: null, Type: 3 } })
    expect({ status: res.status, text: res.text }).toMatchObject({ status: 200 })
    expectClientShape(res.body)
    const after = (await list(s, alice.jwt))[id]!
    expect(after).toEqual({ ...current, Msg: 'second', Level: 'warn', Type: 3 })
    expect(res.body).toEqual(after)
    const del = await s.call('DELETE', `/api/notifications/${id}`, { jwt: alice.jwt })
    expect(del.status).toBe(200)
    expect(await list(s, alice.jwt)).toEqual({})
  })
})

describe('the Go client', () => {
  test('AddSelfTargetedNotification sends its zero values; an unset expiry gets the default one', async () => {
    const { s, alice } = await world()
    const json = { UID: 0, GID: 0, Sender: 0, Type: 7, Broadcast: false, Sent: ZERO, Expires: ZERO, IgnoreUntil: ZERO, Msg: 'from go', Origin: NIL_UUID, Link: 'https://example.com/x' }
    const id = await send(s, 'targeted/self', { jwt: alice.jwt, json })
    const n = (await list(s, alice.jwt))[id]!
    expect(n).toEqual({
      UID: alice.uid, GID: 0, Sender: alice.uid, Type: 7, Broadcast: false, Sent: new Date(s.clock.now()).toISOString(),
      Expires: new Date(s.clock.now() + 7 * DAY).toISOString(), IgnoreUntil: ZERO, Msg: 'from go', Origin: NIL_UUID, Link: 'https://example.com/x',
    })
  })

  test('QUARRY_NOTIFICATION_LIFETIME sets the default expiry', async () => {
    const s = await setup({ notificationLifetimeMs: 2 * HOUR })
    const alice = await s.createUser()
    const id = await send(s, 'targeted/self', { jwt: alice.jwt, json: { Msg: 'x', Expires: null } })
    expect((await list(s, alice.jwt))[id]!.Expires).toBe(new Date(s.clock.now() + 2 * HOUR).toISOString())
  })

  test('MyNewNotifications: ?after= in Go\'s layout (Z, ±hh, ±hh:mm) lists only later ones', async () => {
    const { s, alice } = await world()
    const first = await send(s, 'targeted/self', { jwt: alice.jwt, json: { Msg: 'one' } })
    const sent = (await list(s, alice.jwt))[first]!.Sent as string
    s.clock.advance(1000)
    const second = await send(s, 'targeted/self', { jwt: alice.jwt, json: { Msg: 'two' } })
    expect(Object.keys(await list(s, alice.jwt, `?after=${encodeURIComponent(ZERO)}`)).sort()).toEqual([first, second].sort())
    expect(Object.keys(await list(s, alice.jwt, `?after=${encodeURIComponent(sent)}`))).toEqual([second])
    const plusTwo = new Date(Date.parse(sent) + 2 * HOUR).toISOString().replace('Z', '+02')
    expect(Object.keys(await list(s, alice.jwt, `?after=${encodeURIComponent(plusTwo)}`))).toEqual([second])
    expect(Object.keys(await list(s, alice.jwt, `?after=${encodeURIComponent(plusTwo + ':00')}`))).toEqual([second])
    await refused(s, 400, 'GET', '/api/notifications?after=yesterday', { jwt: alice.jwt })
  })

  test('AllNotifications (?admin=true): an admin sees everyone\'s, ignored ones too; others get their own', async () => {
    const { s, alice, bob, admin } = await world()
    const a = await send(s, 'targeted/self', { jwt: alice.jwt, json: { Msg: 'a', IgnoreUntil: new Date(s.clock.now() + HOUR).toISOString() } })
    const b = await send(s, 'targeted/self', { jwt: bob.jwt, json: { Msg: 'b' } })
    expect(Object.keys(await list(s, admin, '?admin=true')).sort()).toEqual([a, b].sort())
    expect(await list(s, admin)).toEqual({})
    expect(Object.keys(await list(s, bob.jwt, '?admin=true'))).toEqual([b])
  })
})

describe('who may address whom', () => {
  test('a broadcast is an admin\'s: a user gets 403 and nothing is stored', async () => {
    const { s, alice } = await world()
    await refused(s, 403, 'POST', '/api/notifications/broadcast', { jwt: alice.jwt, json: { Msg: 'hi all' } })
  })

  test('a non-admin sends to themselves and their own groups, not to another user or a group of others', async () => {
    const { s, alice, bob, other } = await world()
    await refused(s, 403, 'POST', '/api/notifications/targeted', { jwt: alice.jwt, json: { Msg: 'x', UID: bob.uid } })
    await refused(s, 403, 'POST', '/api/notifications/targeted', { jwt: alice.jwt, json: { Msg: 'x', GID: other } })
    // a group that does not exist is no group of theirs either (no hint whether it exists)
    await refused(s, 403, 'POST', '/api/notifications/targeted', { jwt: alice.jwt, json: { Msg: 'x', GID: 999 } })
    const own = await send(s, 'targeted', { jwt: alice.jwt, json: { Msg: 'me', UID: alice.uid } })
    expect(jsTargetOf((await list(s, alice.jwt))[own]!)).toBe('myself')
  })

  test('an admin\'s token carries no admin rights: it addresses only the admin and the admin\'s groups', async () => {
    const { s, bob, admin } = await world()
    const token = await s.call('POST', '/api/tokens', { jwt: admin, json: { name: 't', capabilities: ['NotificationWrite'] } })
    const opts = { headers: { 'Service-Token': token.body.token as string } }
    await refused(s, 403, 'POST', '/api/notifications/targeted', { ...opts, json: { Msg: 'x', UID: bob.uid } })
    await refused(s, 403, 'POST', '/api/notifications/broadcast', { ...opts, json: { Msg: 'x' } })
    await send(s, 'targeted/self', { ...opts, json: { Msg: 'note to self' } })
  })

  test('an admin addresses any user or group; a missing one is 404', async () => {
    const { s, carol, other, admin } = await world()
    await send(s, 'targeted', { jwt: admin, json: { Msg: 'x', GID: other } })
    expect(Object.keys(await list(s, carol.jwt))).toHaveLength(1)
    await refused(s, 404, 'POST', '/api/notifications/targeted', { jwt: admin, json: { Msg: 'x', UID: 999 } })
    await refused(s, 404, 'POST', '/api/notifications/targeted', { jwt: admin, json: { Msg: 'x', GID: 999 } })
  })

  test('exactly one target per route', async () => {
    const { s, alice, bob, gid, admin } = await world()
    for (const json of [{ Msg: 'x' }, { Msg: 'x', UID: 0, GID: 0 }, { Msg: 'x', UID: alice.uid, GID: gid }, { Msg: 'x', UID: alice.uid, Broadcast: true }])
      await refused(s, 400, 'POST', '/api/notifications/targeted', { jwt: alice.jwt, json })
    for (const json of [{ Msg: 'x', GID: gid }, { Msg: 'x', UID: bob.uid }, { Msg: 'x', Broadcast: true }])
      await refused(s, 400, 'POST', '/api/notifications/targeted/self', { jwt: alice.jwt, json })
    for (const json of [{ Msg: 'x', UID: bob.uid }, { Msg: 'x', GID: gid }, { Msg: 'x', Broadcast: false }])
      await refused(s, 400, 'POST', '/api/notifications/broadcast', { jwt: admin, json })
  })
})

describe('changes and deletion', () => {
  test('the sender and admins change and delete; a group member gets 403, a stranger 404; nothing changes', async () => {
    const { s, alice, bob, carol, gid, admin } = await world()
    const id = await send(s, 'targeted', { jwt: alice.jwt, json: { Msg: 'for the team', GID: gid } })
    await refused(s, 403, 'PUT', `/api/notifications/${id}`, { jwt: bob.jwt, json: { Msg: 'defaced' } })
    await refused(s, 403, 'DELETE', `/api/notifications/${id}`, { jwt: bob.jwt })
    await refused(s, 404, 'PUT', `/api/notifications/${id}`, { jwt: carol.jwt, json: { Msg: 'defaced' } })
    await refused(s, 404, 'DELETE', `/api/notifications/${id}`, { jwt: carol.jwt })
    const res = await s.call('PUT', `/api/notifications/${id}`, { jwt: admin, json: { Msg: 'edited by admin' } })
    expect(res.body.Msg).toBe('edited by admin')
    expect((await s.call('DELETE', `/api/notifications/${id}`, { jwt: alice.jwt })).status).toBe(200)
    await refused(s, 404, 'DELETE', `/api/notifications/${id}`, { jwt: alice.jwt })
  })

  test('a broadcast is changed only by admins', async () => {
    const { s, alice, admin } = await world()
    const id = await send(s, 'broadcast', { jwt: admin, json: { Msg: 'maintenance' } })
    await refused(s, 403, 'PUT', `/api/notifications/${id}`, { jwt: alice.jwt, json: { IgnoreUntil: new Date(s.clock.now() + HOUR).toISOString() } })
    await refused(s, 403, 'DELETE', `/api/notifications/${id}`, { jwt: alice.jwt })
  })

  test('the one user it is addressed to may snooze or delete it, not rewrite it', async () => {
    const { s, carol, admin } = await world()
    const id = await send(s, 'targeted', { jwt: admin, json: { Msg: 'from the admin', UID: carol.uid, Level: 'info' } })
    const current = (await list(s, carol.jwt))[id]!
    await refused(s, 403, 'PUT', `/api/notifications/${id}`, { jwt: carol.jwt, json: { ...current, Msg: 'rewritten' } })
    await refused(s, 403, 'PUT', `/api/notifications/${id}`, { jwt: carol.jwt, json: { Link: 'https://elsewhere.example' } })
    const until = new Date(s.clock.now() + 10 * MINUTE).toISOString()
    const res = await s.call('PUT', `/api/notifications/${id}`, { jwt: carol.jwt, json: { ...current, IgnoreUntil: until } })
    expect(res.status).toBe(200)
    expect(await list(s, carol.jwt)).toEqual({})
    s.clock.advance(10 * MINUTE + 1)
    expect((await list(s, carol.jwt))[id]).toMatchObject({ IgnoreUntil: until, Msg: 'from the admin' })
    expect((await s.call('DELETE', `/api/notifications/${id}`, { jwt: carol.jwt })).status).toBe(200)
  })

  test('the target is fixed; Go\'s zero values and the same target are accepted', async () => {
    const { s, alice, bob, gid, other, admin } = await world()
    const id = await send(s, 'targeted', { jwt: alice.jwt, json: { Msg: 'x', GID: gid } })
    for (const json of [{ GID: other }, { UID: bob.uid }, { Broadcast: true }])
      await refused(s, 400, 'PUT', `/api/notifications/${id}`, { jwt: admin, json })
    const res = await s.call('PUT', `/api/notifications/${id}`, { jwt: alice.jwt, json: { UID: 0, GID: gid, Broadcast: false, Sender: 0, Sent: ZERO, Expires: ZERO, IgnoreUntil: ZERO, Msg: '', Origin: NIL_UUID, Type: 0 } })
    expect({ status: res.status, text: res.text }).toMatchObject({ status: 200 })
    expect(res.body).toMatchObject({ GID: gid, Msg: 'x', Sender: alice.uid })
  })
})

describe('expiry', () => {
  test('an expired notification leaves every listing, cannot be changed, and is swept', async () => {
    const { s, alice, admin } = await world()
    const id = await send(s, 'targeted/self', { jwt: alice.jwt, json: { Msg: 'soon gone', Expires: new Date(s.clock.now() + 1000).toISOString() } })
    expect(Object.keys(await list(s, alice.jwt))).toEqual([id])
    s.clock.advance(1000)
    expect(await list(s, alice.jwt)).toEqual({})
    expect(await list(s, admin, '?admin=true')).toEqual({})
    await refused(s, 404, 'PUT', `/api/notifications/${id}`, { jwt: alice.jwt, json: { Msg: 'back' } })
    expect(await s.store.notifications.get(Number(id))).toBeDefined()
    expect(await s.store.notifications.sweepExpired(s.clock.now())).toBe(1)
    expect(await s.store.notifications.get(Number(id))).toBeUndefined()
  })

  test('a PUT with a past Expires dismisses it at once', async () => {
    const { s, alice } = await world()
    const id = await send(s, 'targeted/self', { jwt: alice.jwt, json: { Msg: 'x' } })
    const res = await s.call('PUT', `/api/notifications/${id}`, { jwt: alice.jwt, json: { Expires: new Date(s.clock.now() - 1000).toISOString() } })
    expect(res.status).toBe(200)
    expect(await list(s, alice.jwt)).toEqual({})
  })

  test('a deleted user\'s and a deleted group\'s notifications go with them', async () => {
    const { s, alice, bob, gid, admin } = await world()
    const ids = [
      await send(s, 'targeted', { jwt: alice.jwt, json: { Msg: 'x', GID: gid } }),
      await send(s, 'targeted', { jwt: admin, json: { Msg: 'x', UID: bob.uid } }),
    ]
    expect((await s.call('DELETE', `/api/groups/${gid}`, { jwt: admin })).status).toBe(200)
    expect((await s.call('DELETE', `/api/users/${bob.uid}`, { jwt: admin })).status).toBe(200)
    for (const id of ids) expect(await s.store.notifications.get(Number(id))).toBeUndefined()
  })
})

describe('limits', () => {
  test('a sender holds at most QUARRY_NOTIFICATIONS_PER_USER unexpired ones (429, nothing stored); expiry frees room', async () => {
    const s = await setup({ notificationsPerUser: 3 })
    const alice = await s.createUser()
    const bob = await s.createUser()
    await send(s, 'targeted/self', { jwt: alice.jwt, json: { Msg: 'short', Expires: new Date(s.clock.now() + 1000).toISOString() } })
    for (let i = 0; i < 2; i++) await send(s, 'targeted/self', { jwt: alice.jwt, json: { Msg: `n${i}` } })
    const res = await refused(s, 429, 'POST', '/api/notifications/targeted/self', { jwt: alice.jwt, json: { Msg: 'one too many' } })
    expect(res.body.Error).toContain('QUARRY_NOTIFICATIONS_PER_USER')
    await send(s, 'broadcast', { jwt: s.adminJwt, json: { Msg: 'each sender has their own count' } })
    await send(s, 'targeted/self', { jwt: bob.jwt, json: { Msg: 'others are not affected' } })
    s.clock.advance(1000)
    await send(s, 'targeted/self', { jwt: alice.jwt, json: { Msg: 'room again' } })
  })

  test('the count holds when one sender sends many at once', async () => {
    const s = await setup({ notificationsPerUser: 5 })
    const alice = await s.createUser()
    const statuses = await Promise.all(
      Array.from({ length: 20 }, (_, i) => s.call('POST', '/api/notifications/targeted/self', { jwt: alice.jwt, json: { Msg: `n${i}` } }).then((r) => r.status)),
    )
    expect(statuses.filter((c) => c === 200)).toHaveLength(5)
    expect(statuses.filter((c) => c === 429)).toHaveLength(15)
    expect(Object.keys(await list(s, alice.jwt))).toHaveLength(5)
  })

  test('a message is 1 to 4096 characters and not blank', async () => {
    const { s, alice } = await world()
    for (const Msg of ['', '   ', 'x'.repeat(4097)]) await refused(s, 400, 'POST', '/api/notifications/targeted/self', { jwt: alice.jwt, json: { Msg } })
    await send(s, 'targeted/self', { jwt: alice.jwt, json: { Msg: 'é'.repeat(4096) } })
    await send(s, 'targeted/self', { jwt: alice.jwt, json: { Msg: 'line one\n\tline two 😀' } })
    const id = await send(s, 'targeted/self', { jwt: alice.jwt, json: { Msg: 'ok' } })
    for (const Msg of ['  ', 'x'.repeat(4097)]) await refused(s, 400, 'PUT', `/api/notifications/${id}`, { jwt: alice.jwt, json: { Msg } })
  })
})

describe('bad input: 400, nothing changed', () => {
  test('bodies', async () => {
    const { s, alice } = await world()
    const past = new Date(s.clock.now() - 1000).toISOString()
    const bad: Record<string, unknown>[] = [
      {},
      { Msg: 5 },
      { Msg: null },
      { Msg: 'x\u0000y' },
      { Msg: 'bell\u0007' },
      { Msg: 'x', Expires: past },
      { Msg: 'x', Expires: 'tomorrow' },
      { Msg: 'x', IgnoreUntil: '2026-13-40T00:00:00Z' },
      { Msg: 'x', Type: -1 },
      { Msg: 'x', Type: 4_294_967_296 },
      { Msg: 'x', Type: '5' },
      { Msg: 'x', Type: 1.5 },
      { Msg: 'x', UID: '0' },
      { Msg: 'x', Broadcast: 'false' },
      { Msg: 'x', Level: 'very bad <b>' },
      { Msg: 'x', Link: 'javascript:alert(1)' },
      { Msg: 'x', Link: '//evil.example/x' },
      { Msg: 'x', Link: 'https://user:pw@example.com/' },
      { Msg: 'x', Link: 'data:text/html,hi' },
      { Msg: 'x', Link: 'h'.repeat(2049) },
    ]
    for (const json of bad) await refused(s, 400, 'POST', '/api/notifications/targeted/self', { jwt: alice.jwt, json })
    await refused(s, 400, 'POST', '/api/notifications/targeted/self', { jwt: alice.jwt, body: '{"Msg":', headers: { 'content-type': 'application/json' } })
    const id = await send(s, 'targeted/self', { jwt: alice.jwt, json: { Msg: 'x', Link: '/search?q=1' } })
    for (const json of [{ Msg: 'nul\u0000' }, { Expires: 'soon' }, { IgnoreUntil: 5 }, { Type: -1 }, { Link: 'javascript:x' }, { Level: 'a b' }])
      await refused(s, 400, 'PUT', `/api/notifications/${id}`, { jwt: alice.jwt, json })
  })

  test('ids', async () => {
    const { s, alice } = await world()
    const kept = await send(s, 'targeted/self', { jwt: alice.jwt, json: { Msg: 'x' } })
    for (const id of ['abc', '0', '-1', '1.5', '99999999999999999999'])
      await refused(s, 400, 'DELETE', `/api/notifications/${id}`, { jwt: alice.jwt })
    await refused(s, 404, 'DELETE', '/api/notifications/12345', { jwt: alice.jwt })
    expect(Object.keys(await list(s, alice.jwt))).toEqual([kept])
  })
})
