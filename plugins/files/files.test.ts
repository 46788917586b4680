// User files over HTTP (docs/api.md "Resources and user files", "Conventions", "API tokens", "Sharing items with
// groups"). The route × caller matrix in test/security.test.ts covers anonymous callers and tokens on every route; this
// file covers the rules of the user file API itself, through the real app with a disk blob store.
import { describe, expect, test } from 'bun:test'
import { createS3BlobStore } from '../../server/blob'
import { type CallResult, type TestServer, blobFiles, createTestServer, expectError, heldBodies, itemWorld, refused, serverPerTest, storeSnapshot } from '../../test/helpers'
import { MISSING_S3, testS3 } from '../../test/s3'
import { describeWithServers } from '../../test/services'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d+Z$/
const RECORD_KEYS = ['Desc', 'GIDs', 'GUID', 'Global', 'Labels', 'Name', 'Size', 'ThingUUID', 'Type', 'UID', 'Updated'].sort()
const MiB = 1024 * 1024
const BOUNDARY = 'quarry-files-boundary-3a9c'
const PNG = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 0, 0, 0, 1])
const TEXT = 'text/plain; charset=utf-8'

const setup = serverPerTest()
const ascii = (s: string) => new TextEncoder().encode(s)

const world = async () => itemWorld(await setup())

type Fields = Record<string, string>

/** A multipart request as fetch and browsers build it: `file` plus text fields. */
function send(s: TestServer, method: string, path: string, jwt: string, data: Uint8Array | string, fields: Fields = {}) {
  const fd = new FormData()
  for (const [k, v] of Object.entries(fields)) fd.append(k, v)
  fd.append('file', new Blob([data]), 'upload.bin')
  return s.handle(new Request(`http://localhost${path}`, { method, body: fd, headers: { authorization: `Bearer ${jwt}` } }))
}

/** POST /api/files, expecting success. */
async function create(s: TestServer, jwt: string, data: Uint8Array | string = 'contents', fields: Fields = { name: 'file', desc: 'a file' }) {
  const res = await send(s, 'POST', '/api/files', jwt, data, fields)
  expect({ status: res.status, text: res.text }).toMatchObject({ status: 200 })
  return res.body as Record<string, any> & { GUID: string; ThingUUID: string }
}

/** The detailed form: `meta` JSON. */
const meta = (m: Record<string, unknown>): Fields => ({ meta: JSON.stringify(m) })

/** A hand-written multipart body with one `file` part, for streamed requests. */
function multipartBody(data: Uint8Array, before = ''): Uint8Array {
  const head = ascii(`${before}--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="f.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`)
  return Buffer.concat([head, data, ascii(`\r\n--${BOUNDARY}--\r\n`)])
}
const TAIL = `\r\n--${BOUNDARY}--\r\n`.length

function streamed(s: TestServer, method: string, path: string, jwt: string, body: ReadableStream<Uint8Array>) {
  return s.handle(
    new Request(`http://localhost${path}`, {
      method,
      body,
      headers: { authorization: `Bearer ${jwt}`, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
      duplex: 'half',
    }),
  )
}

async function download(s: TestServer, jwt: string, id: string, q = '') {
  const res = await s.app.handle(new Request(`http://localhost/api/files/${id}${q}`, { headers: { authorization: `Bearer ${jwt}` } }))
  return { status: res.status, bytes: new Uint8Array(await res.arrayBuffer()), type: res.headers.get('content-type') }
}

const details = (s: TestServer, jwt: string, id: string, q = '') => s.call('GET', `/api/files/${id}/details${q}`, { jwt })

describe('POST /api/files', () => {
  test('simple form: answers the new record, owned by the caller', async () => {
    const { s, owner } = await world()
    const guid = crypto.randomUUID()
    const before = s.clock.now()
    const r = await create(s, owner.jwt, 'hello, world\n', { name: 'greeting', desc: 'says hello', guid: guid.toUpperCase() })
    expect(Object.keys(r).sort()).toEqual(RECORD_KEYS)
    expect(r).toEqual({
      GUID: guid, ThingUUID: r.ThingUUID, UID: owner.uid, GIDs: [], Global: false, Size: 13, Type: TEXT,
      Name: 'greeting', Desc: 'says hello', Labels: [], Updated: new Date(before).toISOString(),
    })
    expect(r.ThingUUID).toMatch(UUID)
    expect(r.ThingUUID).not.toBe(guid)
    expect(r.Updated).toMatch(ISO)
    expect((await details(s, owner.jwt, guid)).body).toEqual(r)
    expect((await s.call('GET', '/api/files', { jwt: owner.jwt })).body).toEqual([r])
    const got = await download(s, owner.jwt, guid)
    expect(got).toEqual({ status: 200, bytes: ascii('hello, world\n'), type: TEXT })
  })

  test('a guid that is not a UUID, or none, gets a generated one; name defaults to the file name, desc to ""', async () => {
    const { s, owner } = await world()
    for (const fields of [{ guid: 'not-a-uuid' }, { guid: '' }, {}] as Fields[]) {
      const r = await create(s, owner.jwt, 'x', fields)
      expect(r.GUID).toMatch(UUID)
      expect(r).toMatchObject({ Name: 'upload.bin', Desc: '', Labels: [], GIDs: [] })
    }
    const named = await create(s, owner.jwt, 'x', { name: '' })
    expect(named.Name).toBe('')
  })

  test('detailed form: meta with GIDs, Name, Desc, Labels (unknown keys ignored)', async () => {
    const { s, owner, gid } = await world()
    const second = await s.createGroup('second', [owner.uid])
    const r = await create(s, owner.jwt, 'x', meta({ UID: owner.uid, GIDs: [second, gid, gid], Global: false, Name: 'icon', Desc: 'an icon', Labels: ['a', 'b'], Size: 99, Extra: 1 }))
    expect(r).toMatchObject({ UID: owner.uid, GIDs: [gid, second], Global: false, Name: 'icon', Desc: 'an icon', Labels: ['a', 'b'], Size: 1 })
    // a guid field comes along with meta too
    const guid = crypto.randomUUID()
    expect((await create(s, owner.jwt, 'x', { ...meta({ Name: 'g' }), guid })).GUID).toBe(guid)
    // nulls are as absent
    expect(await create(s, owner.jwt, 'x', meta({ GIDs: null, Labels: null, Desc: null, Name: null, UID: null }))).toMatchObject({ GIDs: [], Labels: [], Desc: '', UID: owner.uid })
  })

  test('only admins set another UID or Global: 403 and nothing stored', async () => {
    const { s, owner, stranger } = await world()
    for (const m of [{ UID: stranger.uid }, { Global: true }, { UID: 1 }]) {
      const before = storeSnapshot(s)
      expectError(await send(s, 'POST', '/api/files', owner.jwt, 'x', meta(m)), 403)
      expect(storeSnapshot(s)).toEqual(before)
      expect(blobFiles(s)).toEqual([])
    }
    // the caller's own UID is fine
    expect((await create(s, owner.jwt, 'x', meta({ UID: owner.uid }))).UID).toBe(owner.uid)
    const g = await create(s, s.adminJwt, 'x', meta({ UID: owner.uid, Global: true }))
    expect(g).toMatchObject({ UID: owner.uid, Global: true })
    // an admin's token acts as a user
    const tok = await s.call('POST', '/api/tokens', { jwt: s.adminJwt, json: { name: 't', capabilities: ['UserFileRead', 'UserFileWrite'] } })
    const fd = new FormData()
    fd.append('meta', JSON.stringify({ Global: true }))
    fd.append('file', new Blob(['x']), 'x')
    const before = storeSnapshot(s)
    expectError(await s.handle(new Request('http://localhost/api/files', { method: 'POST', body: fd, headers: { 'Service-Token': tok.body.token } })), 403)
    expect(storeSnapshot(s)).toEqual(before)
  })

  test('an admin giving a file to a user that does not exist: 400', async () => {
    const { s } = await world()
    const before = storeSnapshot(s)
    expectError(await send(s, 'POST', '/api/files', s.adminJwt, 'x', meta({ UID: 9999 })), 400)
    expect(storeSnapshot(s)).toEqual(before)
    expect(blobFiles(s)).toEqual([])
  })

  test('bad forms and fields are 400 with nothing stored', async () => {
    const { s, owner } = await world()
    const cases: Fields[] = [
      { meta: '{"Name":' },
      { meta: '[]' },
      { meta: '"x"' },
      { meta: 'null' },
      meta({ GIDs: [0] }),
      meta({ GIDs: [-1] }),
      meta({ GIDs: ['a'] }),
      meta({ GIDs: 3 }),
      meta({ UID: 'x' }),
      meta({ UID: -2 }),
      meta({ Global: 'yes' }),
      meta({ Name: 5 }),
      meta({ Name: 'x'.repeat(257) }),
      meta({ Desc: [] }),
      meta({ Labels: 'a' }),
      meta({ Labels: [1] }),
      { name: 'x'.repeat(257) },
      { desc: 'x'.repeat(4097) },
      { desc: 'x'.repeat(40 * 1024) },
    ]
    for (const fields of cases) {
      const before = storeSnapshot(s)
      const res = await send(s, 'POST', '/api/files', owner.jwt, 'x', fields)
      expect({ fields: JSON.stringify(fields).slice(0, 60), status: res.status }).toEqual({ fields: JSON.stringify(fields).slice(0, 60), status: 400 })
      expectError(res, 400)
      expect(storeSnapshot(s)).toEqual(before)
    }
    const raw = (body: string | Uint8Array, type: string) =>
      s.handle(new Request('http://localhost/api/files', { method: 'POST', body, headers: { authorization: `Bearer ${owner.jwt}`, 'content-type': type } }))
    const noFile = new FormData()
    noFile.append('name', 'x')
    for (const send of [
      () => s.handle(new Request('http://localhost/api/files', { method: 'POST', body: noFile, headers: { authorization: `Bearer ${owner.jwt}` } })),
      () => raw('{"file":"x"}', 'application/json'),
      () => raw('contents', 'application/octet-stream'),
      () => raw('', `multipart/form-data; boundary=${BOUNDARY}`),
      () => raw(multipartBody(ascii('x')), 'multipart/form-data'),
      () => raw(multipartBody(ascii('x')).subarray(0, -8), `multipart/form-data; boundary=${BOUNDARY}`),
    ]) {
      const before = storeSnapshot(s)
      expectError(await send(), 400)
      expect(storeSnapshot(s)).toEqual(before)
    }
    expect(blobFiles(s)).toEqual([])
    await refused(s, 401, 'POST', '/api/files', { body: 'x', headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` } })
  })

  test('over maxFileBytes: 413 with nothing stored (declared or streamed); exactly at the limit is fine', async () => {
    const { s, owner } = await world()
    s.config.maxFileBytes = 1000
    const before = storeSnapshot(s)
    expectError(await send(s, 'POST', '/api/files', owner.jwt, new Uint8Array(1001)), 413)
    expectError(await streamed(s, 'POST', '/api/files', owner.jwt, new Blob([multipartBody(new Uint8Array(5000))]).stream()), 413)
    let read = false
    const never = new ReadableStream<Uint8Array>({
      pull() {
        read = true
        throw new Error('the body must not be read')
      },
    }, { highWaterMark: 0 })
    const declared = await s.handle(new Request('http://localhost/api/files', {
      method: 'POST', body: never, duplex: 'half',
      headers: { authorization: `Bearer ${owner.jwt}`, 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, 'content-length': String(10 * MiB) },
    } as RequestInit))
    expectError(declared, 413)
    expect(read).toBe(false)
    expect(storeSnapshot(s)).toEqual(before)
    expect(blobFiles(s)).toEqual([])
    expect((await create(s, owner.jwt, new Uint8Array(1000))).Size).toBe(1000)
  })
})

describe('contents and Type', () => {
  test('empty, binary, png, text and multi-megabyte files round-trip with their detected Type', async () => {
    const { s, owner } = await world()
    const binary = Uint8Array.from({ length: 4096 }, (_, i) => i % 256)
    const big = Uint8Array.from({ length: 5 * MiB + 3 }, (_, i) => (i * 7 + (i >> 10)) & 255)
    const cases: [Uint8Array, string, string][] = [
      [new Uint8Array(0), 'empty', 'application/octet-stream'],
      [binary, 'application/octet-stream', 'application/octet-stream'],
      [PNG, 'image/png', 'image/png'],
      [ascii('just text\n'), TEXT, TEXT],
      [big, 'application/octet-stream', 'application/octet-stream'],
    ]
    for (const [data, type, contentType] of cases) {
      const r = await create(s, owner.jwt, data)
      expect({ Size: r.Size, Type: r.Type }).toEqual({ Size: data.byteLength, Type: type })
      const got = await download(s, owner.jwt, r.GUID)
      expect({ status: got.status, type: got.type }).toEqual({ status: 200, type: contentType })
      expect(Buffer.from(got.bytes).equals(Buffer.from(data))).toBe(true)
    }
    expect(blobFiles(s)).toHaveLength(cases.length)
  })

  test('downloads accept the download token, as header or cookie, and nothing else does', async () => {
    const { s, owner } = await world()
    const r = await create(s, owner.jwt, 'secret stuff')
    const tmp = (await s.call('GET', '/api/login/tmptoken', { jwt: owner.jwt })).body.JWT as string
    expect((await download(s, tmp, r.GUID)).bytes).toEqual(ascii('secret stuff'))
    const viaCookie = await s.app.handle(new Request(`http://localhost/api/files/${r.GUID}`, { headers: { cookie: `token=${tmp}` } }))
    expect(await viaCookie.text()).toBe('secret stuff')
    expectError(await details(s, tmp, r.GUID), 401)
    expectError(await s.call('GET', '/api/files', { jwt: tmp }), 401)
    expectError(await send(s, 'PUT', `/api/files/${r.GUID}`, tmp, 'x'), 401)
    s.clock.advance(3001)
    expectError(await s.call('GET', `/api/files/${r.GUID}`, { jwt: tmp }), 401)
  })

  test('over HTTP the download names no file (Bun would name the blob store\'s file) and has the exact length', async () => {
    const { s, owner } = await world()
    const r = await create(s, owner.jwt, PNG)
    s.app.listen({ hostname: '127.0.0.1', port: 0 })
    try {
      const res = await fetch(`http://127.0.0.1:${s.app.server!.port}/api/files/${r.GUID}`, { headers: { authorization: `Bearer ${owner.jwt}` } })
      expect(new Uint8Array(await res.arrayBuffer())).toEqual(PNG)
      expect([res.headers.get('content-disposition'), res.headers.get('content-length'), res.headers.get('content-type')]).toEqual(['inline', String(PNG.byteLength), 'image/png'])
    } finally {
      await s.app.stop(true)
    }
  })
})

describe('visibility', () => {
  async function items() {
    const w = await world()
    const own = await create(w.s, w.owner.jwt, 'own', { name: 'own' })
    const shared = await create(w.s, w.owner.jwt, 'shared', meta({ Name: 'shared', GIDs: [w.gid] }))
    const global = await create(w.s, w.admin, 'global', meta({ Name: 'global', Global: true }))
    const adminsOwn = await create(w.s, w.admin, 'admin', { name: 'admin-only' })
    return { ...w, own, shared, global, adminsOwn }
  }
  const names = (res: CallResult) => (res.body as { Name: string }[]).map((r) => r.Name).sort()

  test('GET /api/files lists own, group-shared and global; ?admin=true by an admin lists all', async () => {
    const w = await items()
    expect(names(await w.s.call('GET', '/api/files', { jwt: w.owner.jwt }))).toEqual(['global', 'own', 'shared'])
    expect(names(await w.s.call('GET', '/api/files', { jwt: w.member.jwt }))).toEqual(['global', 'shared'])
    expect(names(await w.s.call('GET', '/api/files', { jwt: w.stranger.jwt }))).toEqual(['global'])
    expect(names(await w.s.call('GET', '/api/files?admin=true', { jwt: w.stranger.jwt }))).toEqual(['global'])
    expect(names(await w.s.call('GET', '/api/files', { jwt: w.admin }))).toEqual(['admin-only', 'global'])
    expect(names(await w.s.call('GET', '/api/files?admin=true', { jwt: w.admin }))).toEqual(['admin-only', 'global', 'own', 'shared'])
    const tok = await w.s.call('POST', '/api/tokens', { jwt: w.admin, json: { name: 't', capabilities: ['UserFileRead'] } })
    const viaToken = await w.s.call('GET', '/api/files?admin=true', { headers: { 'Service-Token': tok.body.token } })
    expect(names(viaToken)).toEqual(['admin-only', 'global'])
    const fresh = await w.s.createUser()
    expect((await w.s.call('GET', '/api/files', { jwt: fresh.jwt })).body).toHaveLength(1)
    for (const f of (await w.s.call('GET', '/api/files?admin=true', { jwt: w.admin })).body) expect(Object.keys(f).sort()).toEqual(RECORD_KEYS)
  })

  test('reads: owner, member, admin 200 (global: everyone); others 404', async () => {
    const w = await items()
    for (const [jwt, file, status] of [
      [w.owner.jwt, w.own, 200], [w.member.jwt, w.own, 404], [w.stranger.jwt, w.own, 404], [w.admin, w.own, 200],
      [w.member.jwt, w.shared, 200], [w.stranger.jwt, w.shared, 404],
      [w.stranger.jwt, w.global, 200], [w.owner.jwt, w.global, 200],
      [w.owner.jwt, w.adminsOwn, 404],
    ] as const) {
      const d = await details(w.s, jwt, file.GUID)
      const c = await download(w.s, jwt, file.GUID)
      expect({ name: file.Name, d: d.status, c: c.status }).toEqual({ name: file.Name, d: status, c: status })
      if (status === 200) expect(d.body).toEqual(file)
      else expectError(d, 404)
    }
  })

  test('writes: a reader who may not write gets 403, one who cannot read 404; nothing changes', async () => {
    const w = await items()
    for (const [jwt, file, status] of [[w.member.jwt, w.shared, 403], [w.stranger.jwt, w.global, 403], [w.stranger.jwt, w.shared, 404], [w.member.jwt, w.own, 404]] as const) {
      await refused(w.s, status, 'PATCH', `/api/files/${file.GUID}`, { jwt, json: { Name: 'x' } })
      await refused(w.s, status, 'DELETE', `/api/files/${file.GUID}`, { jwt })
      await refused(w.s, status, 'DELETE', `/api/files/${file.ThingUUID}`, { jwt })
      for (const method of ['PUT', 'POST']) {
        const before = storeSnapshot(w.s)
        const blobs = blobFiles(w.s)
        expectError(await send(w.s, method, `/api/files/${file.GUID}`, jwt, 'nope'), status)
        expect(storeSnapshot(w.s)).toEqual(before)
        expect(blobFiles(w.s)).toEqual(blobs)
      }
    }
  })

  test('bad ids are 400, unknown ones 404', async () => {
    const w = await items()
    for (const bad of ['nope', '1234', `${w.own.GUID}x`, w.own.GUID.replaceAll('-', '')]) {
      expectError(await details(w.s, w.owner.jwt, bad), 400)
      expectError(await w.s.call('GET', `/api/files/${bad}`, { jwt: w.owner.jwt }), 400)
      await refused(w.s, 400, 'PATCH', `/api/files/${bad}`, { jwt: w.owner.jwt, json: { Name: 'x' } })
      await refused(w.s, 400, 'DELETE', `/api/files/${bad}`, { jwt: w.owner.jwt })
      expectError(await send(w.s, 'PUT', `/api/files/${bad}`, w.owner.jwt, 'x'), 400)
    }
    const unknown = crypto.randomUUID()
    expectError(await details(w.s, w.admin, unknown, '?admin=true'), 404)
    expectError(await w.s.call('GET', `/api/files/${unknown}`, { jwt: w.admin }), 404)
    await refused(w.s, 404, 'PATCH', `/api/files/${unknown}`, { jwt: w.admin, json: { Name: 'x' } })
    await refused(w.s, 404, 'DELETE', `/api/files/${unknown}?admin=true`, { jwt: w.admin })
    expectError(await send(w.s, 'POST', `/api/files/${unknown}`, w.admin, 'x'), 404)
    expect(blobFiles(w.s)).toHaveLength(4)
    // the GUID and the ThingUUID in any case
    expect((await details(w.s, w.owner.jwt, w.own.GUID.toUpperCase())).body.ThingUUID).toBe(w.own.ThingUUID)
    expect((await details(w.s, w.owner.jwt, w.own.ThingUUID.toUpperCase())).body.ThingUUID).toBe(w.own.ThingUUID)
  })

  test('a deleted group leaves every GIDs list (and its members lose access); later groups grant access', async () => {
    const w = await items()
    const other = await w.s.createGroup('other', [w.member.uid])
    // groups the owner is not in (or that do not exist) only by an admin (docs/api.md "Sharing items with groups")
    const f = await create(w.s, w.admin, 'x', meta({ UID: w.owner.uid, GIDs: [w.gid, other, 4242] }))
    expect((await w.s.call('DELETE', `/api/groups/${w.gid}`, { jwt: w.admin })).status).toBe(200)
    expect((await details(w.s, w.owner.jwt, f.GUID)).body.GIDs).toEqual([other, 4242])
    expect((await details(w.s, w.owner.jwt, w.shared.GUID)).body.GIDs).toEqual([])
    expectError(await details(w.s, w.member.jwt, w.shared.GUID), 404)
    await w.s.store.groups.delete(other)
    expect((await w.s.store.files.get(f.ThingUUID))!.gids).toEqual([4242])

    const later = await create(w.s, w.admin, 'x', meta({ UID: w.owner.uid, GIDs: [other + 1] }))
    expectError(await details(w.s, w.stranger.jwt, later.GUID), 404)
    expect(await w.s.createGroup('later', [w.stranger.uid])).toBe(other + 1)
    expect((await details(w.s, w.stranger.jwt, later.GUID)).status).toBe(200)
  })

  test('deleting the owner deletes their files', async () => {
    const w = await items()
    expect((await w.s.call('DELETE', `/api/users/${w.owner.uid}`, { jwt: w.admin })).status).toBe(200)
    expect(await w.s.store.files.get(w.own.ThingUUID)).toBeUndefined()
    expect(await w.s.store.files.get(w.global.ThingUUID)).toBeDefined()
  })
})

describe('GUID resolution', () => {
  /** Three files with one GUID: the member's own, the owner's shared with the group, the admin's global one. */
  async function sameGuid() {
    const w = await world()
    const guid = crypto.randomUUID()
    const global = await create(w.s, w.admin, 'global', { ...meta({ Name: 'global', Global: true }), guid })
    const group = await create(w.s, w.owner.jwt, 'group', { ...meta({ Name: 'group', GIDs: [w.gid] }), guid })
    const owned = await create(w.s, w.member.jwt, 'owned', { ...meta({ Name: 'owned' }), guid })
    for (const f of [global, group, owned]) expect(f.GUID).toBe(guid)
    return { ...w, guid, global, group, owned }
  }

  test('owned, then group-shared, then global', async () => {
    const w = await sameGuid()
    const text = async (jwt: string) => new TextDecoder().decode((await download(w.s, jwt, w.guid)).bytes)
    expect(await text(w.member.jwt)).toBe('owned')
    expect((await details(w.s, w.member.jwt, w.guid)).body.Name).toBe('owned')
    // the owner of the group file owns it
    expect(await text(w.owner.jwt)).toBe('group')
    expect(await text(w.stranger.jwt)).toBe('global')
    const other = await w.s.createUser()
    await w.s.call('POST', `/api/users/${other.uid}/group`, { jwt: w.admin, json: { GIDs: [w.gid] } })
    expect(await text(other.jwt)).toBe('group')
    expect(await text(w.admin)).toBe('global')
    // writes follow the same order: the member changes its own file, not the group's
    const patched = await w.s.call('PATCH', `/api/files/${w.guid}`, { jwt: w.member.jwt, json: { Name: 'mine' } })
    expect(patched.body.ThingUUID).toBe(w.owned.ThingUUID)
    // ... and once it is gone, the member reaches the group file, which it may read but not change
    expect((await w.s.call('DELETE', `/api/files/${w.guid}`, { jwt: w.member.jwt })).body).toEqual({})
    expect(await text(w.member.jwt)).toBe('group')
    await refused(w.s, 403, 'PATCH', `/api/files/${w.guid}`, { jwt: w.member.jwt, json: { Name: 'x' } })
    // the stranger reaches the global one and may not change it
    await refused(w.s, 403, 'DELETE', `/api/files/${w.guid}`, { jwt: w.stranger.jwt })
  })

  test('admins with ?admin=true use the ThingUUID for every operation', async () => {
    const w = await sameGuid()
    const q = '?admin=true'
    expect((await details(w.s, w.admin, w.group.ThingUUID, q)).body).toEqual(w.group)
    expect(new TextDecoder().decode((await download(w.s, w.admin, w.owned.ThingUUID, q)).bytes)).toBe('owned')
    // without the flag too; a non-admin's ?admin=true is ignored: the owner reads its file either way
    expect((await details(w.s, w.admin, w.group.ThingUUID)).body).toEqual(w.group)
    expect((await details(w.s, w.owner.jwt, w.group.ThingUUID, q)).body).toEqual(w.group)
    expectError(await details(w.s, w.stranger.jwt, w.group.ThingUUID, q), 404)
    const patched = await w.s.call('PATCH', `/api/files/${w.group.ThingUUID}${q}`, { jwt: w.admin, json: { Desc: 'by admin', Global: true } })
    expect(patched.body).toMatchObject({ ThingUUID: w.group.ThingUUID, UID: w.owner.uid, Desc: 'by admin', Global: true })
    const replaced = await send(w.s, 'PUT', `/api/files/${w.owned.ThingUUID}${q}`, w.admin, 'replaced by admin')
    expect(replaced.body).toMatchObject({ ThingUUID: w.owned.ThingUUID, UID: w.member.uid, Size: 17 })
    const posted = await send(w.s, 'POST', `/api/files/${w.group.ThingUUID}${q}`, w.admin, 'posted')
    expect(posted.body).toMatchObject({ ThingUUID: w.group.ThingUUID, Size: 6 })
    expect((await w.s.call('DELETE', `/api/files/${w.owned.ThingUUID}${q}`, { jwt: w.admin })).body).toEqual({})
    expect(await w.s.store.files.get(w.owned.ThingUUID)).toBeUndefined()
    expect((await w.s.call('GET', '/api/files?admin=true', { jwt: w.admin })).body).toHaveLength(2)
    expect(blobFiles(w.s)).toHaveLength(2)
  })

  test('DELETE accepts the ThingUUID from the owner, without ?admin=true', async () => {
    const w = await sameGuid()
    expect((await w.s.call('DELETE', `/api/files/${w.group.ThingUUID}`, { jwt: w.owner.jwt })).body).toEqual({})
    expect(await w.s.store.files.get(w.group.ThingUUID)).toBeUndefined()
    // the member may read the global file by GUID but not delete anyone's by ThingUUID
    await refused(w.s, 403, 'DELETE', `/api/files/${w.global.ThingUUID}`, { jwt: w.member.jwt })
    await refused(w.s, 404, 'DELETE', `/api/files/${w.owned.ThingUUID}`, { jwt: w.stranger.jwt })
  })
})

describe('ThingUUID on every route, for every caller (docs/api.md "Resources and user files")', () => {
  /** Three files with one GUID, as in sameGuid(), and what the js-client reads back: the record by ThingUUID. */
  async function three() {
    const w = await world()
    const guid = crypto.randomUUID()
    const global = await create(w.s, w.admin, 'global', { ...meta({ Name: 'global', Global: true }), guid })
    const group = await create(w.s, w.owner.jwt, 'group', { ...meta({ Name: 'group', GIDs: [w.gid] }), guid })
    const owned = await create(w.s, w.member.jwt, 'owned', { ...meta({ Name: 'owned' }), guid })
    return { ...w, guid, global, group, owned }
  }

  test('the owner, without ?admin=true: details, contents, PATCH, PUT, POST and DELETE by ThingUUID', async () => {
    const w = await three()
    const id = w.group.ThingUUID
    // what the js-client's getOneFileDetails parses (RawFileMetadata): every record field, lists as arrays
    const d = await details(w.s, w.owner.jwt, id)
    expect(d.status).toBe(200)
    expect(d.body).toEqual(w.group)
    expect(Object.keys(d.body).sort()).toEqual(RECORD_KEYS)
    expect(new TextDecoder().decode((await download(w.s, w.owner.jwt, id)).bytes)).toBe('group')
    const patched = await w.s.call('PATCH', `/api/files/${id}`, { jwt: w.owner.jwt, json: { Name: 'renamed', Desc: null, Labels: ['a'] } })
    expect(patched.body).toMatchObject({ ThingUUID: id, GUID: w.guid, Name: 'renamed', Desc: '', Labels: ['a'] })
    expect((await send(w.s, 'PUT', `/api/files/${id}`, w.owner.jwt, 'put')).body).toMatchObject({ ThingUUID: id, Size: 3 })
    expect((await send(w.s, 'POST', `/api/files/${id}`, w.owner.jwt, 'posted')).body).toMatchObject({ ThingUUID: id, Size: 6 })
    expect((await details(w.s, w.owner.jwt, id)).body).toMatchObject({ Name: 'renamed', Size: 6 })
    // the other two files of that GUID are untouched
    expect((await details(w.s, w.member.jwt, w.owned.ThingUUID)).body).toEqual(w.owned)
    expect((await details(w.s, w.stranger.jwt, w.global.ThingUUID)).body).toEqual(w.global)
    expect((await w.s.call('DELETE', `/api/files/${id}`, { jwt: w.owner.jwt })).body).toEqual({})
    expect(await w.s.store.files.get(id)).toBeUndefined()
    expect(blobFiles(w.s)).toHaveLength(2)
  })

  test('a ThingUUID names exactly that file: a member of the group reads it, not its own file of the same GUID', async () => {
    const w = await three()
    expect((await details(w.s, w.member.jwt, w.group.ThingUUID)).body).toEqual(w.group)
    expect(new TextDecoder().decode((await download(w.s, w.member.jwt, w.group.ThingUUID)).bytes)).toBe('group')
    // ... while the GUID names the member's own
    expect((await details(w.s, w.member.jwt, w.guid)).body).toEqual(w.owned)
    // a file whose GUID is the text of another file's ThingUUID is not what that ThingUUID names
    const decoy = await create(w.s, w.stranger.jwt, 'decoy', { name: 'decoy', guid: w.group.ThingUUID })
    expect(decoy.GUID).toBe(w.group.ThingUUID)
    expect((await details(w.s, w.member.jwt, w.group.ThingUUID)).body).toEqual(w.group)
    expectError(await details(w.s, w.stranger.jwt, w.group.ThingUUID), 404)
    await refused(w.s, 404, 'PATCH', `/api/files/${w.group.ThingUUID}`, { jwt: w.stranger.jwt, json: { Name: 'x' } })
    expect((await details(w.s, w.stranger.jwt, decoy.ThingUUID)).body).toEqual(decoy)
  })

  test('the same read and write rules: readers who may not write 403, others 404, nothing changes', async () => {
    const w = await three()
    for (const [jwt, file, status] of [
      [w.member.jwt, w.group, 403], [w.stranger.jwt, w.global, 403], [w.owner.jwt, w.global, 403],
      [w.stranger.jwt, w.group, 404], [w.stranger.jwt, w.owned, 404], [w.owner.jwt, w.owned, 404],
    ] as const) {
      const read = await details(w.s, jwt, file.ThingUUID)
      if (status === 403) expect(read.body).toEqual(file)
      else expectError(read, 404)
      if (status === 404) expect((await download(w.s, jwt, file.ThingUUID)).status).toBe(404)
      await refused(w.s, status, 'PATCH', `/api/files/${file.ThingUUID}`, { jwt, json: { Name: 'x' } })
      await refused(w.s, status, 'DELETE', `/api/files/${file.ThingUUID}`, { jwt })
      for (const method of ['PUT', 'POST']) {
        const before = storeSnapshot(w.s)
        const blobs = blobFiles(w.s)
        expectError(await send(w.s, method, `/api/files/${file.ThingUUID}`, jwt, 'nope'), status)
        expect(storeSnapshot(w.s)).toEqual(before)
        expect(blobFiles(w.s)).toEqual(blobs)
      }
    }
  })

  test('an API token with UserFileRead reads by ThingUUID; with UserFileWrite changes by it', async () => {
    const w = await three()
    const token = async (capabilities: string[]) =>
      (await w.s.call('POST', '/api/tokens', { jwt: w.owner.jwt, json: { name: 't', capabilities } })).body.token as string
    const reader = await token(['UserFileRead'])
    const read = await w.s.call('GET', `/api/files/${w.group.ThingUUID}/details`, { headers: { 'Service-Token': reader } })
    expect(read.body).toEqual(w.group)
    const before = storeSnapshot(w.s)
    const denied = await w.s.call('PATCH', `/api/files/${w.group.ThingUUID}`, { headers: { 'Service-Token': reader }, json: { Name: 'x' } })
    expectError(denied, 403, { Cap: 'UserFileWrite' })
    expect(storeSnapshot(w.s)).toEqual(before)
    const writer = await token(['UserFileWrite'])
    const patched = await w.s.call('PATCH', `/api/files/${w.group.ThingUUID}`, { headers: { 'Service-Token': writer }, json: { Name: 'by token' } })
    expect(patched.body).toMatchObject({ ThingUUID: w.group.ThingUUID, Name: 'by token' })
  })
})

describe('replacing contents: PUT and POST /api/files/{id}', () => {
  test('new contents, new Type and Size, a fresh blob key; the old blob is deleted; other fields ignored', async () => {
    const { s, owner } = await world()
    const r = await create(s, owner.jwt, 'text first', { name: 'n', desc: 'd' })
    const first = blobFiles(s)
    expect(first).toHaveLength(1)
    let last = r
    for (const [method, data, type] of [['PUT', PNG, 'image/png'], ['POST', new Uint8Array(0), 'empty'], ['PUT', ascii('text again'), TEXT]] as const) {
      s.clock.advance(1000)
      const res = await send(s, method, `/api/files/${r.GUID}`, owner.jwt, data, { name: 'ignored', desc: 'ignored', meta: '{"Name":"ignored"}', guid: crypto.randomUUID() })
      expect({ status: res.status, text: res.text }).toMatchObject({ status: 200 })
      expect(res.body).toEqual({ ...r, Size: data.byteLength, Type: type, Updated: new Date(s.clock.now()).toISOString() })
      expect((await download(s, owner.jwt, r.GUID)).bytes).toEqual(data)
      const now = blobFiles(s)
      expect(now).toHaveLength(1)
      expect(now).not.toEqual(first)
      last = res.body
    }
    expect((await details(s, owner.jwt, r.GUID)).body).toEqual(last)
  })

  test('over maxFileBytes: 413, the old contents stay', async () => {
    const { s, owner } = await world()
    s.config.maxFileBytes = 100
    const r = await create(s, owner.jwt, 'keep me')
    const before = storeSnapshot(s)
    const blobs = blobFiles(s)
    expectError(await send(s, 'PUT', `/api/files/${r.GUID}`, owner.jwt, new Uint8Array(101)), 413)
    expectError(await streamed(s, 'POST', `/api/files/${r.GUID}`, owner.jwt, new Blob([multipartBody(new Uint8Array(500))]).stream()), 413)
    expect(storeSnapshot(s)).toEqual(before)
    expect(blobFiles(s)).toEqual(blobs)
    expect((await download(s, owner.jwt, r.GUID)).bytes).toEqual(ascii('keep me'))
  })

  test('a client abort mid-body leaves the old contents, metadata and no stray blob', async () => {
    const { s, owner } = await world()
    const r = await create(s, owner.jwt, 'version one')
    const before = storeSnapshot(s)
    const blobs = blobFiles(s)
    let sent = 0
    const body = new ReadableStream<Uint8Array>({
      pull(ctl) {
        if (sent === 0) ctl.enqueue(multipartBody(new Uint8Array(0)).subarray(0, -TAIL))
        else if (sent > 512 * 1024) return ctl.error(new Error('connection reset'))
        else ctl.enqueue(new Uint8Array(64 * 1024).fill(7))
        sent += 64 * 1024
      },
    })
    const res = await streamed(s, 'PUT', `/api/files/${r.GUID}`, owner.jwt, body)
    expect(res.status).toBeGreaterThanOrEqual(400)
    expect(res.status).toBeLessThan(500)
    expect(storeSnapshot(s)).toEqual(before)
    expect(blobFiles(s)).toEqual(blobs)
    expect((await details(s, owner.jwt, r.GUID)).body).toEqual(r)
    expect((await download(s, owner.jwt, r.GUID)).bytes).toEqual(ascii('version one'))
  })

  test('an abort mid-body on creation stores nothing', async () => {
    const { s, owner } = await world()
    const before = storeSnapshot(s)
    let sent = 0
    const body = new ReadableStream<Uint8Array>({
      pull(ctl) {
        if (sent === 0) ctl.enqueue(multipartBody(new Uint8Array(0)).subarray(0, -TAIL))
        else if (sent > 256 * 1024) return ctl.error(new Error('connection reset'))
        else ctl.enqueue(new Uint8Array(64 * 1024).fill(1))
        sent += 64 * 1024
      },
    })
    const res = await streamed(s, 'POST', '/api/files', owner.jwt, body)
    expect(res.status).toBe(400)
    expect(storeSnapshot(s)).toEqual(before)
    expect(blobFiles(s)).toEqual([])
  })

  test('a file deleted while its new contents stream: 404 and no stray blob', async () => {
    const { s, owner } = await world()
    const r = await create(s, owner.jwt, 'x')
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    let step = 0
    const body = new ReadableStream<Uint8Array>({
      async pull(ctl) {
        step++
        if (step === 1) ctl.enqueue(multipartBody(new Uint8Array(0)).subarray(0, -TAIL))
        else if (step === 2) ctl.enqueue(new Uint8Array(100_000).fill(3))
        else {
          await gate
          ctl.enqueue(ascii(`\r\n--${BOUNDARY}--\r\n`))
          ctl.close()
        }
      },
    }, { highWaterMark: 0 })
    const pending = streamed(s, 'PUT', `/api/files/${r.GUID}`, owner.jwt, body)
    while (step < 3) await Bun.sleep(5)
    expect((await s.call('DELETE', `/api/files/${r.GUID}`, { jwt: owner.jwt })).status).toBe(200)
    release()
    expectError(await pending, 404)
    expect(blobFiles(s)).toEqual([])
  })
})

describe('a download racing a replace or a delete of the same file', () => {
  test('the blob the row named is deleted before the download opens it: the new contents, or 404, not a 500', async () => {
    const held = heldBodies()
    const s = await createTestServer({}, { blobs: held.blobs })
    try {
      const { owner } = await itemWorld(s)
      const f = await create(s, owner.jwt, 'version one')
      // the download has read the row naming version one's blob when the replace runs
      const replaced = await held.during(
        () => download(s, owner.jwt, f.GUID),
        async () => ({ status: (await send(s, 'POST', `/api/files/${f.GUID}`, owner.jwt, 'version two, longer')).status, blobs: blobFiles(s).length }),
      )
      expect(replaced.changed).toEqual({ status: 200, blobs: 1 }) // version one's blob is gone
      const d = replaced.downloaded
      expect({ status: d.status, text: new TextDecoder().decode(d.bytes), type: d.type }).toEqual({ status: 200, text: 'version two, longer', type: TEXT })

      const deleted = await held.during(
        () => download(s, owner.jwt, f.GUID),
        async () => (await s.call('DELETE', `/api/files/${f.GUID}`, { jwt: owner.jwt })).status,
      )
      expect(deleted.changed).toBe(200)
      expect(deleted.downloaded.status).toBe(404)
    } finally {
      s.close()
    }
  })
})

describe('PATCH /api/files/{id}', () => {
  test('the owner changes Name, Desc, GIDs, Labels; everything else is ignored; answers the record', async () => {
    const { s, owner, gid } = await world()
    const second = await s.createGroup('second', [owner.uid])
    const r = await create(s, owner.jwt, 'x', { name: 'n', desc: 'd' })
    s.clock.advance(5000)
    const res = await s.call('PATCH', `/api/files/${r.GUID}`, {
      jwt: owner.jwt,
      json: { ...r, Name: 'renamed', Desc: 'new', GIDs: [second, gid, gid], Labels: ['x', 'y'], UID: 1, Size: 100, Type: 'image/png', GUID: crypto.randomUUID(), ThingUUID: crypto.randomUUID(), Updated: '2001-01-01T00:00:00Z', Extra: 1 },
    })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ ...r, Name: 'renamed', Desc: 'new', GIDs: [gid, second], Labels: ['x', 'y'], Updated: new Date(s.clock.now()).toISOString() })
    expect((await details(s, owner.jwt, r.GUID)).body).toEqual(res.body)
    // null empties the lists and strings; absent fields keep their value
    const cleared = await s.call('PATCH', `/api/files/${r.GUID}`, { jwt: owner.jwt, json: { GIDs: null, Labels: null, Desc: null } })
    expect(cleared.body).toMatchObject({ GIDs: [], Labels: [], Desc: '', Name: 'renamed' })
    // an empty JSON body changes nothing but Updated
    const empty = await s.call('PATCH', `/api/files/${r.GUID}`, { jwt: owner.jwt, body: '', headers: { 'content-type': 'application/json' } })
    expect(empty.body).toMatchObject({ GIDs: [], Labels: [], Desc: '', Name: 'renamed' })
  })

  test('Global: admins only (a user sending it unchanged is fine, changing it is 403)', async () => {
    const { s, owner } = await world()
    const r = await create(s, owner.jwt)
    await refused(s, 403, 'PATCH', `/api/files/${r.GUID}`, { jwt: owner.jwt, json: { Global: true } })
    expect((await s.call('PATCH', `/api/files/${r.GUID}`, { jwt: owner.jwt, json: { ...r, Name: 'same flag' } })).body).toMatchObject({ Global: false, Name: 'same flag' })
    const g = await s.call('PATCH', `/api/files/${r.GUID}`, { jwt: s.adminJwt, json: { Global: true } })
    expect(g.body).toMatchObject({ Global: true, UID: owner.uid })
    await refused(s, 403, 'PATCH', `/api/files/${r.GUID}`, { jwt: owner.jwt, json: { Global: false } })
    expect((await s.call('PATCH', `/api/files/${r.GUID}`, { jwt: owner.jwt, json: { Global: true, Desc: 'kept global' } })).body).toMatchObject({ Global: true, Desc: 'kept global' })
  })

  test('UID changes only by an admin with ?admin=true', async () => {
    const { s, owner, stranger } = await world()
    const r = await create(s, owner.jwt)
    expect((await s.call('PATCH', `/api/files/${r.GUID}`, { jwt: owner.jwt, json: { UID: stranger.uid } })).body.UID).toBe(owner.uid)
    expect((await s.call('PATCH', `/api/files/${r.GUID}`, { jwt: s.adminJwt, json: { UID: stranger.uid } })).body.UID).toBe(owner.uid)
    await refused(s, 400, 'PATCH', `/api/files/${r.ThingUUID}?admin=true`, { jwt: s.adminJwt, json: { UID: 9999 } })
    const moved = await s.call('PATCH', `/api/files/${r.ThingUUID}?admin=true`, { jwt: s.adminJwt, json: { UID: stranger.uid } })
    expect(moved.body.UID).toBe(stranger.uid)
    // now the stranger's: the former owner no longer sees it
    expectError(await details(s, owner.jwt, r.GUID), 404)
    expect((await details(s, stranger.jwt, r.GUID)).body.UID).toBe(stranger.uid)
  })

  test('bad bodies are 400 and change nothing', async () => {
    const { s, owner } = await world()
    const r = await create(s, owner.jwt)
    for (const json of [
      { Name: 5 }, { Name: 'x'.repeat(257) }, { Desc: 3 }, { Desc: 'x'.repeat(4097) }, { Global: 1 }, { GIDs: [0] }, { GIDs: 'x' },
      { GIDs: [-1] }, { Labels: 'a' }, { Labels: [1] }, { UID: 0 }, { UID: 'x' }, [],
      // ids are JSON numbers: Elysia's integer type took these for [], [5] and 5 (found by the fuzz test)
      { GIDs: '' }, { GIDs: '5' }, { GIDs: ['5'] }, { UID: '2' },
    ])
      await refused(s, 400, 'PATCH', `/api/files/${r.GUID}`, { jwt: owner.jwt, json })
    await refused(s, 400, 'PATCH', `/api/files/${r.GUID}`, { jwt: owner.jwt, body: '{"Name":', headers: { 'content-type': 'application/json' } })
  })
})

describe('DELETE /api/files/{id}', () => {
  test('{} and the blob is gone; a second delete is 404', async () => {
    const { s, owner } = await world()
    const r = await create(s, owner.jwt, 'bye')
    const e = await create(s, owner.jwt, '')
    expect(blobFiles(s)).toHaveLength(2)
    const res = await s.call('DELETE', `/api/files/${r.GUID}`, { jwt: owner.jwt })
    expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: {} })
    expect(blobFiles(s)).toHaveLength(1)
    expectError(await details(s, owner.jwt, r.GUID), 404)
    await refused(s, 404, 'DELETE', `/api/files/${r.GUID}`, { jwt: owner.jwt })
    expect((await s.call('DELETE', `/api/files/${e.ThingUUID}`, { jwt: owner.jwt })).body).toEqual({})
    expect(blobFiles(s)).toEqual([])
  })

  test('admins delete anyone\'s by GUID too', async () => {
    const { s, owner } = await world()
    const r = await create(s, owner.jwt)
    expect((await s.call('DELETE', `/api/files/${r.GUID}`, { jwt: s.adminJwt })).body).toEqual({})
    expect(blobFiles(s)).toEqual([])
  })
})

describe('paths', () => {
  test('routes also answer with a trailing slash', async () => {
    const { s, owner } = await world()
    const r = await create(s, owner.jwt)
    expect((await s.call('GET', '/api/files/', { jwt: owner.jwt })).status).toBe(200)
    expect((await s.call('GET', `/api/files/${r.GUID}/details/`, { jwt: owner.jwt })).status).toBe(200)
    expect((await s.call('GET', `/api/files/${r.GUID}/`, { jwt: owner.jwt })).status).toBe(200)
  })
})

// --- the same upload path against the S3 blob store (test/run.sh starts the server; never skipped)
describeWithServers('user files on the S3 blob store', () => {
  test('create, replace, abort, 413 and delete leave exactly the live objects', async () => {
    const s3 = testS3()
    if (!s3) throw new Error(MISSING_S3)
    const prefix = `f-${crypto.randomUUID()}/`
    const blobs = await createS3BlobStore({ ...s3.config, prefix })
    const s = await createTestServer({ maxFileBytes: 6 * MiB }, { blobs: async () => blobs })
    try {
      const req = (method: string, path: string, init: RequestInit = {}) => s.app.handle(new Request(`http://localhost${path}`, { method, ...init }))
      const auth = { authorization: `Bearer ${s.adminJwt}` }
      const keys = async () => {
        const out: string[] = []
        for await (const e of blobs.list()) out.push(e.key)
        return out.sort()
      }
      const upload = (method: string, path: string, body: ReadableStream<Uint8Array>) =>
        req(method, path, { body, headers: { ...auth, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` }, duplex: 'half' } as RequestInit)
      const data = Uint8Array.from({ length: 5 * MiB + 1 }, (_, i) => (i * 13) & 255)
      const created = await upload('POST', '/api/files', new Blob([multipartBody(data)]).stream())
      expect(created.status).toBe(200)
      const r = (await created.json()) as { GUID: string; Size: number; Type: string }
      expect(r).toMatchObject({ Size: data.byteLength, Type: 'application/octet-stream' })
      const get = async () => new Uint8Array(await (await req('GET', `/api/files/${r.GUID}`, { headers: auth })).arrayBuffer())
      expect(Buffer.from(await get()).equals(Buffer.from(data))).toBe(true)
      const first = await keys()
      expect(first).toHaveLength(1)

      let sent = 0
      const aborting = new ReadableStream<Uint8Array>({
        pull(ctl) {
          if (sent === 0) ctl.enqueue(multipartBody(new Uint8Array(0)).subarray(0, -TAIL))
          else if (sent > 5 * MiB) return ctl.error(new Error('connection reset'))
          else ctl.enqueue(new Uint8Array(256 * 1024).fill(1))
          sent += 256 * 1024
        },
      })
      expect((await upload('PUT', `/api/files/${r.GUID}`, aborting)).status).toBe(400)
      expect((await upload('PUT', `/api/files/${r.GUID}`, new Blob([multipartBody(new Uint8Array(7 * MiB))]).stream())).status).toBe(413)
      expect((await upload('POST', '/api/files', new Blob([multipartBody(new Uint8Array(7 * MiB))]).stream())).status).toBe(413)
      expect(await keys()).toEqual(first)
      expect(await s3.incompleteUploads(prefix)).toEqual([])

      const replaced = await upload('POST', `/api/files/${r.GUID}`, new Blob([multipartBody(PNG)]).stream())
      expect(await replaced.json()).toMatchObject({ Size: PNG.byteLength, Type: 'image/png' })
      expect(await get()).toEqual(PNG)
      const second = await keys()
      expect(second).toHaveLength(1)
      expect(second).not.toEqual(first)
      expect((await req('DELETE', `/api/files/${r.GUID}`, { headers: auth })).status).toBe(200)
      expect(await keys()).toEqual([])
    } finally {
      for await (const e of blobs.list()) await blobs.delete(e.key)
      s.close()
    }
  }, 60_000)
})
