// Retention and deletion through the real app (server/search/retention.ts, plugins/admin-data): over generated
// entries spread across rows and small segments of mixed tags, a deletion or a sweep leaves exactly what an
// independent computation over the ingested entries says (searched through the API), refuses bad input with nothing
// changed, takes deleted bytes out of the owner's usage, removes the blobs of unregistered segments, keeps saved
// searches' results, and a search walking while a deletion rewrites its segments answers no entry twice and every
// kept entry once.
import { afterEach, describe, expect, test } from 'bun:test'
import { type Config, ConfigError, loadConfig } from '../server/runtime/config'
import { SegmentedEntries } from '../server/search/segments'
import type { Cursor } from '../server/search/entries'
import { type TestServer, type TestServerOptions, blobFiles, createTestServer, expectError, storeSnapshot } from './helpers'

const DAY = 86_400_000
const servers: TestServer[] = []
afterEach(() => {
  for (const s of servers.splice(0)) void s.close()
})

async function server(config: Partial<Config> = {}, search?: TestServerOptions['search']) {
  // Segments of about 2 KiB: a few dozen entries each, of every tag, so deletions cut through many of them.
  const s = await createTestServer(config, { segments: { targetBytes: 2048 }, search })
  servers.push(s)
  return s
}

interface Sent {
  ts: number
  tag: string
  text: string
}

/** A deterministic generator (mulberry32), so that a failure can be replayed. */
function random(seed: number) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** `n` entries of tags web, audit and db at times within [from, from + span), in random order. */
function generate(n: number, from: number, span: number, seed: number, tags = ['web', 'audit', 'db']): Sent[] {
  const r = random(seed)
  return Array.from({ length: n }, (_, i) => {
    const tag = tags[Math.floor(r() * tags.length)]!
    return { ts: from + Math.floor(r() * span), tag, text: `${tag} entry ${seed}-${i} ${'z'.repeat(Math.floor(r() * 60))}` }
  })
}

async function ingest(s: TestServer, jwt: string, sent: readonly Sent[]) {
  for (let i = 0; i < sent.length; i += 200) {
    const json = sent.slice(i, i + 200).map((e) => ({ TS: new Date(e.ts).toISOString(), Tag: e.tag, SRC: '192.0.2.1', Data: Buffer.from(e.text).toString('base64') }))
    const res = await s.call('POST', '/api/ingest/json', { jwt, json })
    expect(res.status).toBe(200)
  }
}

async function launch(s: TestServer, jwt: string, query: string, start: number, end: number): Promise<string> {
  const res = await s.call('POST', '/api/searchctrl/launch', {
    jwt,
    json: { SearchString: query, SearchStart: new Date(start).toISOString(), SearchEnd: new Date(end).toISOString() },
  })
  expect(res.status).toBe(200)
  return res.body.SearchID as string
}

async function download(s: TestServer, jwt: string, id: string): Promise<string[]> {
  const res = await s.call('GET', `/api/searchctrl/${id}/download/json`, { jwt })
  expect(res.status).toBe(200)
  return (res.body as { Data: string }[]).map((r) => Buffer.from(r.Data, 'base64').toString())
}

/** The texts a search of `query` over [start, end) answers, in its order. */
async function search(s: TestServer, query: string, start: number, end: number): Promise<string[]> {
  const id = await launch(s, s.adminJwt, query, start, end)
  await s.searches.settled()
  return download(s, s.adminJwt, id)
}

const sorted = (a: readonly string[]) => [...a].sort()
const segmentCount = async (s: TestServer) => Number((await s.rows('SELECT count(*) AS n FROM entry_segments'))[0]!.n)
const rowCount = async (s: TestServer) => Number((await s.rows('SELECT count(*) AS n FROM entries'))[0]!.n)
const segmentBlobs = (s: TestServer) => blobFiles(s).filter((f) => f.includes('segments'))

/** What the quota counts for an entry (server/search/entries.ts entryBytes). */
const counted = (e: Sent) => Buffer.byteLength(e.text) + Buffer.byteLength(e.tag) + Buffer.byteLength('192.0.2.1') + 16

describe('POST /api/admin/entries/delete', () => {
  test("deletes exactly a tag's entries in [Start, End), in rows and in the segments it cuts through; everything else stays", async () => {
    const s = await server()
    const T0 = Date.parse('2026-03-01T00:00:00Z')
    const sent = generate(1500, T0, 10 * DAY, 1)
    await ingest(s, s.adminJwt, sent.slice(0, 1200))
    await s.entries.compact({ all: true })
    // The rest stays as rows (not compacted), some of them inside the range too.
    await ingest(s, s.adminJwt, sent.slice(1200))
    expect(await segmentCount(s)).toBeGreaterThan(20)
    expect(await rowCount(s)).toBe(300)
    const blobsBefore = segmentBlobs(s)

    const start = T0 + 3 * DAY + 12_345
    const end = T0 + 6 * DAY + 999
    const gone = (e: Sent) => e.tag === 'audit' && e.ts >= start && e.ts < end
    const res = await s.call('POST', '/api/admin/entries/delete', {
      jwt: s.adminJwt,
      json: { Tag: 'audit', Start: new Date(start).toISOString(), End: new Date(end).toISOString() },
    })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ Tag: 'audit', Start: new Date(start).toISOString(), End: new Date(end).toISOString(), Deleted: sent.filter(gone).length })
    expect(res.body.Finished).not.toBeNull()
    expect(sent.filter(gone).length).toBeGreaterThan(100)

    for (const tag of ['web', 'audit', 'db'])
      expect(sorted(await search(s, `tag=${tag}`, T0, T0 + 11 * DAY))).toEqual(sorted(sent.filter((e) => e.tag === tag && !gone(e)).map((e) => e.text)))
    // The blobs of the rewritten segments are gone; every registered segment has its blob, and no other is left.
    const keys = (await s.rows('SELECT key FROM entry_segments')).map((r) => String(r.key))
    const files = segmentBlobs(s)
    expect(files.length).toBe(keys.length)
    expect(files.filter((f) => blobsBefore.includes(f)).length).toBeLessThan(blobsBefore.length)
    expect(await s.rows('SELECT key FROM entry_segment_removals WHERE NOT blob_gone')).toEqual([])
    // A count (rows and segments, without reading the entries) agrees.
    const [audit] = await s.store.entries.tagsNamed(['audit'])
    expect(await s.entries.count([audit!.id], T0, T0 + 11 * DAY)).toBe(sent.filter((e) => e.tag === 'audit' && !gone(e)).length)
    // Listed as finished.
    const listed = await s.call('GET', '/api/admin/entries/deletions', { jwt: s.adminJwt })
    expect(listed.body).toEqual([res.body])

    // Done again: nothing more goes.
    const again = await s.call('POST', '/api/admin/entries/delete', {
      jwt: s.adminJwt,
      json: { Tag: 'audit', Start: new Date(start).toISOString(), End: new Date(end).toISOString() },
    })
    expect(again.body.Deleted).toBe(0)
    // A tag nobody ingested: nothing.
    const none = await s.call('POST', '/api/admin/entries/delete', { jwt: s.adminJwt, json: { Tag: 'nothing', Start: '2026-01-01T00:00:00Z', End: '2027-01-01T00:00:00Z' } })
    expect(none.body.Deleted).toBe(0)
  })

  test('bad input is refused with 400 and nothing changes', async () => {
    const s = await server()
    await ingest(s, s.adminJwt, generate(50, Date.parse('2026-03-01T00:00:00Z'), DAY, 2))
    const before = { store: storeSnapshot(s), blobs: blobFiles(s) }
    for (const json of [
      { Tag: 'bad tag', Start: '2026-03-01T00:00:00Z', End: '2026-03-02T00:00:00Z' },
      { Tag: 'web', Start: 'yesterday', End: '2026-03-02T00:00:00Z' },
      { Tag: 'web', Start: '2026-03-01T00:00:00Z', End: '' },
      { Tag: 'web', Start: '2026-03-02T00:00:00Z', End: '2026-03-01T00:00:00Z' },
      { Tag: 'web', Start: '2026-03-01T00:00:00Z', End: '2026-03-01T00:00:00Z' },
      { Tag: 'web', Start: '2026-03-01T00:00:00Z' },
    ]) {
      const res = await s.call('POST', '/api/admin/entries/delete', { jwt: s.adminJwt, json })
      expectError(res, 400)
    }
    expect({ store: storeSnapshot(s), blobs: blobFiles(s) }).toEqual(before)
  })

  test("the deleted entries' bytes leave their owner's usage; a saved search keeps its results", async () => {
    const s = await server()
    const alice = await s.createUser()
    const T0 = Date.parse('2026-04-01T00:00:00Z')
    const sent = generate(600, T0, 4 * DAY, 3)
    await ingest(s, alice.jwt, sent)
    await s.entries.compact({ all: true })
    const total = sent.reduce((n, e) => n + counted(e), 0)
    expect(await s.store.quota.usage(alice.uid)).toBe(total)

    // A search saved before the deletion.
    const saved = await launch(s, alice.jwt, 'tag=web', T0, T0 + 5 * DAY)
    await s.searches.settled()
    expect((await s.call('PATCH', `/api/searchctrl/${saved}/save`, { jwt: alice.jwt })).status).toBe(200)
    await s.searches.settled()
    const savedBefore = await download(s, alice.jwt, saved)
    const usageWithSaved = await s.store.quota.usage(alice.uid)

    const start = T0 + DAY
    const end = T0 + 3 * DAY
    const gone = sent.filter((e) => e.tag === 'web' && e.ts >= start && e.ts < end)
    const res = await s.call('POST', '/api/admin/entries/delete', {
      jwt: s.adminJwt,
      json: { Tag: 'web', Start: new Date(start).toISOString(), End: new Date(end).toISOString() },
    })
    expect(res.body.Deleted).toBe(gone.length)
    expect(await s.store.quota.usage(alice.uid)).toBe(usageWithSaved - gone.reduce((n, e) => n + counted(e), 0))
    expect(sorted(await download(s, alice.jwt, saved))).toEqual(sorted(savedBefore))
    expect(savedBefore.length).toBe(sent.filter((e) => e.tag === 'web').length)
  })

  test('a search walking while a deletion rewrites its segments answers every kept entry once and no entry twice', async () => {
    let during: (() => Promise<void>) | undefined
    const s = await server(
      {},
      {
        chunk: 16,
        step: async () => {
          const work = during
          during = undefined
          await work?.()
        },
      },
    )
    const T0 = Date.parse('2026-05-01T00:00:00Z')
    const sent = generate(900, T0, 6 * DAY, 4)
    await ingest(s, s.adminJwt, sent)
    await s.entries.compact({ all: true })
    const start = T0 + 2 * DAY
    const end = T0 + 5 * DAY
    // Once the walk has begun, the deletion runs to its end between two of its steps.
    during = async () => {
      const rec = await s.removal.deleteEntries('db', start, end, null)
      expect(rec.deleted).toBe(sent.filter((e) => e.tag === 'db' && e.ts >= start && e.ts < end).length)
    }
    const found = await search(s, 'tag=web,audit,db', T0, T0 + 7 * DAY)
    expect(during).toBeUndefined()
    expect(new Set(found).size).toBe(found.length)
    const deleted = new Set(sent.filter((e) => e.tag === 'db' && e.ts >= start && e.ts < end).map((e) => e.text))
    const kept = sent.filter((e) => !deleted.has(e.text)).map((e) => e.text)
    expect(sorted(found.filter((t) => !deleted.has(t)))).toEqual(sorted(kept))
    // Afterwards, none of the deleted.
    expect(sorted(await search(s, 'tag=db', T0, T0 + 7 * DAY))).toEqual(sorted(sent.filter((e) => e.tag === 'db' && !deleted.has(e.text)).map((e) => e.text)))
  })
})

describe('another replica walking while segments go', () => {
  test('its walk, on a segment list read before the deletions, answers every kept entry once; its count agrees afterwards', async () => {
    const s = await server()
    const T0 = Date.parse('2026-07-01T00:00:00Z')
    const sent = generate(1200, T0, 6 * DAY, 8)
    await ingest(s, s.adminJwt, sent)
    await s.entries.compact({ all: true })
    // A second reader over the same store and blobs: another replica, which hears of a deletion only from the store.
    // It reads the segment list (a count reads no segment), then segments go before its walk reads any of them.
    const other = new SegmentedEntries(s.store.entries, s.store.segments, s.blobs, { targetBytes: 2048 })
    expect(await other.count(null, T0, T0 + 7 * DAY)).toBe(sent.length)
    const first = (e: Sent) => e.tag === 'web' && e.ts < T0 + 4 * DAY
    const second = (e: Sent) => e.tag === 'db' && e.ts >= T0 + 3 * DAY
    expect((await s.removal.deleteEntries('web', T0, T0 + 4 * DAY, null)).deleted).toBe(sent.filter(first).length)
    const found: string[] = []
    let after: Cursor = { ts: Number.MIN_SAFE_INTEGER, tagId: -1, id: -1 }
    let steps = 0
    for (;;) {
      const rows = await other.scan(null, after, T0 + 7 * DAY, 16)
      if (rows.length === 0) break
      for (const r of rows) if (r.data !== null) found.push(Buffer.from(r.data).toString())
      after = rows.at(-1)!
      // And during the walk, after its first step.
      if (++steps === 1) expect((await s.removal.deleteEntries('db', T0 + 3 * DAY, T0 + 7 * DAY, null)).deleted).toBe(sent.filter(second).length)
    }
    expect(steps).toBeGreaterThan(10)
    expect(new Set(found).size).toBe(found.length)
    expect(found.filter((t) => sent.some((e) => e.text === t && first(e)))).toEqual([])
    expect(sorted(found.filter((t) => !sent.some((e) => e.text === t && second(e))))).toEqual(sorted(sent.filter((e) => !first(e) && !second(e)).map((e) => e.text)))
    expect(await other.count(null, T0, T0 + 7 * DAY)).toBe(sent.filter((e) => !first(e) && !second(e)).length)
  })
})

describe('retention', () => {
  test('per-tag ages (the API) and the store-wide age (the variable): a sweep removes exactly the entries past them', async () => {
    const s = await server({ retentionRules: [{ tag: '', maxAgeMs: 20 * DAY, maxBytes: null }] })
    const now = s.clock.now()
    // 'keep' (kept for ever) only in the last 10 days: the segments older than 30 days are past every age in them.
    const sent = [...generate(1200, now - 40 * DAY, 40 * DAY, 5), ...generate(300, now - 10 * DAY, 10 * DAY, 7, ['keep'])].sort((a, b) => a.ts - b.ts)
    await ingest(s, s.adminJwt, sent.slice(0, 1300))
    await s.entries.compact({ all: true })
    await ingest(s, s.adminJwt, sent.slice(1300))
    const put = await s.call('PUT', '/api/admin/retention', {
      jwt: s.adminJwt,
      json: {
        Rules: [
          { Tag: 'web', MaxAgeMs: 5 * DAY, MaxBytes: null },
          { Tag: 'audit', MaxAgeMs: 30 * DAY, MaxBytes: null },
          { Tag: 'keep', MaxAgeMs: 0, MaxBytes: null },
        ],
      },
    })
    expect(put.status).toBe(200)
    expect(put.body.Effective).toEqual([
      { Tag: '', MaxAgeMs: 20 * DAY, MaxBytes: null },
      { Tag: 'audit', MaxAgeMs: 30 * DAY, MaxBytes: 0 },
      { Tag: 'keep', MaxAgeMs: 0, MaxBytes: 0 },
      { Tag: 'web', MaxAgeMs: 5 * DAY, MaxBytes: 0 },
    ])
    expect(put.body.Variables).toEqual([{ Tag: '', MaxAgeMs: 20 * DAY, MaxBytes: null }])
    expect((await s.call('GET', '/api/admin/retention', { jwt: s.adminJwt })).body).toEqual(put.body)

    const age: Record<string, number> = { web: 5 * DAY, audit: 30 * DAY, db: 20 * DAY, keep: Number.POSITIVE_INFINITY }
    const stays = (e: Sent) => e.ts >= now - age[e.tag]!
    const report = await s.removal.sweep()
    expect(report.entriesRemoved + report.rowsRemoved).toBe(sent.filter((e) => !stays(e)).length)
    expect(report.segmentsRemoved).toBeGreaterThan(0)
    for (const tag of ['web', 'audit', 'db', 'keep'])
      expect(sorted(await search(s, `tag=${tag}`, now - 41 * DAY, now + 1))).toEqual(sorted(sent.filter((e) => e.tag === tag && stays(e)).map((e) => e.text)))
    expect(segmentBlobs(s).length).toBe(await segmentCount(s))
    // The admin (uid 1) ingested everything: what is left is what it stores.
    expect(await s.store.quota.usage(1)).toBe(sent.filter(stays).reduce((n, e) => n + counted(e), 0))
    // A second sweep finds nothing more to do.
    expect(await s.removal.sweep()).toEqual({ deletionsResumed: 0, rowsRemoved: 0, segmentsRemoved: 0, segmentsRewritten: 0, entriesRemoved: 0 })
  })

  test('a size limit per tag removes the oldest of its segments first, down to the limit', async () => {
    const s = await server()
    const now = s.clock.now()
    const sent = generate(1200, now - 10 * DAY, 10 * DAY, 6, ['big', 'small'])
    await ingest(s, s.adminJwt, sent)
    await s.entries.compact({ all: true })
    const big = sent.filter((e) => e.tag === 'big')
    const bigBytes = big.reduce((n, e) => n + counted(e), 0)
    const limit = Math.floor(bigBytes / 3)
    const put = await s.call('PUT', '/api/admin/retention', { jwt: s.adminJwt, json: { Rules: [{ Tag: 'big', MaxAgeMs: null, MaxBytes: limit }] } })
    expect(put.status).toBe(200)
    await s.removal.sweep()
    const left = await search(s, 'tag=big', now - 11 * DAY, now + 1)
    const leftSet = new Set(left)
    const leftBytes = big.filter((e) => leftSet.has(e.text)).reduce((n, e) => n + counted(e), 0)
    expect(leftBytes).toBeLessThanOrEqual(limit)
    expect(leftBytes).toBeGreaterThan(limit / 2)
    // The oldest went: every entry left is newer than every entry removed.
    const removed = big.filter((e) => !leftSet.has(e.text))
    expect(Math.max(...removed.map((e) => e.ts))).toBeLessThanOrEqual(Math.min(...big.filter((e) => leftSet.has(e.text)).map((e) => e.ts)))
    // The other tag is untouched.
    expect(sorted(await search(s, 'tag=small', now - 11 * DAY, now + 1))).toEqual(sorted(sent.filter((e) => e.tag === 'small').map((e) => e.text)))
    expect(await s.store.quota.usage(1)).toBe(sent.filter((e) => e.tag === 'small' || leftSet.has(e.text)).reduce((n, e) => n + counted(e), 0))
  })

  test('PUT /api/admin/retention refuses bad rules with 400 and changes nothing', async () => {
    const s = await server()
    // a stored rule, which a refused request must leave as it is
    expect((await s.call('PUT', '/api/admin/retention', { jwt: s.adminJwt, json: { Rules: [{ Tag: 'web', MaxAgeMs: DAY, MaxBytes: null }] } })).status).toBe(200)
    const before = storeSnapshot(s)
    for (const Rules of [
      // not a list: Elysia would coerce a string into one ("" into [], which replaced every rule)
      '',
      'x',
      null,
      { Tag: 'web', MaxAgeMs: 1, MaxBytes: null },
      [{ Tag: 'bad tag', MaxAgeMs: 1, MaxBytes: null }],
      [{ Tag: '', MaxAgeMs: 1, MaxBytes: 10 }],
      [
        { Tag: 'web', MaxAgeMs: 1, MaxBytes: null },
        { Tag: 'web', MaxAgeMs: 2, MaxBytes: null },
      ],
      [{ Tag: 'web', MaxAgeMs: -1, MaxBytes: null }],
      [{ Tag: 'web', MaxAgeMs: 1.5, MaxBytes: null }],
    ]) {
      const res = await s.call('PUT', '/api/admin/retention', { jwt: s.adminJwt, json: { Rules } })
      expectError(res, 400)
    }
    expect(storeSnapshot(s)).toEqual(before)
  })
})

describe('retention variables', () => {
  test('QUARRY_RETENTION, QUARRY_RETENTION_TAGS and QUARRY_RETENTION_SIZES are read into one rule per tag', () => {
    const { config } = loadConfig({
      QUARRY_RETENTION: '90d',
      QUARRY_RETENTION_TAGS: 'web=30d, audit=none,debug=12h',
      QUARRY_RETENTION_SIZES: 'web=10GiB,big=512MiB',
      QUARRY_RETENTION_INTERVAL: '15m',
    })
    expect(config.retentionRules).toEqual([
      { tag: '', maxAgeMs: 90 * DAY, maxBytes: null },
      { tag: 'web', maxAgeMs: 30 * DAY, maxBytes: 10 * 1024 ** 3 },
      { tag: 'audit', maxAgeMs: 0, maxBytes: null },
      { tag: 'debug', maxAgeMs: 12 * 3_600_000, maxBytes: null },
      { tag: 'big', maxAgeMs: null, maxBytes: 512 * 1024 ** 2 },
    ])
    expect(config.retentionIntervalMs).toBe(15 * 60_000)
    expect(loadConfig({}).config.retentionRules).toEqual([])
    expect(loadConfig({}).config.retentionIntervalMs).toBe(3_600_000)
    expect(loadConfig({ QUARRY_RETENTION: 'none' }).config.retentionRules).toEqual([{ tag: '', maxAgeMs: 0, maxBytes: null }])
  })

  test('a bad value stops the start with one line naming the variable', () => {
    for (const [env, words] of [
      [{ QUARRY_RETENTION: 'a month' }, 'QUARRY_RETENTION: "a month" is not a period or none'],
      [{ QUARRY_RETENTION_TAGS: 'web' }, 'QUARRY_RETENTION_TAGS: "web" is not tag=value'],
      [{ QUARRY_RETENTION_TAGS: 'web=1d,web=2d' }, 'QUARRY_RETENTION_TAGS: tag web is named twice'],
      [{ QUARRY_RETENTION_TAGS: 'bad tag=1d' }, 'QUARRY_RETENTION_TAGS: "bad tag=1d" is not tag=value'],
      [{ QUARRY_RETENTION_TAGS: 'web=soon' }, 'QUARRY_RETENTION_TAGS (web): "soon" is not a period or none'],
      [{ QUARRY_RETENTION_SIZES: 'web=lots' }, 'QUARRY_RETENTION_SIZES (web): "lots" is not a size'],
      [{ QUARRY_RETENTION_INTERVAL: '10ms' }, 'QUARRY_RETENTION_INTERVAL: must be from 100ms to 7d'],
    ] as [Record<string, string>, string][]) {
      let error: unknown
      try {
        loadConfig(env)
      } catch (e) {
        error = e
      }
      expect(error).toBeInstanceOf(ConfigError)
      expect((error as Error).message).toContain(words)
      expect((error as Error).message).not.toContain('\n')
    }
  })
})
