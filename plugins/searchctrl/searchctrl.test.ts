import { afterEach, describe, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import tar from 'tar-stream'
import { type BlobStore, createDiskBlobStore } from '../../server/blob'
import { writeSearchArchive } from '../../server/search/archive'
import { engineKey } from '../stats'
import { ZERO_TIME } from '../../server/runtime/time'
import type { Config } from '../../server/runtime/config'
import {
  type CallOptions, type TestServer, type TestServerOptions, blobFiles, createTestServer, expectError, itemWorld, refused, storeSnapshot,
} from '../../test/helpers'

const servers: TestServer[] = []
const dirs: string[] = []
afterEach(() => {
  for (const s of servers.splice(0)) s.close()
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

/** A step for searches that only moves on when the test opens it: a gated search stays running after one chunk. */
function gate() {
  let open = false
  const waiting: (() => void)[] = []
  const first = Promise.withResolvers<void>()
  return {
    step: () => (first.resolve(), open ? Promise.resolve() : new Promise<void>((resolve) => waiting.push(resolve))),
    /** Resolves once a search has read its first chunk and waits (the store may answer after the launch does). */
    reached: () => first.promise,
    open() {
      open = true
      for (const resolve of waiting.splice(0)) resolve()
    },
  }
}

/**
 * A server with owner, member (shares group `gid` with the owner, which is the owner's default search group),
 * stranger and admin. Searches read `chunk` entries per step (4 unless given); `gated`: they wait for `gate.open()` after each step.
 */
async function setup(opts: { gated?: boolean; chunk?: number; config?: Partial<Config>; blobs?: TestServerOptions['blobs']; segments?: TestServerOptions['segments'] } = {}) {
  const g = gate()
  const s = await createTestServer(opts.config, { blobs: opts.blobs, segments: opts.segments, search: { chunk: opts.chunk ?? 4, stepMs: 0, step: opts.gated ? g.step : undefined } })
  servers.push(s)
  const w = await itemWorld(s)
  const set = await s.call('PUT', `/api/users/${w.owner.uid}/searchgroup`, { jwt: w.owner.jwt, json: { GID: w.gid } })
  expect(set.status).toBe(200)
  return { ...w, gate: g }
}
type World = Awaited<ReturnType<typeof setup>>

const T0 = Date.parse('2026-01-01T00:00:00Z')
const b64 = (text: string) => Buffer.from(text).toString('base64')
/** Entry i: one second after entry i-1. */
const entry = (i: number, tag = 'web', text = `line ${i}`) => ({ TS: new Date(T0 + i * 1000).toISOString(), Tag: tag, SRC: '192.0.2.7', Data: b64(text) })

async function ingest(s: TestServer, entries: unknown[], jwt = s.adminJwt) {
  for (let i = 0; i < entries.length; i += 1000) {
    const res = await s.call('POST', '/api/ingest/json', { jwt, json: entries.slice(i, i + 1000) })
    expect(res.status).toBe(200)
  }
}

/** `n` web entries "line i", i from 0. */
const lines = (n: number, tag = 'web') => Array.from({ length: n }, (_, i) => entry(i, tag))

async function launch(s: TestServer, jwt: string, body: Record<string, unknown> | string): Promise<string> {
  const res = await s.call('POST', '/api/searchctrl/launch', { jwt, json: typeof body === 'string' ? { SearchString: body } : body })
  expect({ status: res.status, text: res.text }).toMatchObject({ status: 200 })
  expect(res.body.SearchID).toMatch(/^\d+$/)
  return res.body.SearchID as string
}

async function details(s: TestServer, jwt: string, id: string) {
  const res = await s.call('GET', `/api/searchctrl/${id}/details`, { jwt })
  expect({ status: res.status, text: res.text }).toMatchObject({ status: 200 })
  return res.body
}

/** The list entry of a search, from the admin's view of every search (undefined when it is gone). */
async function listed(s: TestServer, id: string, jwt = s.adminJwt) {
  const res = await s.call('GET', '/api/searchctrl/all', { jwt })
  expect(res.status).toBe(200)
  return (res.body as { ID: string; State: string; AttachedClients: number; StoredData: number }[]).find((e) => e.ID === id)
}

async function results(s: TestServer, jwt: string, id: string): Promise<any[]> {
  const res = await s.call('GET', `/api/searchctrl/${id}/download/json`, { jwt })
  expect({ status: res.status, text: res.text.slice(0, 200) }).toMatchObject({ status: 200 })
  return res.body
}

const dataOf = (records: { Data: string }[]) => records.map((r) => Buffer.from(r.Data, 'base64').toString())
const workFiles = (s: TestServer) => (existsSync(join(s.dir, 'searches')) ? readdirSync(join(s.dir, 'searches')).sort() : [])
const blobsOf = async (s: TestServer, id: string) => [await s.blobs.stat(`searches/${id}/results`), await s.blobs.stat(`searches/${id}/index`)]
const call = (s: TestServer, method: string, path: string, jwt: string, opts: CallOptions = {}) => s.call(method, path, { jwt, ...opts })

describe('POST /api/ingest/json', () => {
  test('stores a batch and answers its count, data size and tags', async () => {
    const { s } = await setup()
    const res = await call(s, 'POST', '/api/ingest/json', s.adminJwt, {
      json: [entry(1, 'web', 'abc'), entry(2, 'db', 'hello'), { Tag: 'web', Data: b64('now') }],
    })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ Count: 3, Size: 11, Tags: ['db', 'web'] })
    s.clock.advance(1) // the entry without TS is then before the end of the search (excluded)
    const id = await launch(s, s.adminJwt, 'tag=web,db')
    await s.searches.settled()
    const got = await results(s, s.adminJwt, id)
    expect(got.map((r) => [r.Tag, r.SRC, Buffer.from(r.Data, 'base64').toString()])).toEqual([
      ['web', '192.0.2.7', 'abc'],
      ['db', '192.0.2.7', 'hello'],
      ['web', '', 'now'],
    ])
    expect(got[0].TS).toBe(new Date(T0 + 1000).toISOString())
    // An entry without TS is stamped with the server's time.
    expect(got[2].TS).toBe(new Date(s.clock.now() - 1).toISOString())
  })

  test.each([
    ['an object instead of an array', { Tag: 'web', Data: 'aGk=' }],
    ['an empty JSON string instead of an array', ''],
    ['a JSON string holding an array', JSON.stringify([entry(1)])],
    ['a missing Data', [{ Tag: 'web' }]],
    ['a bad TS', [entry(1), { ...entry(2), TS: 'yesterday' }]],
    ['a bad tag', [entry(1), { ...entry(2), Tag: 'no spaces' }]],
    ['an empty tag', [{ ...entry(2), Tag: '' }]],
    ['a SRC that is no IP address', [{ ...entry(2), SRC: 'host.example' }]],
    ['Data that is not base64', [entry(1), { ...entry(2), Data: 'not base64!' }]],
  ])('refuses %s with 400 and stores nothing of the batch', async (_, json) => {
    const { s } = await setup()
    await refused(s, 400, 'POST', '/api/ingest/json', { jwt: s.adminJwt, json })
  })
})

describe('launching and results', () => {
  async function withData() {
    const w = await setup()
    await ingest(w.s, [
      entry(0, 'web', 'GET /index.html 200'),
      entry(1, 'web', 'GET /missing 404'),
      entry(2, 'db', 'slow query 200ms'),
      entry(3, 'web', 'POST /login 200'),
      entry(4, 'auth', 'login failed for bob'),
      entry(5, 'web', 'GET /about 200'),
    ])
    return w
  }

  test.each([
    ['tag=web', ['GET /index.html 200', 'GET /missing 404', 'POST /login 200', 'GET /about 200']],
    ['tag=web grep GET', ['GET /index.html 200', 'GET /missing 404', 'GET /about 200']],
    ['tag=web,db grep 200', ['GET /index.html 200', 'slow query 200ms', 'POST /login 200', 'GET /about 200']],
    ['tag=* grep login', ['POST /login 200', 'login failed for bob']],
    ['tag=web regex "^GET /[a-z]+ 200$"', ['GET /about 200']],
    ['tag=web grep GET | limit 2', ['GET /index.html 200', 'GET /missing 404']],
    ['tag=web limit 3 | grep GET', ['GET /index.html 200', 'GET /missing 404']],
    ['tag=nosuchtag', []],
  ])('%s', async (query, expected) => {
    const { s, owner } = await withData()
    const id = await launch(s, owner.jwt, query)
    await s.searches.settled()
    expect(dataOf(await results(s, owner.jwt, id))).toEqual(expected)
  })

  test('count answers one record', async () => {
    const { s, owner } = await withData()
    const id = await launch(s, owner.jwt, 'tag=web grep GET | count')
    await s.searches.settled()
    expect(await results(s, owner.jwt, id)).toEqual([{ Count: 3 }])
    expect((await call(s, 'GET', `/api/searchctrl/${id}/download/csv`, owner.jwt)).text).toBe('Count\r\n3\r\n')
    expect((await call(s, 'GET', `/api/searchctrl/${id}/download/text`, owner.jwt)).text).toBe('3\n')
  })

  test('SearchStart and SearchEnd bound the entries searched: start included, end excluded', async () => {
    const { s, owner } = await withData()
    const at = (i: number) => new Date(T0 + i * 1000).toISOString()
    const id = await launch(s, owner.jwt, { SearchString: 'tag=web', SearchStart: at(1), SearchEnd: at(5) })
    await s.searches.settled()
    expect(dataOf(await results(s, owner.jwt, id))).toEqual(['GET /missing 404', 'POST /login 200'])
    const d = await details(s, owner.jwt, id)
    expect(d.StartRange).toBe(at(1))
    expect(d.EndRange).toBe(at(5))
  })

  test('an unset SearchEnd is the launch time; an unset SearchStart the zero time', async () => {
    const { s, owner } = await withData()
    const id = await launch(s, owner.jwt, { SearchString: 'tag=web', SearchStart: null })
    const d = await details(s, owner.jwt, id)
    expect(d.StartRange).toBe('0001-01-01T00:00:00Z')
    expect(d.EndRange).toBe(new Date(s.clock.now()).toISOString())
  })

  test('the detail and details records are real: sizes of the stored results, count, times, query forms', async () => {
    const { s, owner, gid } = await withData()
    const id = await launch(s, owner.jwt, { SearchString: '  tag=web,web   grep  GET', Metadata: { from: 'test' } })
    await s.searches.settled()
    const records = await results(s, owner.jwt, id)
    const stored = records.map((r) => `${JSON.stringify(r)}\n`).join('')
    const detail = await call(s, 'GET', `/api/searchctrl/${id}`, owner.jwt)
    expect(detail.status).toBe(200)
    expect(detail.body).toEqual([
      {
        ID: id,
        UID: owner.uid,
        UserQuery: '  tag=web,web   grep  GET',
        EffectiveQuery: 'tag=web grep GET',
        StartRange: '0001-01-01T00:00:00Z',
        EndRange: new Date(s.clock.now()).toISOString(),
        Started: new Date(s.clock.now()).toISOString(),
        Finished: new Date(s.clock.now()).toISOString(),
        StoreSize: Buffer.byteLength(stored),
        IndexSize: 8 * 3,
      },
    ])
    const d = await details(s, owner.jwt, id)
    expect(d).toMatchObject({
      ID: id,
      UID: owner.uid,
      GIDs: [gid],
      ItemCount: 3,
      StoreSize: Buffer.byteLength(stored),
      IndexSize: 24,
      Metadata: { from: 'test' },
      Import: { Imported: false, Time: '0001-01-01T00:00:00Z', BatchName: '', BatchInfo: '' },
      LaunchInfo: { started: new Date(s.clock.now()).toISOString(), expires: ZERO_TIME, method: 'manual', reference: '' },
      Background: false,
      State: 'ACTIVE',
      NoHistory: false,
      Duration: '0s',
    })
  })

  test('routes answer with a trailing slash, and take the empty JSON bodies the Go client sends', async () => {
    const { s, owner } = await setup()
    const res = await call(s, 'POST', '/api/searchctrl/launch/', owner.jwt, { json: { SearchString: 'tag=web' } })
    expect(res.status).toBe(200)
    const id = res.body.SearchID
    const empty = { body: '', headers: { 'content-type': 'application/json' } }
    expect((await call(s, 'GET', '/api/searchctrl/', owner.jwt)).body.map((e: { ID: string }) => e.ID)).toEqual([id])
    for (const [method, suffix] of [['PATCH', 'background'], ['PUT', 'stop'], ['PUT', 'detach'], ['PUT', 'attach']] as const)
      expect({ suffix, status: (await call(s, method, `/api/searchctrl/${id}/${suffix}/`, owner.jwt, empty)).status }).toEqual({ suffix, status: 200 })
    expect((await call(s, 'GET', `/api/searchctrl/${id}/`, owner.jwt)).status).toBe(200)
    expect((await call(s, 'DELETE', `/api/searchctrl/${id}/`, owner.jwt, empty)).status).toBe(200)
  })

  test('csv and text downloads; an unknown format is 400', async () => {
    const { s, owner } = await setup()
    await ingest(s, [entry(1, 'web', 'plain'), entry(2, 'web', 'with "quotes", commas')])
    const id = await launch(s, owner.jwt, 'tag=web')
    await s.searches.settled()
    const csv = await call(s, 'GET', `/api/searchctrl/${id}/download/csv`, owner.jwt)
    expect(csv.headers.get('content-type')).toContain('text/csv')
    expect(csv.text).toBe(
      `TS,Tag,SRC,Data\r\n${entry(1).TS},web,192.0.2.7,plain\r\n${entry(2).TS},web,192.0.2.7,"with ""quotes"", commas"\r\n`,
    )
    const text = await call(s, 'GET', `/api/searchctrl/${id}/download/text`, owner.jwt)
    expect(text.text).toBe('plain\nwith "quotes", commas\n')
    expectError(await call(s, 'GET', `/api/searchctrl/${id}/download/xml`, owner.jwt), 400)
  })

  test('downloads also take the download token, as header or cookie', async () => {
    const { s, owner } = await setup()
    await ingest(s, lines(2))
    const id = await launch(s, owner.jwt, 'tag=web')
    await s.searches.settled()
    const tmp = (await call(s, 'GET', '/api/login/tmptoken', owner.jwt)).body.JWT
    expect((await call(s, 'GET', `/api/searchctrl/${id}/download/text`, tmp)).text).toBe('line 0\nline 1\n')
    const cookie = await s.call('GET', `/api/searchctrl/${id}/download/text`, { headers: { cookie: `token=${tmp}` } })
    expect(cookie.text).toBe('line 0\nline 1\n')
    // The download token is good for downloads only.
    expectError(await call(s, 'GET', `/api/searchctrl/${id}`, tmp), 401)
  })

  test('a query that does not parse is 400 with its position, and nothing is launched or recorded', async () => {
    const { s, owner } = await setup()
    const before = storeSnapshot(s)
    const res = await call(s, 'POST', '/api/searchctrl/launch', owner.jwt, { json: { SearchString: 'tag=web grep x | frobnicate' } })
    expectError(res, 400, { Position: 17 })
    expect(res.body.Error).toContain('frobnicate')
    expect(storeSnapshot(s)).toEqual(before)
    expect((await call(s, 'GET', '/api/searchctrl', owner.jwt)).body).toEqual([])
  })

  test.each([
    ['a SearchStart that is no time', { SearchString: 'tag=web', SearchStart: 'monday' }],
    ['a SearchEnd that is no time', { SearchString: 'tag=web', SearchEnd: 12 }],
    ['a start after the end', { SearchString: 'tag=web', SearchStart: '2026-01-02T00:00:00Z', SearchEnd: '2026-01-01T00:00:00Z' }],
    ['no SearchString', { Background: true }],
  ])('refuses %s with 400', async (_, json) => {
    const { s, owner } = await setup()
    await refused(s, 400, 'POST', '/api/searchctrl/launch', { jwt: owner.jwt, json })
    expect((await call(s, 'GET', '/api/searchctrl', owner.jwt)).body).toEqual([])
  })

  test('a running search does not hold up other requests, and its progress shows', async () => {
    // Real steps (the next event-loop turn), 4 entries each: 1000 steps to finish.
    const { s, owner } = await setup()
    await ingest(s, lines(4000))
    const id = await launch(s, owner.jwt, 'tag=web')
    const whoami = await call(s, 'GET', '/api/info/whoami', owner.jwt)
    expect(whoami.status).toBe(200)
    const during = await details(s, owner.jwt, id)
    expect(during.Finished).toBe('0001-01-01T00:00:00Z')
    expect(during.ItemCount).toBeLessThan(4000)
    await s.searches.settled()
    const after = await details(s, owner.jwt, id)
    expect(after.ItemCount).toBe(4000)
    expect(after.Finished).not.toBe('0001-01-01T00:00:00Z')
  })

  test('a regex with catastrophic backtracking does not block the server: other requests answer while it runs', async () => {
    // (a+)+$ on 29 a's and a b takes a backtracking engine (RegExp) about 2^29 steps, seconds per entry, all in
    // one step; RE2 matches it in linear time. Real steps (the next event-loop turn), 4 entries each.
    const { s, owner } = await setup()
    const text = (i: number) => (i % 1000 === 0 ? `${'a'.repeat(29)}b` : i % 1000 === 500 ? 'aaaa' : `line ${i}`)
    await ingest(s, Array.from({ length: 4000 }, (_, i) => entry(i, 'web', text(i))))
    const id = await launch(s, owner.jwt, 'tag=web regex "(a+)+$"')
    // Ask again and again while the search runs: each answer comes at once (2 s is a generous bound).
    let askedWhileRunning = 0
    for (;;) {
      const asked = performance.now()
      const whoami = await call(s, 'GET', '/api/info/whoami', owner.jwt)
      expect(whoami.status).toBe(200)
      expect(performance.now() - asked).toBeLessThan(2000)
      if ((await details(s, owner.jwt, id)).Finished !== '0001-01-01T00:00:00Z') break
      askedWhileRunning++
      await Bun.sleep(5)
    }
    expect(askedWhileRunning).toBeGreaterThan(0)
    await s.searches.settled()
    expect(dataOf(await results(s, owner.jwt, id))).toEqual(['aaaa', 'aaaa', 'aaaa', 'aaaa'])
  })

  test.each([
    ['a backreference', 'tag=web regex "(a)\\\\1"'],
    ['a lookahead', 'tag=web regex (?=a)b'],
  ])('a regex RE2 cannot compile (%s) is 400 with its position, and nothing is launched', async (_, query) => {
    const { s, owner } = await setup()
    const before = storeSnapshot(s)
    const res = await call(s, 'POST', '/api/searchctrl/launch', owner.jwt, { json: { SearchString: query } })
    expectError(res, 400, { Position: 14 })
    expect(res.body.Error).toContain('RE2')
    expect(storeSnapshot(s)).toEqual(before)
    expect((await call(s, 'GET', '/api/searchctrl', owner.jwt)).body).toEqual([])
  })

  test('entries of several MiB: matched by grep and regex, read one at a time (a query stops after 1 MiB of data)', async () => {
    // the rows' walk: no batch goes straight into a segment (server/search/segments.ts, sealed ingest)
    const { s, owner } = await setup({ segments: { sealedIngestBytes: Number.POSITIVE_INFINITY } })
    const big = `${'x'.repeat(5 << 19)} needle` // 2.5 MiB: base64 in JSON stays under the 4 MiB body limit
    await ingest(s, [entry(1, 'web', big)])
    await ingest(s, [entry(2, 'web', big)])
    await ingest(s, [entry(3, 'web', 'small needle'), entry(4, 'web', 'nothing')])
    const scan = s.store.entries.scan.bind(s.store.entries)
    const rowsPerQuery: number[] = []
    s.store.entries.scan = async (...args) => {
      const rows = await scan(...args)
      rowsPerQuery.push(rows.length)
      return rows
    }
    for (const [q, lengths] of [
      ['tag=web grep needle', [big.length, big.length, 12]],
      ['tag=web regex "x+ needle$"', [big.length, big.length]],
      ['tag=web regex "([a-z]{1,50})+ needle$"', [big.length, big.length, 12]],
    ] as const) {
      rowsPerQuery.length = 0
      const id = await launch(s, owner.jwt, q)
      await s.searches.settled()
      const got = dataOf(await results(s, owner.jwt, id))
      expect({ q, got: got.map((d) => d.length), rowsPerQuery }).toEqual({ q, got: [...lengths], rowsPerQuery: [1, 1, 2, 0] })
    }
  })
})

describe('states and transitions', () => {
  test('ACTIVE → BACKGROUNDED → DORMANT: a backgrounded search outlives its clients and the grace period', async () => {
    const { s, owner, member } = await setup()
    await ingest(s, lines(10))
    const id = await launch(s, owner.jwt, 'tag=web')
    expect(await listed(s, id)).toMatchObject({ State: 'ACTIVE', AttachedClients: 1 })
    expect((await call(s, 'PATCH', `/api/searchctrl/${id}/background`, member.jwt)).text).toBe('null')
    expect(await listed(s, id)).toMatchObject({ State: 'ACTIVE/BACKGROUNDED', AttachedClients: 1 })
    expect((await call(s, 'PUT', `/api/searchctrl/${id}/detach`, owner.jwt)).status).toBe(200)
    expect(await listed(s, id)).toMatchObject({ State: 'DORMANT/BACKGROUNDED', AttachedClients: 0 })
    s.clock.advance(s.config.searchGraceMs * 2)
    expect(await listed(s, id)).toMatchObject({ State: 'DORMANT/BACKGROUNDED' })
    // Backgrounding again is allowed; attaching makes it active again.
    expect((await call(s, 'PATCH', `/api/searchctrl/${id}/background`, owner.jwt)).status).toBe(200)
    expect((await call(s, 'PUT', `/api/searchctrl/${id}/attach`, member.jwt)).status).toBe(200)
    expect(await listed(s, id)).toMatchObject({ State: 'ACTIVE/BACKGROUNDED', AttachedClients: 1 })
    await s.searches.settled()
    expect(await results(s, owner.jwt, id)).toHaveLength(10)
  })

  test('SAVING → SAVED: the move to the blob store waits until the search is dormant and finished', async () => {
    const { s, owner, gate } = await setup({ gated: true })
    await ingest(s, lines(20))
    const id = await launch(s, owner.jwt, 'tag=web')
    // Saved while attached and running: SAVING, results still in the working directory.
    expect((await call(s, 'PATCH', `/api/searchctrl/${id}/save`, owner.jwt)).text).toBe('null')
    expect(await listed(s, id)).toMatchObject({ State: 'ACTIVE/SAVING' })
    expect(await blobsOf(s, id)).toEqual([undefined, undefined])
    // Dormant but still running: still SAVING.
    expect((await call(s, 'PUT', `/api/searchctrl/${id}/detach`, owner.jwt)).status).toBe(200)
    expect(await listed(s, id)).toMatchObject({ State: 'DORMANT/SAVING', AttachedClients: 0 })
    expect((await details(s, owner.jwt, id)).Finished).toBe('0001-01-01T00:00:00Z')
    expect(await blobsOf(s, id)).toEqual([undefined, undefined])
    expect(workFiles(s)).toEqual([`${id}.idx`, `${id}.ndjson`])
    // Finished and dormant: moved, in the background.
    gate.open()
    await s.searches.settled()
    expect(await listed(s, id)).toMatchObject({ State: 'DORMANT/SAVED', AttachedClients: 0 })
    const d = await details(s, owner.jwt, id)
    expect(await blobsOf(s, id)).toEqual([{ size: d.StoreSize }, { size: d.IndexSize }])
    expect(workFiles(s)).toEqual([])
    // Saved searches are kept whatever the clock says; re-attaching gives SAVED/ATTACHED.
    s.clock.advance(s.config.searchGraceMs * 2)
    expect((await call(s, 'PUT', `/api/searchctrl/${id}/attach`, owner.jwt)).status).toBe(200)
    expect(await listed(s, id)).toMatchObject({ State: 'SAVED/ATTACHED', AttachedClients: 1 })
    expect(dataOf(await results(s, owner.jwt, id))).toEqual(lines(20).map((_, i) => `line ${i}`))
  })

  test('save stores a JSON body as Metadata; an empty body keeps it; saving a saved search replaces it', async () => {
    const { s, owner } = await setup()
    const id = await launch(s, owner.jwt, { SearchString: 'tag=web', Metadata: { at: 'launch' } })
    expect((await call(s, 'PATCH', `/api/searchctrl/${id}/save`, owner.jwt, { json: { label: 'first' } })).status).toBe(200)
    expect((await details(s, owner.jwt, id)).Metadata).toEqual({ label: 'first' })
    expect((await call(s, 'PATCH', `/api/searchctrl/${id}/save`, owner.jwt, { body: '', headers: { 'content-type': 'application/json' } })).status).toBe(200)
    expect((await details(s, owner.jwt, id)).Metadata).toEqual({ label: 'first' })
    await call(s, 'PUT', `/api/searchctrl/${id}/detach`, owner.jwt)
    await s.searches.settled()
    expect(await listed(s, id)).toMatchObject({ State: 'DORMANT/SAVED' })
    expect((await call(s, 'PATCH', `/api/searchctrl/${id}/save`, owner.jwt, { json: ['any', 'json'] })).status).toBe(200)
    expect((await details(s, owner.jwt, id)).Metadata).toEqual(['any', 'json'])
    expect(await s.rows('SELECT metadata FROM saved_searches WHERE id = ?', [id])).toEqual([{ metadata: '["any","json"]' }])
  })

  test('stop ends the feed of a running search; its output stays usable and can be saved', async () => {
    const { s, owner, gate } = await setup({ gated: true })
    await ingest(s, lines(40))
    const id = await launch(s, owner.jwt, 'tag=web')
    await gate.reached()
    expect((await call(s, 'PUT', `/api/searchctrl/${id}/stop`, owner.jwt)).text).toBe('null')
    gate.open()
    await s.searches.settled()
    const d = await details(s, owner.jwt, id)
    expect(d.State).toBe('ACTIVE')
    expect(d.Finished).not.toBe('0001-01-01T00:00:00Z')
    expect(d.ItemCount).toBeGreaterThan(0)
    expect(d.ItemCount).toBeLessThan(40)
    const partial = await results(s, owner.jwt, id)
    expect(partial).toHaveLength(d.ItemCount)
    // Nothing more arrives later, and the output can still be saved.
    expect((await call(s, 'PATCH', `/api/searchctrl/${id}/save`, owner.jwt)).status).toBe(200)
    await call(s, 'PUT', `/api/searchctrl/${id}/detach`, owner.jwt)
    await s.searches.settled()
    expect(await listed(s, id)).toMatchObject({ State: 'DORMANT/SAVED' })
    expect(await results(s, owner.jwt, id)).toEqual(partial)
  })

  test('stop on a saved or dormant search is 400 and changes nothing', async () => {
    const { s, owner } = await setup()
    const saved = await launch(s, owner.jwt, 'tag=web')
    await call(s, 'PATCH', `/api/searchctrl/${saved}/save`, owner.jwt)
    await call(s, 'PUT', `/api/searchctrl/${saved}/detach`, owner.jwt)
    await s.searches.settled()
    const dormant = await launch(s, owner.jwt, { SearchString: 'tag=web', Background: true })
    await call(s, 'PUT', `/api/searchctrl/${dormant}/detach`, owner.jwt)
    await s.searches.settled()
    for (const [id, state] of [[saved, 'DORMANT/SAVED'], [dormant, 'DORMANT/BACKGROUNDED']] as const) {
      await refused(s, 400, 'PUT', `/api/searchctrl/${id}/stop`, { jwt: owner.jwt })
      await refused(s, 400, 'PUT', `/api/searchctrl/${id}/stop`, { jwt: s.adminJwt })
      expect(await listed(s, id)).toMatchObject({ State: state })
    }
    // Re-attached, a saved search is still saved: still 400.
    await call(s, 'PUT', `/api/searchctrl/${saved}/attach`, owner.jwt)
    await refused(s, 400, 'PUT', `/api/searchctrl/${saved}/stop`, { jwt: owner.jwt })
  })

  test('background on a saving or saved search is 409 and changes nothing', async () => {
    const { s, owner } = await setup()
    const id = await launch(s, owner.jwt, 'tag=web')
    await call(s, 'PATCH', `/api/searchctrl/${id}/save`, owner.jwt)
    await refused(s, 409, 'PATCH', `/api/searchctrl/${id}/background`, { jwt: owner.jwt })
    expect(await listed(s, id)).toMatchObject({ State: 'ACTIVE/SAVING' })
    await call(s, 'PUT', `/api/searchctrl/${id}/detach`, owner.jwt)
    await s.searches.settled()
    await refused(s, 409, 'PATCH', `/api/searchctrl/${id}/background`, { jwt: s.adminJwt })
    expect(await listed(s, id)).toMatchObject({ State: 'DORMANT/SAVED' })
  })

  test('delete while attached: clients are detached and stored results removed at once', async () => {
    const { s, owner, member, gate } = await setup({ gated: true })
    await ingest(s, lines(20))
    const running = await launch(s, owner.jwt, 'tag=web')
    await call(s, 'PUT', `/api/searchctrl/${running}/attach`, member.jwt)
    expect(await listed(s, running)).toMatchObject({ AttachedClients: 2 })
    expect(workFiles(s)).toEqual([`${running}.idx`, `${running}.ndjson`])
    expect((await call(s, 'DELETE', `/api/searchctrl/${running}`, owner.jwt)).text).toBe('null')
    expect(await listed(s, running)).toBeUndefined()
    expect(workFiles(s)).toEqual([])
    expectError(await call(s, 'GET', `/api/searchctrl/${running}`, member.jwt), 404)
    expectError(await call(s, 'PUT', `/api/searchctrl/${running}/attach`, member.jwt), 404)
    expectError(await call(s, 'GET', `/api/searchctrl/${running}/download/json`, owner.jwt), 404)

    gate.open()
    const saved = await launch(s, owner.jwt, 'tag=web')
    await call(s, 'PATCH', `/api/searchctrl/${saved}/save`, owner.jwt)
    await call(s, 'PUT', `/api/searchctrl/${saved}/detach`, owner.jwt)
    await s.searches.settled()
    await call(s, 'PUT', `/api/searchctrl/${saved}/attach`, member.jwt)
    expect(await listed(s, saved)).toMatchObject({ State: 'SAVED/ATTACHED' })
    expect((await blobsOf(s, saved))[0]).toBeDefined()
    expect((await call(s, 'DELETE', `/api/searchctrl/${saved}`, s.adminJwt)).status).toBe(200)
    expect(await blobsOf(s, saved)).toEqual([undefined, undefined])
    expect(await s.rows('SELECT count(*) AS n FROM saved_searches')).toEqual([{ n: 0 }])
    expect(await listed(s, saved)).toBeUndefined()
  })

  test('a search neither backgrounded nor saved is removed once it has had no client for the grace period', async () => {
    const { s, owner } = await setup({ config: { searchGraceMs: 60_000 } })
    await ingest(s, lines(3))
    const id = await launch(s, owner.jwt, 'tag=web')
    await s.searches.settled()
    s.clock.advance(120_000) // attached: no grace period runs
    expect(await listed(s, id)).toMatchObject({ State: 'ACTIVE', AttachedClients: 1 })
    await call(s, 'PUT', `/api/searchctrl/${id}/detach`, owner.jwt)
    expect(await listed(s, id)).toMatchObject({ State: 'ACTIVE', AttachedClients: 0 })
    s.clock.advance(59_999)
    expect(await listed(s, id)).toBeDefined()
    // Re-attaching and leaving again starts the period afresh.
    await call(s, 'PUT', `/api/searchctrl/${id}/attach`, owner.jwt)
    await call(s, 'PUT', `/api/searchctrl/${id}/detach`, owner.jwt)
    s.clock.advance(59_999)
    expect(await listed(s, id)).toBeDefined()
    s.clock.advance(1)
    expect(await listed(s, id)).toBeUndefined()
    await s.searches.settled()
    expect(workFiles(s)).toEqual([])
    expectError(await call(s, 'GET', `/api/searchctrl/${id}`, owner.jwt), 404)
  })

  test.each([
    ['logout', async (s: TestServer, w: World) => void (await call(s, 'PUT', '/api/logout', w.owner.jwt))],
    ['logout of every session', async (s: TestServer, w: World) => void (await call(s, 'DELETE', '/api/logout', w.owner.jwt))],
    ['account lock', async (s: TestServer, w: World) => void (await call(s, 'PUT', `/api/users/${w.owner.uid}/lock`, s.adminJwt))],
    ['account lock through PUT /api/users/{id}', async (s: TestServer, w: World) =>
      void (await call(s, 'PUT', `/api/users/${w.owner.uid}`, s.adminJwt, { json: { Locked: true } }))],
    ['password change by an admin', async (s: TestServer, w: World) =>
      void (await call(s, 'PUT', `/api/users/${w.owner.uid}/pwd`, s.adminJwt, { json: { NewPass: 'a-new-password' } }))],
    ['idle expiry', async (s: TestServer) => {
      s.clock.advance(s.config.sessionIdleMs)
      await s.auth.sweepExpiredSessions()
    }],
  ])('the launching session is detached when it ends: %s', async (_, end) => {
    const w = await setup({ config: { searchGraceMs: 24 * 3_600_000 } })
    const { s, owner } = w
    const id = await launch(s, owner.jwt, 'tag=web')
    await call(s, 'PATCH', `/api/searchctrl/${id}/background`, owner.jwt)
    expect(await listed(s, id)).toMatchObject({ State: 'ACTIVE/BACKGROUNDED', AttachedClients: 1 })
    await end(s, w)
    const admin = await s.login('admin', s.adminPassword) // the admin's session may have expired too
    expect(await listed(s, id, admin)).toMatchObject({ State: 'DORMANT/BACKGROUNDED', AttachedClients: 0 })
  })

  test('a refreshed JWT keeps its attachments: the new session is the same client', async () => {
    const { s, owner } = await setup()
    const id = await launch(s, owner.jwt, 'tag=web')
    const refreshed = (await call(s, 'GET', '/api/login/refreshtoken', owner.jwt)).body.JWT
    expect(await listed(s, id)).toMatchObject({ State: 'ACTIVE', AttachedClients: 1 })
    await call(s, 'PUT', `/api/searchctrl/${id}/attach`, refreshed) // already attached: still one client
    expect(await listed(s, id)).toMatchObject({ AttachedClients: 1 })
    await call(s, 'PUT', `/api/searchctrl/${id}/detach`, refreshed)
    expect(await listed(s, id)).toMatchObject({ AttachedClients: 0 })
  })

  test('a session ending detaches only itself; other clients stay attached', async () => {
    const { s, owner, member } = await setup()
    const id = await launch(s, owner.jwt, 'tag=web')
    await call(s, 'PUT', `/api/searchctrl/${id}/attach`, member.jwt)
    await call(s, 'PUT', `/api/searchctrl/${id}/attach`, member.jwt) // attaching twice is one client
    expect(await listed(s, id)).toMatchObject({ AttachedClients: 2 })
    await call(s, 'PUT', '/api/logout', owner.jwt)
    expect(await listed(s, id)).toMatchObject({ State: 'ACTIVE', AttachedClients: 1 })
  })

  test('a search whose store fails shows ERROR and is finished, with what it found so far', async () => {
    const { s, owner } = await setup()
    await ingest(s, lines(12))
    const scan = s.store.entries.scan.bind(s.store.entries)
    let calls = 0
    s.store.entries.scan = async (...args) => {
      if (++calls === 2) throw new Error('disk I/O error')
      return scan(...args)
    }
    const id = await launch(s, owner.jwt, 'tag=web')
    await s.searches.settled()
    const d = await details(s, owner.jwt, id)
    expect(d).toMatchObject({ State: 'ACTIVE/ERROR', Error: 'disk I/O error', ItemCount: 4 })
    expect(d.Finished).not.toBe('0001-01-01T00:00:00Z')
    expect(dataOf(await results(s, owner.jwt, id))).toEqual(['line 0', 'line 1', 'line 2', 'line 3'])
    expect(s.logs.join('\n')).toContain('search failed')
  })

  test('a save that cannot be written shows ERROR, stays SAVING and keeps its results', async () => {
    const blobDir = mkdtempSync(join(tmpdir(), 'quarry-failing-blobs-'))
    dirs.push(blobDir)
    const failingPuts = async (): Promise<BlobStore> => {
      const disk = await createDiskBlobStore({ dataDir: blobDir })
      return new Proxy(disk, {
        get(target, name) {
          if (name === 'put') return async () => Promise.reject(new Error('the disk is full'))
          const value = Reflect.get(target, name)
          return typeof value === 'function' ? value.bind(target) : value
        },
      })
    }
    const { s, owner } = await setup({ blobs: failingPuts })
    await ingest(s, lines(5))
    const id = await launch(s, owner.jwt, 'tag=web')
    await call(s, 'PATCH', `/api/searchctrl/${id}/save`, owner.jwt)
    await call(s, 'PUT', `/api/searchctrl/${id}/detach`, owner.jwt)
    await s.searches.settled()
    const d = await details(s, owner.jwt, id)
    expect(d.State).toBe('DORMANT/SAVING/ERROR')
    expect(d.Error).toContain('the disk is full')
    expect(await results(s, owner.jwt, id)).toHaveLength(5)
  })
})

describe('who may do what', () => {
  async function sharedSearch() {
    const w = await setup()
    await ingest(w.s, lines(5))
    const id = await launch(w.s, w.owner.jwt, 'tag=web')
    await w.s.searches.settled()
    return { ...w, id }
  }

  test('listings: owner and group members see a shared search, strangers do not; /all and ?admin=true show every search to admins', async () => {
    const { s, owner, member, stranger, id, gid } = await sharedSearch()
    const own = await launch(s, stranger.jwt, 'tag=web')
    const entry = { ID: id, UID: owner.uid, GID: gid, State: 'ACTIVE', AttachedClients: 1 }
    for (const jwt of [owner.jwt, member.jwt]) {
      const list = (await call(s, 'GET', '/api/searchctrl', jwt)).body
      expect(list).toEqual([expect.objectContaining({ ...entry, StoredData: expect.any(Number) })])
      expect(list[0].StoredData).toBeGreaterThan(0)
    }
    expect((await call(s, 'GET', '/api/searchctrl', stranger.jwt)).body.map((e: { ID: string }) => e.ID)).toEqual([own])
    // An admin's own listing is their normal view; ?admin=true and /all show everything.
    expect((await call(s, 'GET', '/api/searchctrl', s.adminJwt)).body).toEqual([])
    expect((await call(s, 'GET', '/api/searchctrl?admin=true', s.adminJwt)).body.map((e: { ID: string }) => e.ID)).toEqual([id, own])
    expect((await call(s, 'GET', '/api/searchctrl/all', s.adminJwt)).body.map((e: { ID: string }) => e.ID)).toEqual([id, own])
    // ?admin=true from a non-admin is ignored; /all is refused.
    expect((await call(s, 'GET', '/api/searchctrl?admin=true', stranger.jwt)).body.map((e: { ID: string }) => e.ID)).toEqual([own])
    expectError(await call(s, 'GET', '/api/searchctrl/all', owner.jwt), 403)
  })

  test('a group member may view, attach, background and save, but not stop or delete (403, nothing changes)', async () => {
    const { s, member, id } = await sharedSearch()
    expect((await call(s, 'GET', `/api/searchctrl/${id}`, member.jwt)).status).toBe(200)
    expect((await call(s, 'GET', `/api/searchctrl/${id}/download/json`, member.jwt)).status).toBe(200)
    const before = await listed(s, id)
    await refused(s, 403, 'PUT', `/api/searchctrl/${id}/stop`, { jwt: member.jwt })
    await refused(s, 403, 'DELETE', `/api/searchctrl/${id}`, { jwt: member.jwt })
    expect(await listed(s, id)).toEqual(before)
    expect((await call(s, 'PATCH', `/api/searchctrl/${id}/background`, member.jwt)).status).toBe(200)
    expect((await call(s, 'PATCH', `/api/searchctrl/${id}/save`, member.jwt)).status).toBe(200)
    expect(await listed(s, id)).toMatchObject({ State: 'ACTIVE/BACKGROUNDED/SAVING' })
  })

  test('a stranger gets 404 for everything about the search, as for a missing one', async () => {
    const { s, stranger, id } = await sharedSearch()
    for (const [method, suffix] of [
      ['GET', ''], ['GET', '/details'], ['PATCH', '/background'], ['PATCH', '/save'], ['PUT', '/stop'], ['DELETE', ''],
      ['PUT', '/attach'], ['PUT', '/detach'], ['GET', '/download/json'],
    ] as const) {
      await refused(s, 404, method, `/api/searchctrl/${id}${suffix}`, { jwt: stranger.jwt })
      await refused(s, 404, method, `/api/searchctrl/12345${suffix}`, { jwt: stranger.jwt })
    }
    await refused(s, 400, 'GET', '/api/searchctrl/not-digits', { jwt: stranger.jwt })
    expect(await listed(s, id)).toMatchObject({ State: 'ACTIVE', AttachedClients: 1 })
  })

  test('an admin may view, stop and delete any search', async () => {
    const { s, stranger, gate } = await setup({ gated: true })
    await ingest(s, lines(20))
    const id = await launch(s, stranger.jwt, 'tag=web')
    expect((await call(s, 'GET', `/api/searchctrl/${id}/details`, s.adminJwt)).status).toBe(200)
    expect((await call(s, 'PUT', `/api/searchctrl/${id}/stop`, s.adminJwt)).status).toBe(200)
    gate.open()
    await s.searches.settled()
    expect((await details(s, stranger.jwt, id)).ItemCount).toBeLessThan(20)
    expect((await call(s, 'DELETE', `/api/searchctrl/${id}`, s.adminJwt)).status).toBe(200)
    expect(await listed(s, id)).toBeUndefined()
  })

  test('concurrent callers: owner, member, stranger and admin acting at once leave one consistent search', async () => {
    const { s, owner, member, stranger, gate } = await setup({ gated: true })
    await ingest(s, lines(40))
    const id = await launch(s, owner.jwt, 'tag=web')
    const answers = await Promise.all([
      call(s, 'PATCH', `/api/searchctrl/${id}/save`, member.jwt, { json: { by: 'member' } }),
      call(s, 'PATCH', `/api/searchctrl/${id}/background`, owner.jwt),
      call(s, 'PUT', `/api/searchctrl/${id}/stop`, member.jwt),
      call(s, 'DELETE', `/api/searchctrl/${id}`, stranger.jwt),
      call(s, 'PUT', `/api/searchctrl/${id}/attach`, s.adminJwt),
      call(s, 'PUT', `/api/searchctrl/${id}/detach`, owner.jwt),
      call(s, 'GET', `/api/searchctrl/${id}/download/json`, member.jwt),
      call(s, 'GET', `/api/searchctrl/${id}/details`, stranger.jwt),
    ])
    expect(answers.map((a) => a.status)).toEqual([200, 200, 403, 404, 200, 200, 200, 404])
    expect(await listed(s, id)).toMatchObject({ State: 'ACTIVE/BACKGROUNDED/SAVING', AttachedClients: 1 })
    gate.open()
    await call(s, 'PUT', `/api/searchctrl/${id}/detach`, s.adminJwt)
    await s.searches.settled()
    expect(await listed(s, id)).toMatchObject({ State: 'DORMANT/SAVED', AttachedClients: 0 })
    expect((await details(s, owner.jwt, id)).Metadata).toEqual({ by: 'member' })
    expect(await results(s, member.jwt, id)).toHaveLength(40)
  })
})

describe('deleting the owner', () => {
  test('removes their searches, saved and running, with their stored results; other searches stay', async () => {
    const { s, owner, member } = await setup()
    await ingest(s, lines(5))
    const saved = await launch(s, owner.jwt, 'tag=web')
    await call(s, 'PATCH', `/api/searchctrl/${saved}/save`, owner.jwt)
    await call(s, 'PUT', `/api/searchctrl/${saved}/detach`, owner.jwt)
    await s.searches.settled()
    const running = await launch(s, owner.jwt, { SearchString: 'tag=web', Background: true })
    const others = await launch(s, member.jwt, 'tag=web')
    await s.searches.settled()
    expect((await blobsOf(s, saved))[0]).toBeDefined()
    expect((await call(s, 'DELETE', `/api/users/${owner.uid}`, s.adminJwt)).status).toBe(200)
    expect(await listed(s, saved)).toBeUndefined()
    expect(await listed(s, running)).toBeUndefined()
    expect(await listed(s, others)).toBeDefined()
    expect(await blobsOf(s, saved)).toEqual([undefined, undefined])
    expect(workFiles(s)).toEqual([`${others}.idx`, `${others}.ndjson`])
    expect(await s.rows('SELECT count(*) AS n FROM saved_searches')).toEqual([{ n: 0 }])
  })

  // Issue 15 point 10: a removal in the middle of the move to the blob store answered before the move had ended, so
  // the move's blobs came and went after the answer (and after settled(), which only sees searches still known).
  test.each([
    ['deleting the owner', (s: TestServer, w: World) => call(s, 'DELETE', `/api/users/${w.owner.uid}`, s.adminJwt)],
    ['deleting the search', (s: TestServer, w: World, id: string) => call(s, 'DELETE', `/api/searchctrl/${id}`, w.owner.jwt)],
  ])('%s while its results move to the blob store answers only once the move is undone', async (_, remove) => {
    let hold: { reached: () => void; release: Promise<void> } | undefined
    const heldPuts = async (dir: string): Promise<BlobStore> => {
      const disk = await createDiskBlobStore({ dataDir: dir })
      return new Proxy(disk, {
        get(target, name) {
          if (name === 'put')
            return async (key: string, body: ReadableStream<Uint8Array>) => {
              const held = key.endsWith('/index') ? hold : undefined
              if (held) {
                hold = undefined
                held.reached()
                await held.release
              }
              return target.put(key, body)
            }
          const value = Reflect.get(target, name)
          return typeof value === 'function' ? value.bind(target) : value
        },
      })
    }
    const w = await setup({ blobs: heldPuts })
    const { s, owner } = w
    await ingest(s, lines(5))
    const id = await launch(s, owner.jwt, 'tag=web')
    await call(s, 'PATCH', `/api/searchctrl/${id}/save`, owner.jwt)
    await s.searches.settled()
    const blobsBefore = blobFiles(s)
    let release = () => {}
    const reached = new Promise<void>((resolve) => {
      hold = { reached: resolve, release: new Promise<void>((r) => (release = r)) }
    })
    // Dormant now: the move starts; it has put the results and is held before the index.
    await call(s, 'PUT', `/api/searchctrl/${id}/detach`, owner.jwt)
    await reached
    expect(blobFiles(s)).not.toEqual(blobsBefore)
    const timer = setTimeout(release, 100)
    const res = await remove(s, w, id)
    clearTimeout(timer)
    release()
    expect(res.status).toBe(200)
    expect(blobFiles(s)).toEqual(blobsBefore)
    expect(await blobsOf(s, id)).toEqual([undefined, undefined])
    expect(Number((await s.rows('SELECT count(*) AS n FROM saved_searches'))[0]!.n)).toBe(0)
  })
})

describe('restart', () => {
  test('saved searches survive a restart with their results; unsaved ones and their files do not', async () => {
    const { s, owner, member } = await setup()
    await ingest(s, lines(12))
    const saved = await launch(s, owner.jwt, { SearchString: 'tag=web grep 1', Metadata: { keep: true } })
    await call(s, 'PATCH', `/api/searchctrl/${saved}/save`, owner.jwt)
    await call(s, 'PUT', `/api/searchctrl/${saved}/detach`, owner.jwt)
    const backgrounded = await launch(s, owner.jwt, { SearchString: 'tag=web', Background: true })
    await s.searches.settled()
    const before = { details: await details(s, owner.jwt, saved), results: await results(s, owner.jwt, saved) }
    expect(dataOf(before.results)).toEqual(['line 1', 'line 10', 'line 11'])

    await s.restart()
    expect((await call(s, 'GET', '/api/searchctrl', member.jwt)).body.map((e: { ID: string }) => e.ID)).toEqual([saved])
    expectError(await call(s, 'GET', `/api/searchctrl/${backgrounded}`, owner.jwt), 404)
    expect(workFiles(s)).toEqual([])
    const after = await details(s, owner.jwt, saved)
    expect(after).toEqual({ ...before.details, State: 'DORMANT/SAVED' })
    expect(await results(s, member.jwt, saved)).toEqual(before.results)
    expect((await call(s, 'PUT', `/api/searchctrl/${saved}/attach`, owner.jwt)).status).toBe(200)
    expect(await listed(s, saved)).toMatchObject({ State: 'SAVED/ATTACHED' })
  })

  test('a search still SAVING when the server went down is finished from its working files at the next start', async () => {
    const { s, owner, gate } = await setup({ gated: true })
    await ingest(s, lines(20))
    const id = await launch(s, owner.jwt, 'tag=web')
    await call(s, 'PATCH', `/api/searchctrl/${id}/save`, owner.jwt)
    const partial = await results(s, owner.jwt, id)
    expect(partial.length).toBeGreaterThan(0)
    // A crash: the old manager never gets to finish or move anything.
    await s.restart({ crash: true })
    await s.searches.settled()
    expect(await listed(s, id)).toMatchObject({ State: 'DORMANT/SAVED' })
    expect(await results(s, owner.jwt, id)).toEqual(partial)
    expect((await details(s, owner.jwt, id)).ItemCount).toBe(partial.length)
    expect(workFiles(s)).toEqual([])
    gate.open()
  })
})

describe('GET /api/searchhistory', () => {
  test('own launches, newest first; NoHistory launches are not recorded', async () => {
    const { s, owner, member, gid } = await setup()
    await launch(s, owner.jwt, 'tag=a')
    s.clock.advance(1000)
    await launch(s, owner.jwt, { SearchString: 'tag=secret', NoHistory: true })
    s.clock.advance(1000)
    await launch(s, member.jwt, 'tag=b')
    s.clock.advance(1000)
    await launch(s, owner.jwt, 'tag=c   grep x')
    const history = (await call(s, 'GET', '/api/searchhistory', owner.jwt)).body
    expect(history).toEqual([
      { UID: owner.uid, GID: gid, UserQuery: 'tag=c   grep x', EffectiveQuery: 'tag=c grep x', Launched: new Date(s.clock.now()).toISOString(), Synced: false },
      { UID: owner.uid, GID: gid, UserQuery: 'tag=a', EffectiveQuery: 'tag=a', Launched: new Date(s.clock.now() - 3000).toISOString(), Synced: false },
    ])
    expect((await call(s, 'GET', '/api/searchhistory', member.jwt)).body.map((h: { UserQuery: string }) => h.UserQuery)).toEqual(['tag=b'])
    expect((await call(s, 'GET', '/api/searchhistory', s.adminJwt)).body).toEqual([])
  })
})

describe('stats and notifications', () => {
  /** The engine's key: where the server listens, as `<host>:<port>` (GET /api/stats/ping). */
  const engine = (s: TestServer) => `${s.config.listenHost}:${s.config.listenPort}`

  test('ping: the web server and the embedded engine are OK; the engine is keyed <host>:<port>', async () => {
    const { s, owner } = await setup()
    expect(engine(s)).toBe('127.0.0.1:8080')
    const body = (await call(s, 'GET', '/api/stats/ping', owner.jwt)).body
    expect(body).toEqual({ webserver: 'OK', [engine(s)]: 'OK' })
    // every key but webserver names an indexer as host:port (the Go client's GetPingStates reads it so)
    for (const key of Object.keys(body).filter((k) => k !== 'webserver')) expect(key).toMatch(/^[^\s:]+:\d{1,5}$/)
  })

  test('ping reports the engine down when its store does not answer', async () => {
    const { s, owner } = await setup()
    const entries = s.store.entries
    entries.ping = async () => {
      throw new Error('store closed')
    }
    expect((await call(s, 'GET', '/api/stats/ping', owner.jwt)).body).toEqual({ webserver: 'OK', [engine(s)]: 'ERROR: store closed' })
  })

  test('sysDesc: real host facts for both, under the same keys as ping', async () => {
    const { s, owner } = await setup()
    const body = (await call(s, 'GET', '/api/stats/sysDesc', owner.jwt)).body
    expect(Object.keys(body).sort()).toEqual([engine(s), 'webserver'].sort())
    const os = await import('node:os')
    expect(body.webserver).toMatchObject({
      CPUCount: os.cpus().length,
      TotalMemoryMB: Math.round(os.totalmem() / 1024 / 1024),
      SystemVersion: `${os.type()} ${os.release()}`,
    })
    expect(body.webserver.CPUModel.length).toBeGreaterThan(0)
    expect(body[engine(s)]).toEqual(body.webserver)
  })

  test('the key follows the configured address; a wildcard address is named by the host name', async () => {
    const { s, owner } = await setup({ config: { listenHost: '0.0.0.0', listenPort: 9404 } })
    const os = await import('node:os')
    expect(Object.keys((await call(s, 'GET', '/api/stats/ping', owner.jwt)).body).sort()).toEqual([`${os.hostname()}:9404`, 'webserver'].sort())
    expect(engineKey('::1', 8080)).toBe('[::1]:8080')
    expect(engineKey('::', 8080, 'box')).toBe('box:8080')
    expect(engineKey('10.0.0.5', 9404, 'box')).toBe('10.0.0.5:9404')
    expect(engineKey('quarry.example.com', 443, 'box')).toBe('quarry.example.com:443')
  })

  test('notifications: an empty object when there are none', async () => {
    const { s, owner } = await setup()
    const res = await call(s, 'GET', '/api/notifications', owner.jwt)
    expect(res.status).toBe(200)
    expect(res.text).toBe('{}')
  })
})

describe('API tokens', () => {
  test('a token holding only SearchHistory and Stats can call history, ping and sysDesc, and nothing else of searches', async () => {
    const { s, owner } = await setup()
    const created = await call(s, 'POST', '/api/tokens', owner.jwt, { json: { name: 'script', capabilities: ['SearchHistory', 'Stats'] } })
    expect(created.status).toBe(200)
    const headers = { 'Service-Token': created.body.token as string }
    for (const path of ['/api/searchhistory', '/api/stats/ping', '/api/stats/sysDesc'])
      expect({ path, status: (await s.call('GET', path, { headers })).status }).toEqual({ path, status: 200 })
    const refusedWith = async (method: string, path: string, cap: string, json?: unknown) =>
      expectError(await s.call(method, path, { headers, json }), 403, { Cap: cap })
    await refusedWith('GET', '/api/searchctrl', 'AttachSearch')
    await refusedWith('POST', '/api/searchctrl/launch', 'Search', { SearchString: 'tag=web' })
    await refusedWith('POST', '/api/ingest/json', 'Ingest', [entry(1)])
    await refusedWith('GET', '/api/notifications', 'NotificationRead')
    await refusedWith('GET', '/api/resources', 'ResourceRead')
  })

  test('a search launched with a token is attached to the token until it detaches', async () => {
    const { s, owner } = await setup()
    const created = await call(s, 'POST', '/api/tokens', owner.jwt, { json: { name: 'script', capabilities: ['Search', 'AttachSearch'] } })
    const headers = { 'Service-Token': created.body.token as string }
    const res = await s.call('POST', '/api/searchctrl/launch', { headers, json: { SearchString: 'tag=web' } })
    const id = res.body.SearchID
    expect((await details(s, owner.jwt, id)).LaunchInfo).toMatchObject({ method: 'script', expires: ZERO_TIME })
    expect(await listed(s, id)).toMatchObject({ AttachedClients: 1 })
    expect((await s.call('PUT', `/api/searchctrl/${id}/detach`, { headers })).status).toBe(200)
    expect(await listed(s, id)).toMatchObject({ AttachedClients: 0 })
  })

  const HOUR = 3_600_000
  /** Sessions outlive the clock moves of these tests; a search without client is removed after one minute. */
  const tokenSetup = () => setup({ config: { searchGraceMs: 60_000, sessionIdleMs: 100 * HOUR, sessionLifetimeMs: 100 * HOUR } })

  /** A token of `jwt`'s user that may launch and attach, expiring `expiresInMs` from now (never when 0). */
  async function searchToken(s: TestServer, jwt: string, expiresInMs = 0) {
    const json: Record<string, unknown> = { name: 'script', capabilities: ['Search', 'AttachSearch'] }
    if (expiresInMs) json.expiresAt = new Date(s.clock.now() + expiresInMs).toISOString()
    const created = await call(s, 'POST', '/api/tokens', jwt, { json })
    expect(created.status).toBe(200)
    return { id: created.body.id as string, headers: { 'Service-Token': created.body.token as string } }
  }

  test.each([
    ['deleted by its owner', async (s: TestServer, w: World, tokenId: string) => call(s, 'DELETE', `/api/tokens/${tokenId}`, w.member.jwt)],
    ['deleted by an admin', async (s: TestServer, _: World, tokenId: string) => call(s, 'DELETE', `/api/tokens/${tokenId}`, s.adminJwt)],
    ['its owner locked', async (s: TestServer, w: World) => call(s, 'PUT', `/api/users/${w.member.uid}/lock`, s.adminJwt)],
    ['its owner locked through PUT /api/users/{id}', async (s: TestServer, w: World) =>
      call(s, 'PUT', `/api/users/${w.member.uid}`, s.adminJwt, { json: { Locked: true } })],
    ['its owner deleted', async (s: TestServer, w: World) => call(s, 'DELETE', `/api/users/${w.member.uid}`, s.adminJwt)],
  ])('a token attached to a search is detached when it ends: %s; a search left without client and not kept is removed at once', async (_, end) => {
    // The owner launches, a group member attaches with a token; the owner leaves: the token is the only client.
    const w = await tokenSetup()
    const { s, owner, member } = w
    const token = await searchToken(s, member.jwt)
    const id = await launch(s, owner.jwt, 'tag=web')
    expect((await s.call('PUT', `/api/searchctrl/${id}/attach`, { headers: token.headers })).status).toBe(200)
    await call(s, 'PUT', `/api/searchctrl/${id}/detach`, owner.jwt)
    s.clock.advance(HOUR) // attached: no grace period runs
    expect(await listed(s, id)).toMatchObject({ State: 'ACTIVE', AttachedClients: 1 })
    expect((await end(s, w, token.id)).status).toBe(200)
    expect(await listed(s, id)).toBeUndefined()
    await s.searches.settled()
    expect(workFiles(s)).toEqual([])
  })

  test('a token that expires is detached at its expiry; a search it leaves without client is removed then unless kept', async () => {
    const { s, owner } = await tokenSetup()
    const token = await searchToken(s, owner.jwt, HOUR)
    const kept = (await s.call('POST', '/api/searchctrl/launch', { headers: token.headers, json: { SearchString: 'tag=web' } })).body.SearchID
    const dropped = (await s.call('POST', '/api/searchctrl/launch', { headers: token.headers, json: { SearchString: 'tag=web' } })).body.SearchID
    await call(s, 'PATCH', `/api/searchctrl/${kept}/background`, owner.jwt)
    s.clock.advance(HOUR - 1)
    expect(await listed(s, kept)).toMatchObject({ State: 'ACTIVE/BACKGROUNDED', AttachedClients: 1 })
    expect(await listed(s, dropped)).toMatchObject({ State: 'ACTIVE', AttachedClients: 1 })
    s.clock.advance(1)
    expect(await listed(s, kept)).toMatchObject({ State: 'DORMANT/BACKGROUNDED', AttachedClients: 0 })
    expect(await listed(s, dropped)).toBeUndefined()
    s.clock.advance(60_000)
    expect(await listed(s, kept)).toMatchObject({ State: 'DORMANT/BACKGROUNDED' })

    // Noticed late (no request in between): removed all the same.
    const late = await searchToken(s, owner.jwt, HOUR)
    const gone = (await s.call('POST', '/api/searchctrl/launch', { headers: late.headers, json: { SearchString: 'tag=web' } })).body.SearchID
    s.clock.advance(HOUR + 60_000)
    expect(await listed(s, gone)).toBeUndefined()
  })

  test('a refreshed token (PATCH: new secret, same id) keeps its attachments, with the new expiry; so does a changed expiry', async () => {
    const { s, owner } = await tokenSetup()
    const token = await searchToken(s, owner.jwt, HOUR)
    const id = (await s.call('POST', '/api/searchctrl/launch', { headers: token.headers, json: { SearchString: 'tag=web' } })).body.SearchID
    await call(s, 'PATCH', `/api/searchctrl/${id}/background`, owner.jwt) // kept once the token leaves it
    const refreshed = await call(s, 'PATCH', `/api/tokens/${token.id}`, owner.jwt, { json: { expiresAt: new Date(s.clock.now() + 3 * HOUR).toISOString() } })
    expect(refreshed.status).toBe(200)
    const headers = { 'Service-Token': refreshed.body.token as string }
    s.clock.advance(2 * HOUR) // past the first expiry
    expect(await listed(s, id)).toMatchObject({ State: 'ACTIVE/BACKGROUNDED', AttachedClients: 1 })
    // It is the same client: attaching again is still one, the new secret detaches it.
    expect((await s.call('PUT', `/api/searchctrl/${id}/attach`, { headers })).status).toBe(200)
    expect(await listed(s, id)).toMatchObject({ AttachedClients: 1 })
    // PUT moves the expiry: never, then in one hour.
    expect((await call(s, 'PUT', `/api/tokens/${token.id}`, owner.jwt, { json: { expiresAt: null } })).status).toBe(200)
    s.clock.advance(2 * HOUR)
    expect(await listed(s, id)).toMatchObject({ AttachedClients: 1 })
    const soon = new Date(s.clock.now() + HOUR).toISOString()
    expect((await call(s, 'PUT', `/api/tokens/${token.id}`, owner.jwt, { json: { expiresAt: soon } })).status).toBe(200)
    s.clock.advance(HOUR)
    expect(await listed(s, id)).toMatchObject({ State: 'DORMANT/BACKGROUNDED', AttachedClients: 0 })
    // A refresh after the expiry does not bring the attachment back.
    expect((await call(s, 'PATCH', `/api/tokens/${token.id}`, owner.jwt, { json: {} })).status).toBe(200)
    expect(await listed(s, id)).toMatchObject({ AttachedClients: 0 })
  })
})

describe('list entries as the clients read them (js-client RawSearch2, Go SearchCtrlStatus)', () => {
  const KEYS = [
    'AttachedClients', 'EffectiveQuery', 'EndRange', 'GID', 'GIDs', 'Global', 'ID', 'Import', 'LaunchInfo', 'NoHistory', 'StartRange',
    'State', 'StoredData', 'UID', 'UserQuery',
  ].sort()

  test('GET /api/searchctrl, /all and ?admin=true: every declared field, with its type; the same entry on each route', async () => {
    const { s, owner, gid } = await setup()
    await ingest(s, lines(8))
    const id = await launch(s, owner.jwt, { SearchString: '  tag=web  grep line', SearchStart: entry(2).TS, SearchEnd: entry(7).TS, NoHistory: true })
    await s.searches.settled()
    const d = await details(s, owner.jwt, id)
    const expected = {
      ID: id,
      UID: owner.uid,
      GID: gid,
      GIDs: [gid],
      Global: false,
      State: 'ACTIVE',
      AttachedClients: 1,
      StoredData: d.StoreSize,
      UserQuery: '  tag=web  grep line',
      EffectiveQuery: d.EffectiveQuery,
      StartRange: new Date(entry(2).TS).toISOString(),
      EndRange: new Date(entry(7).TS).toISOString(),
      NoHistory: true,
      Import: { Imported: false, Time: ZERO_TIME, BatchName: '', BatchInfo: '' },
      LaunchInfo: { started: d.Started, expires: ZERO_TIME, method: 'manual', reference: '' },
    }
    expect(d.EffectiveQuery).toBeString()
    expect(d.LaunchInfo).toEqual(expected.LaunchInfo)
    for (const [path, jwt] of [['/api/searchctrl', owner.jwt], ['/api/searchctrl/all', s.adminJwt], ['/api/searchctrl?admin=true', s.adminJwt]] as const) {
      const res = await call(s, 'GET', path, jwt)
      expect(res.status).toBe(200)
      const e = (res.body as Record<string, unknown>[]).find((x) => x.ID === id)!
      expect({ path, keys: Object.keys(e).sort() }).toEqual({ path, keys: KEYS })
      expect({ path, entry: e }).toEqual({ path, entry: expected })
      // what the js-client's toSearch2 does with it must not throw
      expect((e.State as string).split('/')).toEqual(['ACTIVE'])
    }
  })

  test('no group: GID 0 and GIDs []; a token launch is method "script"; expires is set only once nothing keeps the search', async () => {
    const { s, stranger } = await setup({ config: { searchGraceMs: 60_000 } })
    const token = (await call(s, 'POST', '/api/tokens', stranger.jwt, { json: { name: 'script', capabilities: ['Search', 'AttachSearch'] } })).body.token as string
    const res = await s.call('POST', '/api/searchctrl/launch', { headers: { 'Service-Token': token }, json: { SearchString: 'tag=web' } })
    const id = res.body.SearchID as string
    expect(await listed(s, id)).toMatchObject({ GID: 0, GIDs: [], LaunchInfo: { method: 'script', reference: '', expires: ZERO_TIME } })
    s.clock.advance(1000)
    expect((await s.call('PUT', `/api/searchctrl/${id}/detach`, { headers: { 'Service-Token': token } })).status).toBe(200)
    const removal = new Date(s.clock.now() + 60_000).toISOString()
    expect((await listed(s, id))!).toMatchObject({ AttachedClients: 0, LaunchInfo: { expires: removal } })
    expect((await details(s, stranger.jwt, id)).LaunchInfo.expires).toBe(removal)
    // backgrounded: kept, so no removal time
    expect((await call(s, 'PATCH', `/api/searchctrl/${id}/background`, stranger.jwt)).status).toBe(200)
    expect((await listed(s, id))!).toMatchObject({ State: 'DORMANT/BACKGROUNDED', LaunchInfo: { expires: ZERO_TIME } })
    expect((await details(s, stranger.jwt, id)).Background).toBe(true)
  })

  test('a caller who may not see a search does not get its entry; a non-admin\'s ?admin=true and /all change nothing', async () => {
    const { s, owner, stranger } = await setup()
    const id = await launch(s, owner.jwt, 'tag=web')
    expect((await call(s, 'GET', '/api/searchctrl?admin=true', stranger.jwt)).body).toEqual([])
    expectError(await call(s, 'GET', '/api/searchctrl/all', stranger.jwt), 403)
    expect(await listed(s, id)).toBeDefined()
  })
})

describe('export and import', () => {
  /** A saved search of the owner over 30 entries, with metadata. */
  async function savedSearch(w: World): Promise<string> {
    const { s, owner } = w
    await ingest(s, lines(30))
    const id = await launch(s, owner.jwt, { SearchString: 'tag=web grep 1', SearchStart: entry(2).TS, SearchEnd: entry(29).TS, Metadata: { note: 'n' } })
    await call(s, 'PATCH', `/api/searchctrl/${id}/save`, owner.jwt)
    await call(s, 'PUT', `/api/searchctrl/${id}/detach`, owner.jwt)
    await s.searches.settled()
    return id
  }

  /** The archive download, as bytes. */
  async function exported(s: TestServer, jwt: string, id: string) {
    const res = await s.app.handle(new Request(`http://localhost/api/searchctrl/${id}/download/archive`, { headers: { authorization: `Bearer ${jwt}` } }))
    return { status: res.status, type: res.headers.get('content-type'), bytes: new Uint8Array(await res.arrayBuffer()) }
  }

  /** A multipart body with the archive as `file` and the given text fields. */
  async function form(bytes: Uint8Array, fields: Record<string, string> = {}): Promise<CallOptions> {
    const f = new FormData()
    f.append('file', new Blob([bytes]), 'search.tar.gz')
    for (const [name, value] of Object.entries(fields)) f.append(name, value)
    const res = new Response(f)
    const type = res.headers.get('content-type')! // read before the body: Bun drops it afterwards
    return { body: new Uint8Array(await res.arrayBuffer()), headers: { 'content-type': type } }
  }

  const importAs = async (s: TestServer, jwt: string, bytes: Uint8Array, fields: Record<string, string> = {}) =>
    s.call('POST', '/api/searchctrl/import', { jwt, ...(await form(bytes, fields)) })

  test('export → import round trip: a SAVED search of the importer with the same query, ranges and results', async () => {
    const w = await setup()
    const { s, owner, member, stranger, gid } = w
    const id = await savedSearch(w)
    const original = { details: await details(s, owner.jwt, id), results: await results(s, owner.jwt, id) }
    expect(original.results.length).toBe(11) // lines 2..28 containing a 1: 10 to 19 and 21
    const archive = await exported(s, member.jwt, id)
    expect(archive.status).toBe(200)
    expect(archive.type).toBe('application/gzip')

    s.clock.advance(5000)
    const res = await importAs(s, member.jwt, archive.bytes, { GID: String(gid), BatchName: 'batch 7', BatchInfo: 'from the test' })
    expect({ status: res.status, text: res.text }).toMatchObject({ status: 200 })
    const copy = res.body
    expect(copy.ID).not.toBe(id)
    const same = ['UserQuery', 'EffectiveQuery', 'StartRange', 'EndRange', 'Started', 'Finished', 'StoreSize', 'IndexSize', 'ItemCount', 'Metadata'] as const
    for (const field of same) expect({ field, value: copy[field] }).toEqual({ field, value: original.details[field] })
    expect(copy).toMatchObject({
      UID: member.uid,
      GIDs: [gid],
      State: 'DORMANT/SAVED',
      Import: { Imported: true, Time: new Date(s.clock.now()).toISOString(), BatchName: 'batch 7', BatchInfo: 'from the test' },
    })
    expect(await details(s, member.jwt, copy.ID)).toEqual({ ...copy, Duration: original.details.Duration })
    expect(await results(s, member.jwt, copy.ID)).toEqual(original.results)
    // Shared with the group: the owner sees it; its results are in the blob store, nothing in the working directory.
    expect((await call(s, 'GET', '/api/searchctrl', owner.jwt)).body.map((e: { ID: string }) => e.ID)).toContain(copy.ID)
    expect((await blobsOf(s, copy.ID))[0]).toEqual({ size: original.details.StoreSize })
    expect(workFiles(s)).toEqual([])

    // The copy exports and imports again (without GID: not shared) to the same results.
    const again = await importAs(s, stranger.jwt, (await exported(s, member.jwt, copy.ID)).bytes)
    expect(again.status).toBe(200)
    expect(again.body).toMatchObject({ UID: stranger.uid, GIDs: [], Import: { Imported: true, BatchName: '', BatchInfo: '' } })
    // the list entry of an imported search carries the same Import, and no launch method
    const entry = (await call(s, 'GET', '/api/searchctrl', member.jwt)).body.find((e: { ID: string }) => e.ID === copy.ID)
    expect(entry).toMatchObject({ Import: copy.Import, LaunchInfo: { ...copy.LaunchInfo, method: '' }, UserQuery: copy.UserQuery, StartRange: copy.StartRange })
    expect(await results(s, stranger.jwt, again.body.ID)).toEqual(original.results)

    // Imported searches survive a restart like any saved search.
    await s.restart()
    expect(await results(s, stranger.jwt, again.body.ID)).toEqual(original.results)
  })

  test('import also takes the JWT in cookie token', async () => {
    const w = await setup()
    const id = await savedSearch(w)
    const archive = await exported(w.s, w.owner.jwt, id)
    const body = await form(archive.bytes)
    // from this server's own page (auth.test.ts: a cookie from elsewhere is refused)
    const res = await w.s.call('POST', '/api/searchctrl/import', { ...body, headers: { ...body.headers, cookie: `token=${w.member.jwt}`, origin: 'http://localhost' } })
    expect(res.status).toBe(200)
    expect(res.body.UID).toBe(w.member.uid)
  })

  test('only a saved search is exported (409); a stranger gets 404', async () => {
    const w = await setup()
    const { s, owner, stranger } = w
    const running = await launch(s, owner.jwt, 'tag=web')
    expectError(await call(s, 'GET', `/api/searchctrl/${running}/download/archive`, owner.jwt), 409)
    const saved = await savedSearch(w)
    expectError(await call(s, 'GET', `/api/searchctrl/${saved}/download/archive`, stranger.jwt), 404)
  })

  test('GID: an admin may name any group, a user only their own (403), a bad GID is 400; refused imports leave nothing', async () => {
    const w = await setup()
    const { s, owner, member, stranger } = w
    const archive = (await exported(s, owner.jwt, await savedSearch(w))).bytes
    const other = await s.createGroup('others', [stranger.uid])
    const before = { store: storeSnapshot(s), blobs: blobFiles(s) }
    const refusedImport = async (jwt: string, fields: Record<string, string>, status: number) => {
      expectError(await importAs(s, jwt, archive, fields), status)
      expect(storeSnapshot(s)).toEqual(before.store)
      expect(blobFiles(s)).toEqual(before.blobs)
      expect(workFiles(s)).toEqual([])
    }
    await refusedImport(member.jwt, { GID: String(other) }, 403)
    await refusedImport(member.jwt, { GID: 'abc' }, 400)
    await refusedImport(member.jwt, { GID: '-3' }, 400)
    await refusedImport(member.jwt, { BatchName: 'x'.repeat(5000) }, 400)
    const byStranger = await importAs(s, stranger.jwt, archive, { GID: String(other) })
    expect(byStranger.body.GIDs).toEqual([other])
    const byAdmin = await importAs(s, s.adminJwt, archive, { GID: '424242' })
    expect(byAdmin.body).toMatchObject({ UID: 1, GIDs: [424242] })
  })

  /** A .tar.gz of the given members, in order. */
  async function tarGz(members: { name: string; body: string }[]): Promise<Uint8Array> {
    const pack = tar.pack()
    const chunks: Buffer[] = []
    const done = (async () => {
      for await (const chunk of pack) chunks.push(chunk as Buffer)
    })()
    for (const m of members)
      await new Promise<void>((resolve, reject) => pack.entry({ name: m.name }, Buffer.from(m.body), (e) => (e ? reject(e) : resolve())))
    pack.finalize()
    await done
    return new Uint8Array(gzipSync(Buffer.concat(chunks)))
  }
  const description = JSON.stringify({
    Format: 'quarry-search-archive', Version: 1, UserQuery: 'tag=x', EffectiveQuery: 'tag=x',
    StartRange: ZERO_TIME, EndRange: ZERO_TIME, Started: ZERO_TIME, Finished: ZERO_TIME,
  })
  const valid = async () => new Uint8Array(await new Response(writeSearchArchive(JSON.parse(description), lines(50).map((e) => ({ ...e })))).arrayBuffer())

  test.each([
    ['garbage', async () => crypto.getRandomValues(new Uint8Array(4096))],
    ['an empty file', async () => new Uint8Array(0)],
    ['a truncated archive', async () => (await valid()).slice(0, Math.floor((await valid()).length / 2))],
    ['an archive without its trailer', async () => tarGz([{ name: 'search.json', body: description }, { name: 'results/000001.ndjson', body: '{"a":1}\n' }])],
    ['path traversal', async () => tarGz([{ name: 'search.json', body: description }, { name: '../../etc/evil.ndjson', body: '{"a":1}\n' }])],
    ['an absolute path', async () => tarGz([{ name: '/tmp/evil', body: 'x' }])],
    ['a zip bomb', async () => tarGz([{ name: 'search.json', body: description }, { name: 'results/000001.ndjson', body: `${'{"a":"'.padEnd(1000, 'a')}"}\n`.repeat(4000) }])],
    ['an oversized archive', async () =>
      new Uint8Array(await new Response(writeSearchArchive(JSON.parse(description), Array.from({ length: 100 }, () => ({ Data: Buffer.from(crypto.getRandomValues(new Uint8Array(1024))).toString('base64') })))).arrayBuffer())],
  ])('%s is refused with 400 and leaves nothing behind', async (_, make) => {
    // 64 KiB archives at most, expanding to 1 MiB at most.
    const w = await setup({ config: { maxImportBytes: 64 * 1024 } })
    const { s, owner } = w
    await savedSearch(w)
    const bytes = await make()
    const before = { store: storeSnapshot(s), blobs: blobFiles(s), list: (await call(s, 'GET', '/api/searchctrl/all', s.adminJwt)).body }
    const res = await importAs(s, owner.jwt, bytes)
    expectError(res, 400)
    expect(res.body.Error).toContain('search archive')
    expect(storeSnapshot(s)).toEqual(before.store)
    expect(blobFiles(s)).toEqual(before.blobs)
    expect(workFiles(s)).toEqual([])
    expect((await call(s, 'GET', '/api/searchctrl/all', s.adminJwt)).body).toEqual(before.list)
  })

  test('a body that is no multipart form, or has no file part, is 400', async () => {
    const { s, owner } = await setup()
    await refused(s, 400, 'POST', '/api/searchctrl/import', { jwt: owner.jwt, json: { file: 'x' } })
    const noFile = new FormData()
    noFile.append('GID', '1')
    const res = new Response(noFile)
    const type = res.headers.get('content-type')!
    await refused(s, 400, 'POST', '/api/searchctrl/import', { jwt: owner.jwt, body: new Uint8Array(await res.arrayBuffer()), headers: { 'content-type': type } })
    expect(workFiles(s)).toEqual([])
  })
})
