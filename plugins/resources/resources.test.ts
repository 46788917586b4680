// Resources over HTTP (docs/api.md "Resources and user files", "Conventions", "API
// tokens", "Sharing items with groups"). The route × caller matrix in test/security.test.ts covers anonymous callers
// and tokens on every route; this file covers the rules of the resource API itself, through the real app with a disk
// blob store.
import { describe, expect, test } from 'bun:test'
import { createS3BlobStore } from '../../server/blob'
import { type CallResult, type TestServer, blobFiles, createTestServer, expectError, heldBodies, itemWorld, refused, serverPerTest, storeSnapshot } from '../../test/helpers'
import { MISSING_S3, testS3 } from '../../test/s3'
import { describeWithServers } from '../../test/services'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d+Z$/
const METADATA_KEYS = ['Description', 'Domain', 'GUID', 'Global', 'GroupACL', 'Hash', 'Labels', 'LastModified', 'ResourceName', 'Size', 'Synced', 'UID', 'VersionNumber'].sort()
const MiB = 1024 * 1024
const BOUNDARY = 'quarry-test-boundary-7d1f'

const setup = serverPerTest()

const sha1 = (data: Uint8Array) => new Bun.CryptoHasher('sha1').update(data).digest('base64')
const ascii = (s: string) => new TextEncoder().encode(s)

const world = async () => itemWorld(await setup())

async function create(s: TestServer, jwt: string, body: Record<string, unknown> = {}) {
  const res = await s.call('POST', '/api/resources', { jwt, json: { ResourceName: 'res', Description: 'a resource', ...body } })
  expect({ status: res.status, text: res.text }).toMatchObject({ status: 200 })
  return res.body as Record<string, any> & { GUID: string }
}

/** A multipart body with one `file` part (and whatever else `before`/`after` add). */
function multipartBody(data: Uint8Array, name = 'file'): Uint8Array {
  const head = ascii(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"; filename="blob.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`)
  const tail = ascii(`\r\n--${BOUNDARY}--\r\n`)
  return Buffer.concat([head, data, tail])
}

/** PUT /raw with a FormData body built the way browsers and fetch do it. */
async function upload(s: TestServer, jwt: string, guid: string, data: Uint8Array | string, query = '') {
  const fd = new FormData()
  fd.append('file', new Blob([data]), 'contents.bin')
  return s.handle(new Request(`http://localhost/api/resources/${guid}/raw${query}`, { method: 'PUT', body: fd, headers: { authorization: `Bearer ${jwt}` } }))
}

/** PUT /raw with a body streamed from `chunks` (a generator), without Content-Length. */
function streamingUpload(s: TestServer, jwt: string, guid: string, body: ReadableStream<Uint8Array>) {
  return s.handle(
    new Request(`http://localhost/api/resources/${guid}/raw`, {
      method: 'PUT',
      body,
      headers: { authorization: `Bearer ${jwt}`, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
      duplex: 'half',
    }),
  )
}

async function download(s: TestServer, jwt: string, guid: string): Promise<{ status: number; bytes: Uint8Array; type: string | null }> {
  const res = await s.app.handle(new Request(`http://localhost/api/resources/${guid}/raw`, { headers: { authorization: `Bearer ${jwt}` } }))
  return { status: res.status, bytes: new Uint8Array(await res.arrayBuffer()), type: res.headers.get('content-type') }
}

describe('POST /api/resources', () => {
  test('creates an empty resource owned by the caller', async () => {
    const { s, owner, gid } = await world()
    const before = s.clock.now()
    const r = await create(s, owner.jwt, { GroupACL: [gid], ResourceName: 'lookup', Description: 'a table' })
    expect(Object.keys(r).sort()).toEqual(METADATA_KEYS)
    expect(r).toMatchObject({
      UID: owner.uid, VersionNumber: 0, Size: 0, Hash: '', Global: false, ResourceName: 'lookup', Description: 'a table',
      GroupACL: [gid], Synced: false, Domain: 0, Labels: [],
    })
    expect(r.GUID).toMatch(UUID)
    expect(r.LastModified).toMatch(ISO)
    expect(Date.parse(r.LastModified)).toBe(before)
    // a later GET answers the same
    expect((await s.call('GET', `/api/resources/${r.GUID}`, { jwt: owner.jwt })).body).toEqual(r)
  })

  test('GroupACL null or absent is [], Description absent or null is ""', async () => {
    const { s, owner } = await world()
    const a = await create(s, owner.jwt, { GroupACL: null, Description: null })
    expect(a.GroupACL).toEqual([])
    expect(a.Description).toBe('')
    const res = await s.call('POST', '/api/resources', { jwt: owner.jwt, json: { ResourceName: 'bare' } })
    expect(res.body).toMatchObject({ GroupACL: [], Description: '', Global: false })
  })

  test('Global only by admins: 403 and nothing created for a user', async () => {
    const { s, owner } = await world()
    await refused(s, 403, 'POST', '/api/resources', { jwt: owner.jwt, json: { ResourceName: 'g', Global: true } })
    const g = await create(s, s.adminJwt, { Global: true })
    expect(g.Global).toBe(true)
  })

  test('an admin\'s token acts as a user: Global refused', async () => {
    const { s } = await world()
    const tok = await s.call('POST', '/api/tokens', { jwt: s.adminJwt, json: { name: 't', capabilities: ['ResourceWrite', 'ResourceRead'] } })
    await refused(s, 403, 'POST', '/api/resources', { headers: { 'Service-Token': tok.body.token }, json: { ResourceName: 'g', Global: true } })
  })

  test('bad bodies are 400 and create nothing', async () => {
    const { s, owner } = await world()
    for (const json of [
      {},
      { ResourceName: '' },
      { ResourceName: '   ' },
      { ResourceName: 5 },
      { ResourceName: 'x', GroupACL: [0] },
      { ResourceName: 'x', GroupACL: [-3] },
      { ResourceName: 'x', GroupACL: ['a'] },
      { ResourceName: 'x', GroupACL: 4 },
      // ids are JSON numbers: Elysia's integer type took these for [] and [5] (found by the fuzz test)
      { ResourceName: 'x', GroupACL: '' },
      { ResourceName: 'x', GroupACL: '5' },
      { ResourceName: 'x', GroupACL: ['5'] },
      { ResourceName: 'x', Global: 'yes' },
      { ResourceName: 'x', Description: 7 },
      [],
    ])
      await refused(s, 400, 'POST', '/api/resources', { jwt: owner.jwt, json })
    await refused(s, 400, 'POST', '/api/resources', { jwt: owner.jwt, body: '{"ResourceName":', headers: { 'content-type': 'application/json' } })
    await refused(s, 401, 'POST', '/api/resources', { json: { ResourceName: 'x' } })
  })
})

describe('visibility', () => {
  async function items() {
    const w = await world()
    const own = await create(w.s, w.owner.jwt, { ResourceName: 'own' })
    const shared = await create(w.s, w.owner.jwt, { ResourceName: 'shared', GroupACL: [w.gid] })
    const global = await create(w.s, w.admin, { ResourceName: 'global', Global: true })
    const adminsOwn = await create(w.s, w.admin, { ResourceName: 'admin-only' })
    return { ...w, own, shared, global, adminsOwn }
  }
  const names = (res: CallResult) => (res.body as { ResourceName: string }[]).map((r) => r.ResourceName).sort()

  test('GET /api/resources lists own, group-shared and global', async () => {
    const w = await items()
    expect(names(await w.s.call('GET', '/api/resources', { jwt: w.owner.jwt }))).toEqual(['global', 'own', 'shared'])
    expect(names(await w.s.call('GET', '/api/resources', { jwt: w.member.jwt }))).toEqual(['global', 'shared'])
    expect(names(await w.s.call('GET', '/api/resources', { jwt: w.stranger.jwt }))).toEqual(['global'])
    // ?admin=true from a non-admin is ignored
    expect(names(await w.s.call('GET', '/api/resources?admin=true', { jwt: w.stranger.jwt }))).toEqual(['global'])
    expect(names(await w.s.call('GET', '/api/resources', { jwt: w.admin }))).toEqual(['admin-only', 'global'])
    expect(names(await w.s.call('GET', '/api/resources?admin=true', { jwt: w.admin }))).toEqual(['admin-only', 'global', 'own', 'shared'])
    const fresh = await w.s.createUser()
    expect((await w.s.call('GET', '/api/resources', { jwt: fresh.jwt })).body).toHaveLength(1)
  })

  test('an admin\'s token gets the normal user view', async () => {
    const w = await items()
    const tok = await w.s.call('POST', '/api/tokens', { jwt: w.admin, json: { name: 't', capabilities: ['ResourceRead', 'ResourceWrite'] } })
    const headers = { 'Service-Token': tok.body.token as string }
    expect(names(await w.s.call('GET', '/api/resources?admin=true', { headers }))).toEqual(['admin-only', 'global'])
    expectError(await w.s.call('GET', `/api/resources/${w.own.GUID}?admin=true`, { headers }), 404)
    await refused(w.s, 404, 'DELETE', `/api/resources/${w.own.GUID}`, { headers })
  })

  test('GET /api/resources/{guid}: readers 200, others 404', async () => {
    const w = await items()
    const get = (jwt: string, guid: string, q = '') => w.s.call('GET', `/api/resources/${guid}${q}`, { jwt })
    expect((await get(w.owner.jwt, w.own.GUID)).body).toEqual(w.own)
    expectError(await get(w.member.jwt, w.own.GUID), 404)
    expect((await get(w.member.jwt, w.shared.GUID)).status).toBe(200)
    expectError(await get(w.stranger.jwt, w.shared.GUID), 404)
    expect((await get(w.stranger.jwt, w.global.GUID)).status).toBe(200)
    // admins address any resource, with or without ?admin=true
    expect((await get(w.admin, w.own.GUID)).status).toBe(200)
    expect((await get(w.admin, w.own.GUID, '?admin=true')).status).toBe(200)
    // the GUID in any case
    expect((await get(w.owner.jwt, w.own.GUID.toUpperCase())).body.GUID).toBe(w.own.GUID)
  })

  test('bad GUIDs are 400, unknown ones 404', async () => {
    const w = await items()
    for (const bad of ['nope', '1234', `${w.own.GUID}x`, w.own.GUID.replaceAll('-', '')]) {
      expectError(await w.s.call('GET', `/api/resources/${bad}`, { jwt: w.owner.jwt }), 400)
      expectError(await w.s.call('GET', `/api/resources/${bad}/raw`, { jwt: w.owner.jwt }), 400)
      await refused(w.s, 400, 'DELETE', `/api/resources/${bad}`, { jwt: w.owner.jwt })
      await refused(w.s, 400, 'PUT', `/api/resources/${bad}`, { jwt: w.owner.jwt, json: { ResourceName: 'x' } })
    }
    const unknown = crypto.randomUUID()
    expectError(await w.s.call('GET', `/api/resources/${unknown}`, { jwt: w.admin }), 404)
    expectError(await w.s.call('GET', `/api/resources/${unknown}/contenttype`, { jwt: w.admin }), 404)
    await refused(w.s, 404, 'DELETE', `/api/resources/${unknown}`, { jwt: w.admin })
    await refused(w.s, 404, 'POST', `/api/resources/${unknown}/clone`, { jwt: w.admin, json: { Name: 'c' } })
    expectError(await upload(w.s, w.admin, unknown, 'x'), 404)
  })

  test('a deleted group leaves every GroupACL (and its members lose access)', async () => {
    const w = await items()
    const other = await w.s.createGroup('other', [w.member.uid])
    const r = await create(w.s, w.owner.jwt, { GroupACL: [w.gid] })
    // groups the owner is not in (or that do not exist) only by an admin (docs/api.md "Sharing items with groups")
    expect((await w.s.call('PUT', `/api/resources/${r.GUID}`, { jwt: w.admin, json: { GroupACL: [w.gid, other, 4242] } })).status).toBe(200)
    const del = await w.s.call('DELETE', `/api/groups/${w.gid}`, { jwt: w.admin })
    expect(del.status).toBe(200)
    expect((await w.s.call('GET', `/api/resources/${r.GUID}`, { jwt: w.owner.jwt })).body.GroupACL).toEqual([other, 4242])
    expect((await w.s.call('GET', `/api/resources/${w.shared.GUID}`, { jwt: w.owner.jwt })).body.GroupACL).toEqual([])
    expectError(await w.s.call('GET', `/api/resources/${w.shared.GUID}`, { jwt: w.member.jwt }), 404)
    // the trigger works below the API too
    await w.s.store.groups.delete(other)
    expect((await w.s.store.resources.get(r.GUID))!.gids).toEqual([4242])
  })

  test('a GID of a group created later grants access once it exists', async () => {
    const w = await items()
    const r = await create(w.s, w.owner.jwt)
    // a group that does not exist yet only by an admin (docs/api.md "Sharing items with groups")
    expect((await w.s.call('PUT', `/api/resources/${r.GUID}`, { jwt: w.admin, json: { GroupACL: [w.gid + 1] } })).status).toBe(200)
    expectError(await w.s.call('GET', `/api/resources/${r.GUID}`, { jwt: w.stranger.jwt }), 404)
    const gid = await w.s.createGroup('later', [w.stranger.uid])
    expect(gid).toBe(w.gid + 1)
    expect((await w.s.call('GET', `/api/resources/${r.GUID}`, { jwt: w.stranger.jwt })).status).toBe(200)
  })

  test('deleting the owner deletes their resources', async () => {
    const w = await items()
    expect((await w.s.call('DELETE', `/api/users/${w.owner.uid}`, { jwt: w.admin })).status).toBe(200)
    expect(await w.s.store.resources.get(w.own.GUID)).toBeUndefined()
    expect(await w.s.store.resources.get(w.global.GUID)).toBeDefined()
  })
})

describe('PUT /api/resources/{guid}', () => {
  test('the owner changes GroupACL, ResourceName, Description; everything else is ignored', async () => {
    const { s, owner, gid } = await world()
    const second = await s.createGroup('second', [owner.uid])
    const r = await create(s, owner.jwt)
    s.clock.advance(5000)
    const res = await s.call('PUT', `/api/resources/${r.GUID}`, {
      jwt: owner.jwt,
      json: { ...r, ResourceName: 'renamed', Description: 'new', GroupACL: [second, gid, gid], Global: true, UID: 1, VersionNumber: 9, Size: 100, Hash: 'x', GUID: crypto.randomUUID(), Extra: 1 },
    })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ ...r, ResourceName: 'renamed', Description: 'new', GroupACL: [gid, second], LastModified: new Date(s.clock.now()).toISOString() })
    expect((await s.call('GET', `/api/resources/${r.GUID}`, { jwt: owner.jwt })).body).toEqual(res.body)
    // GroupACL null empties the list; absent fields keep their value
    const cleared = await s.call('PUT', `/api/resources/${r.GUID}`, { jwt: owner.jwt, json: { GroupACL: null } })
    expect(cleared.body).toMatchObject({ GroupACL: [], ResourceName: 'renamed', Description: 'new' })
  })

  test('admins also change Global; any admin may change any resource', async () => {
    const { s, owner, stranger } = await world()
    const r = await create(s, owner.jwt)
    const res = await s.call('PUT', `/api/resources/${r.GUID}`, { jwt: s.adminJwt, json: { ...r, Global: true } })
    expect(res.body).toMatchObject({ Global: true, UID: owner.uid })
    // now a global resource: a stranger reads it but may not change it
    expect((await s.call('GET', `/api/resources/${r.GUID}`, { jwt: stranger.jwt })).status).toBe(200)
    await refused(s, 403, 'PUT', `/api/resources/${r.GUID}`, { jwt: stranger.jwt, json: { ResourceName: 'mine' } })
    // the owner (not an admin) cannot take the flag back
    const back = await s.call('PUT', `/api/resources/${r.GUID}`, { jwt: owner.jwt, json: { ...r, Global: false } })
    expect(back.body.Global).toBe(true)
  })

  test('a group member gets 403, a stranger 404; bad bodies 400; nothing changes', async () => {
    const { s, owner, member, stranger, gid } = await world()
    const r = await create(s, owner.jwt, { GroupACL: [gid] })
    await refused(s, 403, 'PUT', `/api/resources/${r.GUID}`, { jwt: member.jwt, json: { ResourceName: 'x' } })
    await refused(s, 404, 'PUT', `/api/resources/${r.GUID}`, { jwt: stranger.jwt, json: { ResourceName: 'x' } })
    for (const json of [{ ResourceName: ' \t ' }, { ResourceName: 5 }, { GroupACL: [0] }, { GroupACL: 'x' }, { Description: 3 }, { Global: 1 }])
      await refused(s, 400, 'PUT', `/api/resources/${r.GUID}`, { jwt: owner.jwt, json })
    // an empty or null name keeps the name (null strings are empty ones, docs/api.md "Conventions")
    for (const ResourceName of ['', null])
      expect((await s.call('PUT', `/api/resources/${r.GUID}`, { jwt: owner.jwt, json: { ResourceName } })).body.ResourceName).toBe(r.ResourceName)
  })
})

describe('contents', () => {
  test('empty, binary and text uploads round-trip; Hash is SHA-1 base64; VersionNumber increments', async () => {
    const { s, owner, member, stranger, gid } = await world()
    const r = await create(s, owner.jwt, { GroupACL: [gid] })
    const empty = await download(s, owner.jwt, r.GUID)
    expect(empty).toEqual({ status: 200, bytes: new Uint8Array(0), type: 'application/octet-stream' })

    const all = Uint8Array.from({ length: 1024 }, (_, i) => i % 256)
    let version = 0
    for (const data of [all, new Uint8Array(0), ascii('hello, world\n'), all.slice().reverse()]) {
      s.clock.advance(1000)
      const res = await upload(s, owner.jwt, r.GUID, data)
      expect({ status: res.status, text: res.text }).toMatchObject({ status: 200 })
      version++
      expect(res.body).toEqual({
        ...r, VersionNumber: version, Size: data.byteLength, Hash: sha1(data), LastModified: new Date(s.clock.now()).toISOString(),
      })
      for (const jwt of [owner.jwt, member.jwt, s.adminJwt]) {
        const got = await download(s, jwt, r.GUID)
        expect(got.status).toBe(200)
        expect(got.type).toBe('application/octet-stream')
        expect(Buffer.from(got.bytes).equals(Buffer.from(data))).toBe(true)
      }
      expectError(await s.call('GET', `/api/resources/${r.GUID}/raw`, { jwt: stranger.jwt }), 404)
      // one blob per resource: the old version is gone
      expect(blobFiles(s)).toHaveLength(1)
    }
    expect(sha1(new Uint8Array(0))).toBe('2jmj7l5rSw0yVb/vlWAYkK/YBwk=')
  })

  test('downloads accept the 3-second download token, as header or cookie', async () => {
    const { s, owner } = await world()
    const r = await create(s, owner.jwt)
    await upload(s, owner.jwt, r.GUID, 'contents')
    const tmp = (await s.call('GET', '/api/login/tmptoken', { jwt: owner.jwt })).body.JWT as string
    expect((await download(s, tmp, r.GUID)).bytes).toEqual(ascii('contents'))
    const viaCookie = await s.app.handle(new Request(`http://localhost/api/resources/${r.GUID}/raw`, { headers: { cookie: `token=${tmp}` } }))
    expect(await viaCookie.text()).toBe('contents')
    // but nothing else
    expectError(await s.call('GET', `/api/resources/${r.GUID}`, { jwt: tmp }), 401)
    expectError(await upload(s, tmp, r.GUID, 'x'), 401)
    s.clock.advance(3001)
    expectError(await s.call('GET', `/api/resources/${r.GUID}/raw`, { jwt: tmp }), 401)
  })

  test('over HTTP the download names no file (Bun would name the blob store\'s file) and has the exact length', async () => {
    const { s, owner } = await world()
    const r = await create(s, owner.jwt)
    await upload(s, owner.jwt, r.GUID, 'contents')
    s.app.listen({ hostname: '127.0.0.1', port: 0 })
    try {
      const res = await fetch(`http://127.0.0.1:${s.app.server!.port}/api/resources/${r.GUID}/raw`, { headers: { authorization: `Bearer ${owner.jwt}` } })
      expect(await res.text()).toBe('contents')
      expect([res.headers.get('content-disposition'), res.headers.get('content-length'), res.headers.get('content-type')]).toEqual(['attachment', '8', 'application/octet-stream'])
    } finally {
      await s.app.stop(true)
    }
  })

  test('only the owner and admins upload: member 403, stranger 404, nothing stored', async () => {
    const { s, owner, member, stranger, gid } = await world()
    const r = await create(s, owner.jwt, { GroupACL: [gid] })
    for (const [jwt, status] of [[member.jwt, 403], [stranger.jwt, 404]] as const) {
      const before = storeSnapshot(s)
      expectError(await upload(s, jwt, r.GUID, 'nope'), status)
      expect(storeSnapshot(s)).toEqual(before)
    }
    expect(blobFiles(s)).toEqual([])
    const byAdmin = await upload(s, s.adminJwt, r.GUID, 'by admin')
    expect(byAdmin.body).toMatchObject({ UID: owner.uid, VersionNumber: 1, Size: 8 })
  })

  test('a multi-megabyte upload is streamed into the blob store, not buffered', async () => {
    const { s, owner } = await world()
    const r = await create(s, owner.jwt)
    const total = 8 * MiB
    const chunk = 64 * 1024
    const hasher = new Bun.CryptoHasher('sha1')
    let pulled = 0
    let stored = 0
    let maxLead = 0
    let pulledWhenStoreSawFirstBytes = -1
    // Watch what reaches the blob store: if the server buffered the upload (formData), the store would see its
    // first byte only after the whole body had been pulled from the client.
    const realPut = s.blobs.put.bind(s.blobs)
    s.blobs.put = (key, stream, opts) => {
      const watched = stream.pipeThrough(
        new TransformStream<Uint8Array, Uint8Array>({
          transform(c, ctl) {
            if (pulledWhenStoreSawFirstBytes < 0) pulledWhenStoreSawFirstBytes = pulled
            stored += c.byteLength
            ctl.enqueue(c)
          },
        }),
      )
      return realPut(key, watched, opts)
    }
    const head = multipartBody(new Uint8Array(0)).subarray(0, -(`\r\n--${BOUNDARY}--\r\n`.length))
    let sent = -1
    const body = new ReadableStream<Uint8Array>({
      pull(ctl) {
        if (sent < 0) {
          ctl.enqueue(head)
          sent = 0
          return
        }
        if (sent >= total) {
          ctl.enqueue(ascii(`\r\n--${BOUNDARY}--\r\n`))
          ctl.close()
          return
        }
        const c = new Uint8Array(chunk)
        for (let i = 0; i < chunk; i += 4096) c[i] = (sent / chunk + i) & 0xff
        hasher.update(c)
        sent += chunk
        pulled += chunk
        maxLead = Math.max(maxLead, pulled - stored)
        ctl.enqueue(c)
      },
    })
    const res = await streamingUpload(s, owner.jwt, r.GUID, body)
    expect({ status: res.status, text: res.text }).toMatchObject({ status: 200 })
    expect(res.body).toMatchObject({ Size: total, Hash: hasher.digest('base64'), VersionNumber: 1 })
    expect(pulledWhenStoreSawFirstBytes).toBeGreaterThanOrEqual(0)
    expect(pulledWhenStoreSawFirstBytes).toBeLessThan(total / 2)
    // Memory: the server never holds more than a bounded window of the upload (what the client has been asked
    // for but the store has not yet received), whatever the upload's size. Cheaper and steadier than RSS.
    expect(maxLead).toBeLessThan(2 * MiB)
    const got = await download(s, owner.jwt, r.GUID)
    expect(got.bytes.byteLength).toBe(total)
    expect(sha1(got.bytes)).toBe(res.body.Hash)
  })

  test('over maxResourceBytes: 413 by Content-Length before reading, and while streaming; nothing stored', async () => {
    const { s, owner } = await world()
    s.config.maxResourceBytes = 1000
    const r = await create(s, owner.jwt)
    await upload(s, owner.jwt, r.GUID, 'old contents')
    const files = blobFiles(s)
    const before = storeSnapshot(s)
    // exactly at the limit is fine
    const atLimit = await upload(s, owner.jwt, r.GUID, new Uint8Array(1000))
    expect(atLimit.body).toMatchObject({ Size: 1000, VersionNumber: 2 })
    await upload(s, owner.jwt, r.GUID, 'old contents')
    const after = storeSnapshot(s)
    expect(blobFiles(s)).toHaveLength(1)

    // a declared length far over the limit is refused before the body is read
    let read = false
    const never = new ReadableStream<Uint8Array>({
      pull() {
        read = true
        throw new Error('the body must not be read')
      },
    }, { highWaterMark: 0 })
    const declared = await s.handle(
      new Request(`http://localhost/api/resources/${r.GUID}/raw`, {
        method: 'PUT',
        body: never,
        headers: { authorization: `Bearer ${owner.jwt}`, 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, 'content-length': String(10 * MiB) },
        duplex: 'half',
      }),
    )
    expectError(declared, 413)
    expect(read).toBe(false)

    // no length declared: the limit stops the stream
    expectError(await streamingUpload(s, owner.jwt, r.GUID, new Blob([multipartBody(new Uint8Array(5000))]).stream()), 413)
    expectError(await upload(s, owner.jwt, r.GUID, new Uint8Array(1001)), 413)
    const snap = storeSnapshot(s)
    expect(snap).toEqual(after)
    expect(blobFiles(s)).toHaveLength(1)
    expect((await download(s, owner.jwt, r.GUID)).bytes).toEqual(ascii('old contents'))
    expect(files).toHaveLength(1)
    expect(before).not.toEqual(after)
  })

  test('malformed uploads are 400 and leave the previous contents', async () => {
    const { s, owner } = await world()
    const r = await create(s, owner.jwt)
    await upload(s, owner.jwt, r.GUID, 'keep me')
    const files = blobFiles(s)
    const raw = (body: string | Uint8Array, type: string) =>
      s.handle(new Request(`http://localhost/api/resources/${r.GUID}/raw`, { method: 'PUT', body, headers: { authorization: `Bearer ${owner.jwt}`, 'content-type': type } }))
    const noFile = new FormData()
    noFile.append('other', 'text')
    noFile.append('files', new Blob(['x']), 'x.bin')
    const cases: [string, () => Promise<CallResult>][] = [
      ['no file part', () => s.handle(new Request(`http://localhost/api/resources/${r.GUID}/raw`, { method: 'PUT', body: noFile, headers: { authorization: `Bearer ${owner.jwt}` } }))],
      ['JSON', () => raw('{"file":"x"}', 'application/json')],
      ['plain bytes', () => raw('contents', 'application/octet-stream')],
      ['no body', () => raw('', `multipart/form-data; boundary=${BOUNDARY}`)],
      ['no boundary', () => raw(multipartBody(ascii('x')), 'multipart/form-data')],
      ['wrong boundary', () => raw(multipartBody(ascii('x')), 'multipart/form-data; boundary=other')],
      ['no closing boundary', () => raw(multipartBody(ascii('truncated')).subarray(0, -8), `multipart/form-data; boundary=${BOUNDARY}`)],
      ['cut in the part headers', () => raw(ascii(`--${BOUNDARY}\r\nContent-Disposition: form-da`), `multipart/form-data; boundary=${BOUNDARY}`)],
    ]
    for (const [name, send] of cases) {
      const before = storeSnapshot(s)
      const res = await send()
      expect({ name, status: res.status }).toEqual({ name, status: 400 })
      expectError(res, 400)
      expect(storeSnapshot(s)).toEqual(before)
      expect(blobFiles(s)).toEqual(files)
    }
    expect((await download(s, owner.jwt, r.GUID)).bytes).toEqual(ascii('keep me'))
  })

  test('a client abort mid-body leaves the previous contents, metadata and no stray blob', async () => {
    const { s, owner } = await world()
    const r = await create(s, owner.jwt)
    const v1 = (await upload(s, owner.jwt, r.GUID, 'version one')).body
    const files = blobFiles(s)
    const before = storeSnapshot(s)
    let sent = 0
    const body = new ReadableStream<Uint8Array>({
      pull(ctl) {
        if (sent === 0) ctl.enqueue(multipartBody(new Uint8Array(0)).subarray(0, -(`\r\n--${BOUNDARY}--\r\n`.length)))
        else if (sent > 512 * 1024) {
          ctl.error(new Error('connection reset'))
          return
        } else ctl.enqueue(new Uint8Array(64 * 1024).fill(7))
        sent += 64 * 1024
      },
    })
    const res = await streamingUpload(s, owner.jwt, r.GUID, body)
    expect(res.status).toBeGreaterThanOrEqual(400)
    expect(res.status).toBeLessThan(500)
    expect(storeSnapshot(s)).toEqual(before)
    expect(blobFiles(s)).toEqual(files)
    expect((await s.call('GET', `/api/resources/${r.GUID}`, { jwt: owner.jwt })).body).toEqual(v1)
    expect((await download(s, owner.jwt, r.GUID)).bytes).toEqual(ascii('version one'))
  })

  test('concurrent uploads: both land in turn, one blob remains', async () => {
    const { s, owner } = await world()
    const r = await create(s, owner.jwt)
    const [a, b] = await Promise.all([upload(s, owner.jwt, r.GUID, 'aaaa'), upload(s, owner.jwt, r.GUID, 'bbbbbb')])
    expect([a.status, b.status]).toEqual([200, 200])
    expect([a.body.VersionNumber, b.body.VersionNumber].sort()).toEqual([1, 2])
    const last = a.body.VersionNumber === 2 ? a.body : b.body
    expect((await s.call('GET', `/api/resources/${r.GUID}`, { jwt: owner.jwt })).body).toEqual(last)
    expect(blobFiles(s)).toHaveLength(1)
  })

  test('a resource deleted while its upload streams: 404 and no stray blob', async () => {
    const { s, owner } = await world()
    const r = await create(s, owner.jwt)
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    let step = 0
    const body = new ReadableStream<Uint8Array>({
      async pull(ctl) {
        step++
        if (step === 1) ctl.enqueue(multipartBody(new Uint8Array(0)).subarray(0, -(`\r\n--${BOUNDARY}--\r\n`.length)))
        else if (step === 2) ctl.enqueue(new Uint8Array(100_000).fill(3))
        else {
          await gate
          ctl.enqueue(ascii(`\r\n--${BOUNDARY}--\r\n`))
          ctl.close()
        }
      },
    }, { highWaterMark: 0 })
    const pending = streamingUpload(s, owner.jwt, r.GUID, body)
    while (step < 3) await Bun.sleep(5)
    expect((await s.call('DELETE', `/api/resources/${r.GUID}`, { jwt: owner.jwt })).status).toBe(200)
    release()
    expectError(await pending, 404)
    expect(blobFiles(s)).toEqual([])
  })

  test('a part named file without a filename is the contents too', async () => {
    const { s, owner } = await world()
    const r = await create(s, owner.jwt)
    const body = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"\r\n\r\nno filename\r\n--${BOUNDARY}--\r\n`
    const res = await s.call('PUT', `/api/resources/${r.GUID}/raw`, { jwt: owner.jwt, body, headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` } })
    expect(res.body).toMatchObject({ Size: 11, Hash: sha1(ascii('no filename')) })
  })

  test('extra parts are ignored; the first part named file wins', async () => {
    const { s, owner } = await world()
    const r = await create(s, owner.jwt)
    const fd = new FormData()
    fd.append('note', 'hello')
    fd.append('file', new Blob(['first']), 'a')
    fd.append('file', new Blob(['second']), 'b')
    const res = await s.handle(new Request(`http://localhost/api/resources/${r.GUID}/raw`, { method: 'PUT', body: fd, headers: { authorization: `Bearer ${owner.jwt}` } }))
    expect(res.body).toMatchObject({ Size: 5, Hash: sha1(ascii('first')) })
    expect((await download(s, owner.jwt, r.GUID)).bytes).toEqual(ascii('first'))
  })
})

describe('GET /api/resources/{guid}/contenttype', () => {
  const PNG = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, ...ascii('IHDR')]

  test('answers {ContentType, Body} with the leading bytes; bytes under 128 fall back to 512; capped at 1 MiB', async () => {
    const { s, owner, member, stranger, gid } = await world()
    const r = await create(s, owner.jwt, { GroupACL: [gid] })
    const ct = (q = '', jwt = owner.jwt) => s.call('GET', `/api/resources/${r.GUID}/contenttype${q}`, { jwt })
    expect((await ct()).body).toEqual({ ContentType: 'text/plain; charset=utf-8', Body: '' })

    const data = new Uint8Array(3000)
    data.set(PNG)
    for (let i = PNG.length; i < data.length; i++) data[i] = i & 0xff
    await upload(s, owner.jwt, r.GUID, data)
    const body = (res: CallResult) => new Uint8Array(Buffer.from(res.body.Body as string, 'base64'))
    const def = await ct()
    expect(Object.keys(def.body).sort()).toEqual(['Body', 'ContentType'])
    expect(def.body.ContentType).toBe('image/png')
    expect(body(def)).toEqual(data.subarray(0, 512))
    for (const q of ['?bytes=10', '?bytes=127', '?bytes=0', '?bytes=-5']) expect(body(await ct(q))).toEqual(data.subarray(0, 512))
    expect(body(await ct('?bytes=128'))).toEqual(data.subarray(0, 128))
    expect(body(await ct('?bytes=2000'))).toEqual(data.subarray(0, 2000))
    expect(body(await ct('?bytes=100000'))).toEqual(data)
    expect((await ct('', member.jwt)).body.ContentType).toBe('image/png')
    expect((await ct('', s.adminJwt)).body.ContentType).toBe('image/png')
    expectError(await ct('', stranger.jwt), 404)
    expectError(await ct('?bytes=abc'), 400)

    await upload(s, owner.jwt, r.GUID, new Uint8Array(MiB + 10).fill(0x61))
    const big = await ct('?bytes=99999999')
    expect(body(big).byteLength).toBe(MiB)
    expect(big.body.ContentType).toBe('text/plain; charset=utf-8')
  })
})

describe('DELETE /api/resources/{guid}', () => {
  test('the owner deletes: {} and the blob is gone', async () => {
    const { s, owner } = await world()
    const r = await create(s, owner.jwt)
    await upload(s, owner.jwt, r.GUID, 'bye')
    expect(blobFiles(s)).toHaveLength(1)
    const res = await s.call('DELETE', `/api/resources/${r.GUID}`, { jwt: owner.jwt })
    expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: {} })
    expect(blobFiles(s)).toEqual([])
    expectError(await s.call('GET', `/api/resources/${r.GUID}`, { jwt: owner.jwt }), 404)
    await refused(s, 404, 'DELETE', `/api/resources/${r.GUID}`, { jwt: owner.jwt })
    // an empty resource has no blob to delete
    const e = await create(s, owner.jwt)
    expect((await s.call('DELETE', `/api/resources/${e.GUID}`, { jwt: owner.jwt })).body).toEqual({})
  })

  test('member 403, stranger 404, admin deletes any (with or without ?admin=true)', async () => {
    const { s, owner, member, stranger, gid } = await world()
    const a = await create(s, owner.jwt, { GroupACL: [gid] })
    const g = await create(s, s.adminJwt, { Global: true })
    await refused(s, 403, 'DELETE', `/api/resources/${a.GUID}`, { jwt: member.jwt })
    await refused(s, 404, 'DELETE', `/api/resources/${a.GUID}`, { jwt: stranger.jwt })
    await refused(s, 403, 'DELETE', `/api/resources/${g.GUID}`, { jwt: stranger.jwt })
    expect((await s.call('DELETE', `/api/resources/${a.GUID}?admin=true`, { jwt: s.adminJwt })).status).toBe(200)
    const b = await create(s, owner.jwt)
    expect((await s.call('DELETE', `/api/resources/${b.GUID}`, { jwt: s.adminJwt })).status).toBe(200)
  })
})

describe('POST /api/resources/{guid}/clone', () => {
  test('a reader clones: new GUID, owned by the caller, contents copied, Domain and Labels present', async () => {
    const { s, owner, member, gid } = await world()
    const r = await create(s, owner.jwt, { GroupACL: [gid], Description: 'original' })
    await upload(s, owner.jwt, r.GUID, 'shared contents')
    s.clock.advance(1000)
    const res = await s.call('POST', `/api/resources/${r.GUID}/clone`, { jwt: member.jwt, json: { Name: 'my copy' } })
    expect(res.status).toBe(200)
    const c = res.body
    expect(Object.keys(c).sort()).toEqual(METADATA_KEYS)
    expect(c.GUID).toMatch(UUID)
    expect(c.GUID).not.toBe(r.GUID)
    expect(c).toMatchObject({
      UID: member.uid, ResourceName: 'my copy', Description: 'original', Size: 15, Hash: sha1(ascii('shared contents')),
      GroupACL: [], Global: false, Domain: 0, Labels: [], LastModified: new Date(s.clock.now()).toISOString(),
    })
    expect((await download(s, member.jwt, c.GUID)).bytes).toEqual(ascii('shared contents'))
    expect(blobFiles(s)).toHaveLength(2)
    // the copies are independent
    await s.call('DELETE', `/api/resources/${r.GUID}`, { jwt: owner.jwt })
    expect((await download(s, member.jwt, c.GUID)).bytes).toEqual(ascii('shared contents'))
    expect(blobFiles(s)).toHaveLength(1)
    // an empty resource clones to an empty one
    const e = await create(s, owner.jwt)
    const ec = await s.call('POST', `/api/resources/${e.GUID}/clone`, { jwt: owner.jwt, json: { Name: 'empty copy' } })
    expect(ec.body).toMatchObject({ Size: 0, Hash: '', UID: owner.uid })
    expect((await download(s, owner.jwt, ec.body.GUID)).bytes).toEqual(new Uint8Array(0))
  })

  test('a global resource can be cloned by anyone; an unreadable one is 404; bad bodies 400', async () => {
    const { s, owner, stranger } = await world()
    const g = await create(s, s.adminJwt, { Global: true })
    expect((await s.call('POST', `/api/resources/${g.GUID}/clone`, { jwt: stranger.jwt, json: { Name: 'c' } })).body).toMatchObject({ UID: stranger.uid, Global: false })
    const own = await create(s, owner.jwt)
    await refused(s, 404, 'POST', `/api/resources/${own.GUID}/clone`, { jwt: stranger.jwt, json: { Name: 'c' } })
    for (const json of [{}, { Name: '' }, { Name: 3 }, { name: 'c' }])
      await refused(s, 400, 'POST', `/api/resources/${own.GUID}/clone`, { jwt: owner.jwt, json })
  })
})

describe('a download racing a replace or a delete of the same resource', () => {
  test('the blob the row named is deleted before the download opens it: the new contents, or 404, not a 500', async () => {
    // bench/load.sh: 4 clients per user upload to and download from the same resources.
    const held = heldBodies()
    const s = await createTestServer({}, { blobs: held.blobs })
    try {
      const { owner } = await itemWorld(s)
      const r = await create(s, owner.jwt)
      expect((await upload(s, owner.jwt, r.GUID, 'version one')).status).toBe(200)
      // the download has read the row naming version one's blob when the upload runs
      const replaced = await held.during(
        () => download(s, owner.jwt, r.GUID),
        async () => ({ status: (await upload(s, owner.jwt, r.GUID, 'version two, longer')).status, blobs: blobFiles(s).length }),
      )
      expect(replaced.changed).toEqual({ status: 200, blobs: 1 }) // version one's blob is gone
      const d = replaced.downloaded
      expect({ status: d.status, text: new TextDecoder().decode(d.bytes) }).toEqual({ status: 200, text: 'version two, longer' })

      const deleted = await held.during(
        () => download(s, owner.jwt, r.GUID),
        async () => (await s.call('DELETE', `/api/resources/${r.GUID}`, { jwt: owner.jwt })).status,
      )
      expect(deleted.changed).toBe(200)
      expect(deleted.downloaded.status).toBe(404)
    } finally {
      s.close()
    }
  })
})

describe('paths', () => {
  test('routes also answer with a trailing slash', async () => {
    const { s, owner } = await world()
    const r = await create(s, owner.jwt)
    expect((await s.call('GET', '/api/resources/', { jwt: owner.jwt })).status).toBe(200)
    expect((await s.call('GET', `/api/resources/${r.GUID}/`, { jwt: owner.jwt })).status).toBe(200)
  })
})

// --- the same upload path against the S3 blob store (test/run.sh starts the server; like blob.test.ts, never skipped)
describeWithServers('resources on the S3 blob store', () => {
  test('upload, download, abort, 413, clone and delete', async () => {
    const s3 = testS3()
    if (!s3) throw new Error(MISSING_S3)
    const prefix = `r-${crypto.randomUUID()}/`
    const blobs = await createS3BlobStore({ ...s3.config, prefix })
    /** Multipart uploads a failed put left behind on the server. */
    const incomplete = () => s3.incompleteUploads(prefix)
    const s = await createTestServer({ maxResourceBytes: 12 * MiB }, { blobs: async () => blobs })
    try {
      const req = async (method: string, path: string, init: RequestInit = {}) => s.app.handle(new Request(`http://localhost${path}`, { method, ...init }))
      const auth = { authorization: `Bearer ${s.adminJwt}` }
      const keys = async () => {
        const out: string[] = []
        for await (const e of blobs.list()) out.push(e.key)
        return out.sort()
      }
      const r = (await (await req('POST', '/api/resources', { body: JSON.stringify({ ResourceName: 's3' }), headers: { ...auth, 'content-type': 'application/json' } })).json()) as { GUID: string }
      const put = (body: ReadableStream<Uint8Array> | FormData) =>
        req('PUT', `/api/resources/${r.GUID}/raw`, {
          body,
          headers: body instanceof FormData ? auth : { ...auth, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
          duplex: 'half',
        } as RequestInit)
      const get = async (guid = r.GUID) => new Uint8Array(await (await req('GET', `/api/resources/${guid}/raw`, { headers: auth })).arrayBuffer())

      // 7 MiB: more than one part of an S3 multipart upload
      const data = Uint8Array.from({ length: 7 * MiB }, (_, i) => (i * 31 + (i >> 12)) & 255)
      const up = await put(new Blob([multipartBody(data)]).stream())
      expect(up.status).toBe(200)
      const meta = (await up.json()) as Record<string, unknown>
      expect(meta).toMatchObject({ Size: data.byteLength, Hash: sha1(data), VersionNumber: 1 })
      expect(sha1(await get())).toBe(sha1(data))
      expect(await keys()).toHaveLength(1)
      const before = await keys()

      // a client abort and an oversized body both leave the first version and nothing else
      let sent = 0
      const aborting = new ReadableStream<Uint8Array>({
        pull(ctl) {
          if (sent === 0) ctl.enqueue(multipartBody(new Uint8Array(0)).subarray(0, -(`\r\n--${BOUNDARY}--\r\n`.length)))
          else if (sent > 6 * MiB) return ctl.error(new Error('connection reset'))
          else ctl.enqueue(new Uint8Array(256 * 1024).fill(1))
          sent += 256 * 1024
        },
      })
      expect((await put(aborting)).status).toBe(400)
      expect((await put(new Blob([multipartBody(new Uint8Array(13 * MiB))]).stream())).status).toBe(413)
      expect(await keys()).toEqual(before)
      expect(await incomplete()).toEqual([])
      expect(sha1(await get())).toBe(sha1(data))
      expect(((await (await req('GET', `/api/resources/${r.GUID}`, { headers: auth })).json()) as Record<string, unknown>)).toEqual(meta)

      // clone copies server-side; delete removes each object
      const clone = (await (await req('POST', `/api/resources/${r.GUID}/clone`, { body: JSON.stringify({ Name: 'c' }), headers: { ...auth, 'content-type': 'application/json' } })).json()) as { GUID: string }
      expect(sha1(await get(clone.GUID))).toBe(sha1(data))
      expect(await keys()).toHaveLength(2)
      for (const guid of [r.GUID, clone.GUID]) expect((await req('DELETE', `/api/resources/${guid}`, { headers: auth })).status).toBe(200)
      expect(await keys()).toEqual([])
    } finally {
      for await (const e of blobs.list()) await blobs.delete(e.key)
      s.close()
    }
  }, 60_000)
})
