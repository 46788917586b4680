// The blob sweep on a real app's store: orphans past the grace period go, young ones and referenced ones stay,
// and items whose blob is missing are reported.
import { describe, expect, test } from 'bun:test'
import { mkdirSync, readdirSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { blobReferences } from '../repos'
import { blobFiles, serverPerTest, type TestServer } from '../../test/helpers'
import { createLogger } from '../runtime/log'
import { sweepBlobs } from './sweep'
import { type SavedSearchRow, searchBlobKeys } from '../search/repo'

const setup = serverPerTest()
const HOUR = 3_600_000

/** Creates a resource with contents through the API; answers its GUID. */
async function resourceWith(s: TestServer, jwt: string, text: string): Promise<string> {
  const created = await s.call('POST', '/api/resources', { jwt, json: { ResourceName: 'r', Description: '' } })
  const form = new FormData()
  form.append('file', new Blob([text]), 'r.txt')
  const res = await s.handle(
    new Request(`http://localhost/api/resources/${created.body.GUID}/raw`, { method: 'PUT', headers: { authorization: `Bearer ${jwt}` }, body: form }),
  )
  expect(res.status).toBe(200)
  return created.body.GUID as string
}

/** Makes every blob file look `ageMs` old. */
function age(s: TestServer, ageMs: number) {
  const when = new Date(Date.now() - ageMs)
  for (const f of blobFiles(s)) utimesSync(join(s.dir, 'blobs', f), when, when)
}

function sweep(s: TestServer, lines: string[] = []) {
  return sweepBlobs({
    blobs: s.blobs,
    references: () => blobReferences(s.store),
    now: Date.now(),
    graceMs: HOUR,
    log: createLogger('info', (l) => void lines.push(l)),
  })
}

describe('blob sweep', () => {
  test('a deleted user\'s contents are removed once past the grace period; referenced blobs stay', async () => {
    const s = await setup()
    const keep = await s.createUser()
    const gone = await s.createUser()
    await resourceWith(s, keep.jwt, 'kept contents')
    await resourceWith(s, gone.jwt, 'orphaned contents')
    expect(blobFiles(s)).toHaveLength(2)
    expect((await s.call('DELETE', `/api/users/${gone.uid}`, { jwt: s.adminJwt })).status).toBe(200)
    expect(blobFiles(s)).toHaveLength(2) // the cascade took the metadata, not the blob

    const young = await sweep(s)
    expect(young).toEqual({ removed: [], keptYoung: 1, missing: [] })
    expect(blobFiles(s)).toHaveLength(2)

    age(s, 2 * HOUR)
    const lines: string[] = []
    const old = await sweep(s, lines)
    expect(old.removed).toHaveLength(1)
    expect(old.keptYoung).toBe(0)
    expect(blobFiles(s)).toHaveLength(1)
    // the survivor is the kept user's, and still downloads
    const [list] = [(await s.call('GET', '/api/resources', { jwt: keep.jwt })).body as { GUID: string }[]]
    const raw = await s.handle(new Request(`http://localhost/api/resources/${list![0]!.GUID}/raw`, { headers: { authorization: `Bearer ${keep.jwt}` } }))
    expect(raw.text).toBe('kept contents')
    expect(lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'blob sweep')).toMatchObject({ removed: 1, keptYoung: 0, missing: 0 })
  })

  test('an item whose blob is missing is reported, and nothing else is touched', async () => {
    const s = await setup()
    const u = await s.createUser()
    const guid = await resourceWith(s, u.jwt, 'soon missing')
    const [ref] = await blobReferences(s.store)
    await s.blobs.delete(ref!.key)
    const lines: string[] = []
    const result = await sweep(s, lines)
    expect(result).toEqual({ removed: [], keptYoung: 0, missing: [{ key: ref!.key, item: `resource ${guid}` }] })
    expect(lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'blob missing for an item')).toMatchObject({ item: `resource ${guid}` })
    // the metadata is kept for an operator to look at
    expect((await s.call('GET', `/api/resources/${guid}`, { jwt: u.jwt })).status).toBe(200)
  })

  test('user files count as references too', async () => {
    const s = await setup()
    const u = await s.createUser()
    const form = new FormData()
    form.append('file', new Blob(['icon']), 'icon.txt')
    form.append('name', 'icon')
    form.append('desc', '')
    const res = await s.handle(new Request('http://localhost/api/files', { method: 'POST', headers: { authorization: `Bearer ${u.jwt}` }, body: form }))
    expect(res.status).toBe(200)
    age(s, 2 * HOUR)
    expect(await sweep(s)).toEqual({ removed: [], keptYoung: 0, missing: [] })
    expect(blobFiles(s)).toHaveLength(1)
  })
})

describe('a search being saved', () => {
  test('keeps its blobs past the grace period though no row points at them yet, and their absence is no missing blob', async () => {
    const s = await setup()
    const u = await s.createUser()
    const row = (id: string): SavedSearchRow => ({
      id, uid: u.uid, gid: 0, state: 'saving', userQuery: 'tag=a', effectiveQuery: 'tag=a', startRange: 0, endRange: 1, started: 1, finished: 1,
      lastUpdate: 1, storeSize: 4, indexSize: 0, itemCount: 0, metadata: null, import: null, launchInfo: { background: true, client: 'token' },
      noHistory: false, error: '', resultsKey: null, indexKey: null,
    })
    // one whose move had written its results when the server stopped, one whose move had not begun
    await s.store.searches.putSaved(row('1000000001'))
    await s.store.searches.putSaved(row('1000000002'))
    const written = searchBlobKeys('1000000001')
    await s.blobs.put(written.results, new Blob(['{}\n']).stream())
    await s.blobs.put('searches/1000000003/results', new Blob(['{}\n']).stream()) // no search of this id: an orphan
    age(s, 2 * HOUR)
    expect(await sweep(s)).toEqual({ removed: ['searches/1000000003/results'], keptYoung: 0, missing: [] })
    expect(blobFiles(s)).toHaveLength(1)
    expect(await s.blobs.stat(written.results)).toBeDefined()
  })
})

describe('partial files of a crash go at the periodic sweep, not only at the next start', () => {
  test('stale .part files in blobs/tmp are removed; fresh ones and those a put is writing stay', async () => {
    const s = await setup()
    const tmp = join(s.dir, 'blobs', 'tmp')
    mkdirSync(tmp, { recursive: true })
    const old = new Date(Date.now() - 2 * HOUR)
    writeFileSync(join(tmp, 'crashed.part'), 'half an upload')
    utimesSync(join(tmp, 'crashed.part'), old, old)
    writeFileSync(join(tmp, 'recent.part'), 'an upload of another store, maybe')
    // a put in flight whose temporary file has not been written for a while (a slow client)
    let feed!: ReadableStreamDefaultController<Uint8Array>
    const putting = s.blobs.put('slow/one', new ReadableStream({ start: (c) => void (feed = c) }))
    feed.enqueue(new Uint8Array(10))
    let live: string | undefined
    for (let i = 0; i < 100 && !live; i++) {
      await Bun.sleep(10)
      live = readdirSync(tmp).find((n) => n !== 'crashed.part' && n !== 'recent.part')
    }
    expect(live).toBeDefined()
    utimesSync(join(tmp, live!), old, old)

    expect(await s.blobs.sweepPartial(HOUR)).toBe(1)
    expect(readdirSync(tmp).sort()).toEqual([live!, 'recent.part'].sort())
    feed.close()
    expect((await putting).size).toBe(10)
    expect(await s.blobs.sweepPartial(HOUR)).toBe(0)
  })

  test('search working files no search owns are removed once stale; a live search keeps its files', async () => {
    const s = await setup()
    await s.call('POST', '/api/ingest/json', { jwt: s.adminJwt, json: [{ TS: '2020-01-01T00:00:00Z', Tag: 'web', Data: 'aGk=' }] })
    const launched = await s.call('POST', '/api/searchctrl/launch', { jwt: s.adminJwt, json: { SearchString: 'tag=web' } })
    expect(launched.status).toBe(200)
    await s.searches.settled()
    const work = join(s.dir, 'searches')
    const owned = readdirSync(work).sort()
    expect(owned).toHaveLength(2)
    const old = new Date(Date.now() - 2 * HOUR)
    for (const name of ['import-crashed.ndjson', 'import-crashed.idx']) writeFileSync(join(work, name), 'x')
    for (const name of [...owned, 'import-crashed.ndjson', 'import-crashed.idx']) utimesSync(join(work, name), old, old)
    writeFileSync(join(work, 'import-running.ndjson'), 'x')

    expect(await s.searches.sweepWorkFiles(HOUR)).toBe(2)
    expect(readdirSync(work).sort()).toEqual([...owned, 'import-running.ndjson'].sort())
    expect((await s.call('GET', `/api/searchctrl/${launched.body.SearchID}`, { jwt: s.adminJwt })).status).toBe(200)
  })
})
