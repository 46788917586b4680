// Issue 12 point 7: no request multiplies stored bytes. Per-user storage quotas (QUARRY_USER_QUOTA, server/store/quota.ts)
// over resources, user files, clones, saved and imported searches, computed from the store; imports bounded
// relative to their own size; the import's group checked before the archive is read.
import { afterEach, describe, expect, test } from 'bun:test'
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import tar from 'tar-stream'
import { createApp } from '../server/app'
import type { Config } from '../server/runtime/config'
import { createLogger } from '../server/runtime/log'
import { writeSearchArchive } from '../server/search/archive'
import { ZERO_TIME } from '../server/runtime/time'
import { type CallResult, type TestServer, blobFiles, createTestServer, expectError, storeSnapshot } from './helpers'

const KiB = 1024
const servers: TestServer[] = []
afterEach(() => {
  for (const s of servers.splice(0)) s.close()
})

async function setup(config: Partial<Config> = {}) {
  const s = await createTestServer(config, { search: { chunk: 4, stepMs: 0 } })
  servers.push(s)
  const alice = await s.createUser()
  const bob = await s.createUser()
  return { s, alice, bob }
}

/** Every trace a refused request must not leave: store rows, blobs (temporary files included), search working files. */
function traces(s: TestServer) {
  const dir = join(s.dir, 'searches')
  return { store: storeSnapshot(s), blobs: blobFiles(s), work: existsSync(dir) ? readdirSync(dir).sort() : [] }
}

/** A 413 naming the quota, and nothing changed anywhere. */
async function overQuota(s: TestServer, act: () => Promise<CallResult>) {
  const before = traces(s)
  const res = await act()
  expectError(res, 413)
  expect(res.body.Error).toContain('quota')
  expect(res.body.Error).toContain('QUARRY_USER_QUOTA')
  expect(traces(s)).toEqual(before)
  return res
}

const usage = (s: TestServer, uid: number) => s.store.quota.usage(uid)

/** A multipart body: the text fields in order, the file part at `filePosition` among them (default: last). */
async function multipart(file: Uint8Array, fields: Record<string, string> = {}, fileFirst = false) {
  const f = new FormData()
  if (fileFirst) f.append('file', new Blob([file]), 'upload.bin')
  for (const [name, value] of Object.entries(fields)) f.append(name, value)
  if (!fileFirst) f.append('file', new Blob([file]), 'upload.bin')
  const res = new Response(f)
  const type = res.headers.get('content-type')! // read before the body: Bun drops it afterwards
  return { bytes: new Uint8Array(await res.arrayBuffer()), type }
}

const bytesOf = (n: number, fill = 0x61) => new Uint8Array(n).fill(fill)

async function upload(s: TestServer, method: string, path: string, jwt: string, file: Uint8Array, fields: Record<string, string> = {}, fileFirst = false) {
  const body = await multipart(file, fields, fileFirst)
  return s.call(method, path, { jwt, body: body.bytes, headers: { 'content-type': body.type } })
}

async function newResource(s: TestServer, jwt: string, name = 'r'): Promise<string> {
  const res = await s.call('POST', '/api/resources', { jwt, json: { ResourceName: name, Description: '', GroupACL: [], Global: false } })
  expect(res.status).toBe(200)
  return res.body.GUID
}

/**
 * A body that hands out `bytes` in 16 KiB chunks and counts what the server pulled; `holdBefore`: the last chunk is
 * held back until `release()` (so two uploads can both be in flight at once).
 */
function countedBody(bytes: Uint8Array, holdBefore?: number) {
  let pulled = 0
  let release!: () => void
  const released = new Promise<void>((resolve) => (release = resolve))
  let reachedHold!: () => void
  const held = new Promise<void>((resolve) => (reachedHold = resolve))
  const stream = new ReadableStream<Uint8Array>(
    {
      async pull(ctl) {
        if (holdBefore !== undefined && pulled >= holdBefore) {
          reachedHold()
          await released
        }
        if (pulled >= bytes.length) return ctl.close()
        const end = Math.min(bytes.length, pulled + 16 * KiB, holdBefore !== undefined && pulled < holdBefore ? holdBefore : bytes.length)
        ctl.enqueue(bytes.slice(pulled, end))
        pulled = end
      },
    },
    { highWaterMark: 0 },
  )
  return { stream, pulled: () => pulled, release, held }
}

async function send(s: TestServer, method: string, path: string, jwt: string, body: ReadableStream<Uint8Array>, type: string): Promise<CallResult> {
  return s.handle(new Request(`http://localhost${path}`, { method, body, headers: { authorization: `Bearer ${jwt}`, 'content-type': type }, duplex: 'half' } as RequestInit))
}

// ---- search archives

const description = {
  Format: 'quarry-search-archive', Version: 1, UserQuery: 'tag=x', EffectiveQuery: 'tag=x',
  StartRange: ZERO_TIME, EndRange: ZERO_TIME, Started: ZERO_TIME, Finished: ZERO_TIME,
}

/** A complete, valid archive of the given NDJSON text (one chunk), built by hand as `tar czf -9` would. */
async function archiveOf(ndjson: string): Promise<Uint8Array> {
  const body = Buffer.from(ndjson)
  const lines = ndjson.split('\n').length - 1
  const end = { Records: lines, Bytes: body.length, SHA256: new Bun.CryptoHasher('sha256').update(body).digest('hex') }
  const pack = tar.pack()
  const chunks: Buffer[] = []
  const done = (async () => {
    for await (const chunk of pack) chunks.push(chunk as Buffer)
  })()
  for (const [name, data] of [['search.json', Buffer.from(JSON.stringify(description))], ['results/000001.ndjson', body], ['end.json', Buffer.from(JSON.stringify(end))]] as const)
    await new Promise<void>((resolve, reject) => pack.entry({ name }, data, (e) => (e ? reject(e) : resolve())))
  pack.finalize()
  await done
  return new Uint8Array(gzipSync(Buffer.concat(chunks), { level: 9 }))
}

/** NDJSON that gzip shrinks about a thousandfold: `n` identical records of about 1 KiB. */
const compressible = (n: number) => `{"Data":"${'a'.repeat(1000)}"}\n`.repeat(n)

/** An archive of `n` records of random (incompressible) data, about 1.4 KiB each once stored. */
const randomArchive = async (n: number) =>
  new Uint8Array(
    await new Response(
      writeSearchArchive(description, Array.from({ length: n }, () => ({ Data: Buffer.from(crypto.getRandomValues(new Uint8Array(1024))).toString('base64') }))),
    ).arrayBuffer(),
  )

const importPath = '/api/searchctrl/import'

describe('import amplification', () => {
  test('an archive that expands past 64 times its size is refused with 400 and leaves nothing behind', async () => {
    const { s, alice } = await setup()
    // 8,000 records of 1 KiB: about 8 MiB to store from an archive of a few KiB (the 31 KB stored 110 MB).
    const bomb = await archiveOf(compressible(8000))
    expect(bomb.length).toBeLessThan(64 * KiB)
    const before = traces(s)
    const res = await upload(s, 'POST', importPath, alice.jwt, bomb)
    expectError(res, 400)
    expect(res.body.Error).toContain('64 times its compressed size')
    expect(traces(s)).toEqual(before)
    expect(await usage(s, alice.uid)).toBe(0)
  })

  test('the bound is relative to what was uploaded: the same records, less compressible, are accepted', async () => {
    const { s, alice } = await setup()
    // 1,000 records: under the floor of 1 MiB whatever the ratio; accepted and counted.
    const small = await upload(s, 'POST', importPath, alice.jwt, await archiveOf(compressible(1000)))
    expect({ status: small.status, text: small.text.slice(0, 200) }).toMatchObject({ status: 200 })
    expect(await usage(s, alice.uid)).toBe(small.body.StoreSize + small.body.IndexSize)
    // Random records do not compress: 3 MiB stored from about 3 MiB uploaded.
    const plain = await upload(s, 'POST', importPath, alice.jwt, await randomArchive(2000))
    expect(plain.status).toBe(200)
    expect(plain.body.ItemCount).toBe(2000)
  })

  test('the absolute cap (16 x QUARRY_MAX_IMPORT_SIZE) holds even within the ratio', async () => {
    const { s, alice } = await setup({ maxImportBytes: 64 * KiB })
    const res = await upload(s, 'POST', importPath, alice.jwt, await archiveOf(compressible(1500)))
    expectError(res, 400)
    expect(res.body.Error).toContain(`limit of ${16 * 64 * KiB} bytes`)
    expect(traces(s).work).toEqual([])
  })
})

describe('import to a group the importer is not in', () => {
  /** A large valid-looking body: the file part is 8 MiB of archive that is never meant to be read. */
  async function setupForeign() {
    const w = await setup()
    const foreign = await w.s.createGroup('foreign', [w.bob.uid])
    return { ...w, foreign }
  }
  const big = bytesOf(8 * 1024 * KiB, 0x1f) // starts like gzip's magic, but is not an archive

  test('a GID in the query is refused with 403 before the body is read', async () => {
    const { s, alice, foreign } = await setupForeign()
    const form = await multipart(big)
    const body = countedBody(form.bytes)
    const before = traces(s)
    const res = await send(s, 'POST', `${importPath}?GID=${foreign}`, alice.jwt, body.stream, form.type)
    expectError(res, 403)
    expect(body.pulled()).toBeLessThan(64 * KiB)
    expect(traces(s)).toEqual(before)
  })

  test('a GID field before the file part is refused with 403 before the file is read', async () => {
    const { s, alice, foreign } = await setupForeign()
    const form = await multipart(big, { GID: String(foreign) })
    const body = countedBody(form.bytes)
    const before = traces(s)
    const res = await send(s, 'POST', importPath, alice.jwt, body.stream, form.type)
    expectError(res, 403)
    expect(body.pulled()).toBeLessThan(256 * KiB)
    expect(traces(s)).toEqual(before)
  })

  test('a GID field after the file part: the archive is not read (garbage answers 403, not 400), nothing is left', async () => {
    const { s, alice, foreign } = await setupForeign()
    const garbage = crypto.getRandomValues(new Uint8Array(32 * KiB))
    const own = await s.createGroup('own', [alice.uid])
    const before = traces(s)
    const res = await upload(s, 'POST', importPath, alice.jwt, garbage, { GID: String(foreign) }, true)
    expectError(res, 403)
    expect(traces(s)).toEqual(before)
    // The same garbage for her own group is read, and refused as an archive.
    expectError(await upload(s, 'POST', importPath, alice.jwt, garbage, { GID: String(own) }, true), 400)
    expect(traces(s)).toEqual(before)
  })

  test('GID in the query works for members and admins; a query and a field that disagree are 400', async () => {
    const { s, alice, bob, foreign } = await setupForeign()
    const archive = await archiveOf(compressible(10))
    const mine = await upload(s, 'POST', `${importPath}?GID=${foreign}`, bob.jwt, archive)
    expect({ status: mine.status, gids: mine.body.GIDs }).toEqual({ status: 200, gids: [foreign] })
    const byAdmin = await upload(s, 'POST', `${importPath}?GID=424242`, s.adminJwt, archive)
    expect(byAdmin.body.GIDs).toEqual([424242])
    const before = traces(s)
    expectError(await upload(s, 'POST', `${importPath}?GID=${foreign}`, bob.jwt, archive, { GID: '0' }), 400)
    expect(traces(s)).toEqual(before)
    expectError(await upload(s, 'POST', `${importPath}?GID=x`, alice.jwt, archive), 400)
  })
})

describe('storage quotas', () => {
  test('resource upload and replace: over the quota is 413 naming it, nothing changed; the new size minus the old counts', async () => {
    const { s, alice } = await setup({ userQuotaBytes: 100 * KiB })
    const a = await newResource(s, alice.jwt, 'a')
    expect((await upload(s, 'PUT', `/api/resources/${a}/raw`, alice.jwt, bytesOf(60 * KiB))).status).toBe(200)
    const b = await newResource(s, alice.jwt, 'b')
    await overQuota(s, () => upload(s, 'PUT', `/api/resources/${b}/raw`, alice.jwt, bytesOf(50 * KiB)))
    // Replacing a's 60 KiB with 100 KiB adds 40: exactly the quota.
    expect((await upload(s, 'PUT', `/api/resources/${a}/raw`, alice.jwt, bytesOf(100 * KiB))).status).toBe(200)
    expect(await usage(s, alice.uid)).toBe(100 * KiB)
    await overQuota(s, () => upload(s, 'PUT', `/api/resources/${a}/raw`, alice.jwt, bytesOf(100 * KiB + 1)))
    await overQuota(s, () => upload(s, 'PUT', `/api/resources/${b}/raw`, alice.jwt, bytesOf(1)))
    // An empty upload and a smaller replacement are always fine.
    expect((await upload(s, 'PUT', `/api/resources/${b}/raw`, alice.jwt, bytesOf(0))).status).toBe(200)
    expect((await upload(s, 'PUT', `/api/resources/${a}/raw`, alice.jwt, bytesOf(10 * KiB))).status).toBe(200)
    expect(await usage(s, alice.uid)).toBe(10 * KiB)
  })

  test('a user over the quota (it was lowered) may still shrink, not grow', async () => {
    const { s, alice } = await setup({ userQuotaBytes: 100 * KiB })
    const a = await newResource(s, alice.jwt)
    expect((await upload(s, 'PUT', `/api/resources/${a}/raw`, alice.jwt, bytesOf(90 * KiB))).status).toBe(200)
    s.config.userQuotaBytes = 50 * KiB
    await overQuota(s, () => upload(s, 'PUT', `/api/resources/${a}/raw`, alice.jwt, bytesOf(91 * KiB)))
    expect((await upload(s, 'PUT', `/api/resources/${a}/raw`, alice.jwt, bytesOf(80 * KiB))).status).toBe(200)
  })

  test('clone: refused before anything is copied when the copy would not fit', async () => {
    const { s, alice, bob } = await setup({ userQuotaBytes: 100 * KiB })
    const a = await newResource(s, alice.jwt)
    expect((await upload(s, 'PUT', `/api/resources/${a}/raw`, alice.jwt, bytesOf(60 * KiB))).status).toBe(200)
    await overQuota(s, () => s.call('POST', `/api/resources/${a}/clone`, { jwt: alice.jwt, json: { Name: 'copy' } }))
    // Shared with bob's group, the clone is bob's and counts against bob's quota, which has room.
    const g = await s.createGroup('g', [bob.uid])
    const shared = await s.call('PUT', `/api/resources/${a}`, { jwt: s.adminJwt, json: { GroupACL: [g] } })
    expect(shared.status).toBe(200)
    const clone = await s.call('POST', `/api/resources/${a}/clone`, { jwt: bob.jwt, json: { Name: 'copy' } })
    expect(clone.status).toBe(200)
    expect(await usage(s, bob.uid)).toBe(60 * KiB)
    await overQuota(s, () => s.call('POST', `/api/resources/${a}/clone`, { jwt: bob.jwt, json: { Name: 'copy 2' } }))
  })

  test('user files: create and replace over the quota are 413; replace counts the difference', async () => {
    const { s, alice } = await setup({ userQuotaBytes: 100 * KiB })
    const first = await upload(s, 'POST', '/api/files', alice.jwt, bytesOf(70 * KiB), { name: 'one' })
    expect(first.status).toBe(200)
    await overQuota(s, () => upload(s, 'POST', '/api/files', alice.jwt, bytesOf(40 * KiB), { name: 'two' }))
    expect((await upload(s, 'PUT', `/api/files/${first.body.GUID}`, alice.jwt, bytesOf(100 * KiB))).status).toBe(200)
    await overQuota(s, () => upload(s, 'POST', `/api/files/${first.body.GUID}`, alice.jwt, bytesOf(101 * KiB)))
    // An admin creating a file for alice is held to alice's quota, checked with the row.
    const meta = JSON.stringify({ UID: alice.uid, Name: 'from admin', GIDs: [], Global: false, Desc: '', Labels: [] })
    await overQuota(s, () => upload(s, 'POST', '/api/files', s.adminJwt, bytesOf(10 * KiB), { meta }))
  })

  test('resources, files and saved searches count together; admins are counted but never refused', async () => {
    const { s, alice } = await setup({ userQuotaBytes: 100 * KiB })
    expect((await upload(s, 'POST', '/api/files', alice.jwt, bytesOf(50 * KiB), { name: 'f' })).status).toBe(200)
    const r = await newResource(s, alice.jwt)
    expect((await upload(s, 'PUT', `/api/resources/${r}/raw`, alice.jwt, bytesOf(30 * KiB))).status).toBe(200)
    const imported = await upload(s, 'POST', importPath, alice.jwt, await randomArchive(30)) // about 42 KiB stored
    expectError(imported, 413)
    expect(imported.body.Error).toContain('QUARRY_USER_QUOTA')
    expect(traces(s).work).toEqual([])
    expect(await usage(s, alice.uid)).toBe(80 * KiB)
    const admin = await newResource(s, s.adminJwt)
    expect((await upload(s, 'PUT', `/api/resources/${admin}/raw`, s.adminJwt, bytesOf(300 * KiB))).status).toBe(200)
    expect((await upload(s, 'POST', importPath, s.adminJwt, await randomArchive(100))).status).toBe(200)
    expect(await usage(s, 1)).toBeGreaterThan(400 * KiB)
  })

  test('import: refused with 413 whether the archive is read at once or spooled first; nothing is left', async () => {
    const { s, alice } = await setup({ userQuotaBytes: 64 * KiB })
    const archive = await randomArchive(60) // about 80 KiB compressed, more stored
    await overQuota(s, () => upload(s, 'POST', importPath, alice.jwt, archive, { GID: '0' }))
    await overQuota(s, () => upload(s, 'POST', importPath, alice.jwt, archive, { BatchName: 'x' }, true))
    const fits = await upload(s, 'POST', importPath, alice.jwt, await randomArchive(20))
    expect(fits.status).toBe(200)
    expect(await usage(s, alice.uid)).toBe(fits.body.StoreSize + fits.body.IndexSize)
  })

  test('two parallel uploads, each under the remaining quota, do not together exceed it', async () => {
    const { s, alice } = await setup({ userQuotaBytes: 100 * KiB })
    const a = await newResource(s, alice.jwt, 'a')
    const b = await newResource(s, alice.jwt, 'b')
    const forms = [await multipart(bytesOf(60 * KiB)), await multipart(bytesOf(60 * KiB, 0x62))]
    // Both bodies stop 1 KiB before their end until both uploads are in flight (past every check made before the commit).
    const bodies = forms.map((f) => countedBody(f.bytes, f.bytes.length - KiB))
    const answers = [
      send(s, 'PUT', `/api/resources/${a}/raw`, alice.jwt, bodies[0]!.stream, forms[0]!.type),
      send(s, 'PUT', `/api/resources/${b}/raw`, alice.jwt, bodies[1]!.stream, forms[1]!.type),
    ]
    await Promise.all(bodies.map((body) => body.held))
    for (const body of bodies) body.release()
    const statuses = (await Promise.all(answers)).map((r) => r.status).sort()
    expect(statuses).toEqual([200, 413])
    expect(await usage(s, alice.uid)).toBe(60 * KiB)
    // Only the blob of the upload that was kept remains.
    expect(blobFiles(s).filter((p) => !p.startsWith('tmp'))).toHaveLength(1)
  })

  test('usage comes from the store: a second app on the same store (another replica) sees it at once', async () => {
    const { s, alice } = await setup({ userQuotaBytes: 100 * KiB })
    const other = await createApp({ config: s.config, store: s.store, blobs: s.blobs, log: createLogger('error', () => {}) })
    const a = await newResource(s, alice.jwt)
    expect((await upload(s, 'PUT', `/api/resources/${a}/raw`, alice.jwt, bytesOf(80 * KiB))).status).toBe(200)
    const form = await multipart(bytesOf(30 * KiB))
    const res = await other.app.handle(
      new Request('http://localhost/api/files', { method: 'POST', body: form.bytes, headers: { authorization: `Bearer ${alice.jwt}`, 'content-type': form.type } }),
    )
    expect(res.status).toBe(413)
    await other.searches.close()
  })
})

describe('saving a search against the quota', () => {
  const T0 = Date.parse('2026-01-01T00:00:00Z')
  /** `n` entries of about 1 KiB each (their results are about 1.4 KiB each). */
  async function ingest(s: TestServer, n: number, from = 0) {
    const entries = Array.from({ length: n }, (_, i) => ({
      TS: new Date(T0 + (from + i) * 1000).toISOString(),
      Tag: 'web',
      Data: Buffer.from(`${from + i} ${'x'.repeat(1000)}`).toString('base64'),
    }))
    expect((await s.call('POST', '/api/ingest/json', { jwt: s.adminJwt, json: entries })).status).toBe(200)
  }
  async function launch(s: TestServer, jwt: string, query: string) {
    const res = await s.call('POST', '/api/searchctrl/launch', { jwt, json: { SearchString: query, SearchEnd: new Date(T0 + 10_000_000).toISOString() } })
    expect(res.status).toBe(200)
    return res.body.SearchID as string
  }
  const details = async (s: TestServer, jwt: string, id: string) => (await s.call('GET', `/api/searchctrl/${id}/details`, { jwt })).body

  test('a search whose results already exceed the quota: save refused with 413, nothing changed', async () => {
    const { s, alice } = await setup({ userQuotaBytes: 64 * KiB })
    await ingest(s, 100)
    const id = await launch(s, alice.jwt, 'tag=web')
    await s.searches.settled()
    const before = { ...traces(s), details: await details(s, alice.jwt, id) }
    const res = await s.call('PATCH', `/api/searchctrl/${id}/save`, { jwt: alice.jwt, json: { note: 'n' } })
    expectError(res, 413)
    expect(res.body.Error).toContain('QUARRY_USER_QUOTA')
    expect({ ...traces(s), details: await details(s, alice.jwt, id) }).toEqual(before)
    // A search that fits is saved and then counts.
    const small = await launch(s, alice.jwt, 'tag=web | limit 10')
    await s.searches.settled()
    expect((await s.call('PATCH', `/api/searchctrl/${small}/save`, { jwt: alice.jwt })).status).toBe(200)
    await s.call('PUT', `/api/searchctrl/${small}/detach`, { jwt: alice.jwt })
    await s.searches.settled()
    const saved = await details(s, alice.jwt, small)
    expect(saved.State).toBe('DORMANT/SAVED')
    expect(await usage(s, alice.uid)).toBe(saved.StoreSize + saved.IndexSize)
  })

  test('a search that grows past the quota after the save was accepted ends in ERROR when moved; nothing is stored', async () => {
    const { s, alice } = await setup({ userQuotaBytes: 64 * KiB })
    await ingest(s, 100)
    // Saved while its results are still under the quota (none yet: its first read of the store is held until the
    // save is accepted, which a loaded machine would otherwise not guarantee); it then grows to about 140 KiB.
    const entries = s.store.entries
    const scan = entries.scan
    let release!: () => void
    const held = new Promise<void>((r) => (release = r))
    entries.scan = async (...args) => (await held, scan.apply(entries, args))
    const id = await launch(s, alice.jwt, 'tag=web')
    const save = await s.call('PATCH', `/api/searchctrl/${id}/save`, { jwt: alice.jwt })
    release()
    entries.scan = scan
    expect(save.status).toBe(200)
    await s.call('PUT', `/api/searchctrl/${id}/detach`, { jwt: alice.jwt })
    await s.searches.settled()
    const d = await details(s, alice.jwt, id)
    expect(d.State).toBe('DORMANT/SAVING/ERROR')
    expect(d.StoreSize + d.IndexSize).toBeGreaterThan(64 * KiB)
    expect(await usage(s, alice.uid)).toBe(0)
    expect(await s.blobs.stat(`searches/${id}/results`)).toBeUndefined()
    expect(s.logs.join('\n')).toContain('exceed the storage quota')
    // Room made (the quota raised by the admin), a second save moves it (with the results it had when it stopped).
    s.config.userQuotaBytes = 1024 * KiB
    expect((await s.call('PATCH', `/api/searchctrl/${id}/save`, { jwt: alice.jwt })).status).toBe(200)
    await s.searches.settled()
    expect((await details(s, alice.jwt, id)).State).toBe('DORMANT/SAVED')
  })

  test('a launch cannot write unbounded results: a search stops (ERROR) once its results pass the owner\'s quota', async () => {
    const { s, alice } = await setup({ userQuotaBytes: 64 * KiB })
    await ingest(s, 100) // about 140 KiB of results for tag=web
    const id = await launch(s, alice.jwt, 'tag=web')
    const byAdmin = await launch(s, s.adminJwt, 'tag=web')
    await s.searches.settled()
    const d = await details(s, alice.jwt, id)
    expect(d.State).toBe('ACTIVE/ERROR')
    // Stopped within one step (4 entries here) of the quota; the results so far stay readable.
    expect(d.StoreSize + d.IndexSize).toBeGreaterThan(64 * KiB)
    expect(d.StoreSize + d.IndexSize).toBeLessThan(72 * KiB)
    expect((await s.call('GET', `/api/searchctrl/${id}/download/json`, { jwt: alice.jwt })).body.length).toBe(d.ItemCount)
    expect(s.logs.join('\n')).toContain('the results exceed the storage quota')
    // The admin's search is not bounded.
    expect(await details(s, s.adminJwt, byAdmin)).toMatchObject({ State: 'ACTIVE', ItemCount: 100 })
  })
})

describe('dashboards and library entries count too', () => {
  test('creating or growing them over the quota is 413 and changes nothing; shrinking is fine', async () => {
    const { s, alice } = await setup({ userQuotaBytes: 100 * KiB })
    const big = (n: number) => ({ blob: 'x'.repeat(n) })
    const dash = await s.call('POST', '/api/dashboards', { jwt: alice.jwt, json: { Name: 'd', Data: big(60 * KiB) } })
    expect(dash.status).toBe(200)
    const used = await usage(s, alice.uid)
    expect(used).toBeGreaterThan(60 * KiB)
    await overQuota(s, () => s.call('POST', '/api/dashboards', { jwt: alice.jwt, json: { Name: 'd2', Data: big(50 * KiB) } }))
    await overQuota(s, () => s.call('PUT', `/api/dashboards/${dash.body}`, { jwt: alice.jwt, json: { Data: big(110 * KiB) } }))
    await overQuota(s, () => s.call('POST', '/api/library', { jwt: alice.jwt, json: { Name: 'q', Query: 'tag=x', Metadata: big(50 * KiB) } }))
    // Shrink the dashboard, then the entry fits; growing the entry past the quota is refused.
    expect((await s.call('PUT', `/api/dashboards/${dash.body}`, { jwt: alice.jwt, json: { Data: big(10 * KiB) } })).status).toBe(200)
    const entry = await s.call('POST', '/api/library', { jwt: alice.jwt, json: { Name: 'q', Query: 'tag=x', Metadata: big(50 * KiB) } })
    expect(entry.status).toBe(200)
    await overQuota(s, () => s.call('PUT', `/api/library/${entry.body.ThingUUID}`, { jwt: alice.jwt, json: { Metadata: big(95 * KiB) } }))
    // A file upload sees the dashboard and the entry in the usage.
    expect(await usage(s, alice.uid)).toBeGreaterThan(60 * KiB)
    await overQuota(s, () => upload(s, 'POST', '/api/files', alice.jwt, bytesOf(45 * KiB), { name: 'f' }))
  })
})
