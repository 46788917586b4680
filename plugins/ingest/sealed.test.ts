// A batch of at least SEALED_INGEST_BYTES of data is written straight into sealed segments (server/search/segments.ts
// ingestSealed), through the real app: stored whole before its 2xx and found by a search exactly as sent, among rows
// stored before and after it (no id drawn twice, nothing lost or doubled by a later compaction); cut into segments of
// the compaction's size; refused whole past the quota with nothing changed; a batch naming a new tag takes the rows.
// On PostgreSQL (no sealed ingest: its repository has no reserveIds) every batch takes the rows, and the same
// searches find the same entries.
import { afterEach, expect, test } from 'bun:test'
import { type TestServer, blobFiles, createTestServer, expectError, storeSnapshot } from '../../test/helpers'
import { type Found, byData, search } from '../../test/ingested'
import { SEALED_INGEST_BYTES } from '../../server/search/segments'
import type { Config } from '../../server/runtime/config'
import { onPg } from '../../test/pg'

/** Whether large batches go into segments on this run's store. */
const sealing = !onPg

const KiB = 1024
const servers: TestServer[] = []
afterEach(() => {
  for (const s of servers.splice(0)) s.close()
})

async function server(config: Partial<Config> = {}, segmentBytes = 64 * KiB) {
  const s = await createTestServer({ maxBodyBytes: 4 << 20, ...config }, { segments: { targetBytes: segmentBytes } })
  servers.push(s)
  return s
}

const T0 = Date.parse('2026-01-01T00:00:00Z')

interface Sent extends Found {}

/** `count` entries named `name-i`, padded to `bytes` of data, `step` ms apart from `start` (0: all at `start`). */
function entries(name: string, count: number, bytes: number, start: number, step: number, tag = 'web'): Sent[] {
  return Array.from({ length: count }, (_, i) => ({
    ts: start + i * step,
    tag,
    src: i % 3 === 0 ? '192.0.2.7' : '',
    data: `${name}-${i} `.padEnd(bytes, String.fromCharCode(97 + (i % 26))),
  }))
}

const body = (list: Sent[]) => list.map((e) => ({ TS: new Date(e.ts).toISOString(), Tag: e.tag, SRC: e.src, Data: Buffer.from(e.data).toString('base64') }))

const dataBytes = (list: Sent[]) => list.reduce((n, e) => n + Buffer.byteLength(e.data), 0)

async function stored(s: TestServer) {
  const [r] = await s.rows('SELECT (SELECT count(*) FROM entries) AS rows, (SELECT coalesce(sum(count), 0) FROM entry_segments) AS sealed, (SELECT count(*) FROM entry_segments) AS segments')
  return { rows: Number(r!.rows), sealed: Number(r!.sealed), segments: Number(r!.segments) }
}

test('a large batch goes into segments, not rows; a search finds every entry once among rows before and after it, also after compaction', async () => {
  const s = await server()
  // Rows first (the tag is new: a batch that creates a tag takes the rows), then the large batch, then rows again;
  // their times interleave, and some entries share a time.
  const before = entries('before', 40, 100, T0, 7)
  const large = entries('large', 5000, 120, T0, 1)
  const after = entries('after', 40, 100, T0 + 3, 5)
  expect(dataBytes(large)).toBeGreaterThanOrEqual(SEALED_INGEST_BYTES)
  expect((await s.call('POST', '/api/ingest/json', { jwt: s.adminJwt, json: body(before) })).status).toBe(200)
  expect(await stored(s)).toEqual({ rows: 40, sealed: 0, segments: 0 })
  const res = await s.call('POST', '/api/ingest/json', { jwt: s.adminJwt, json: body(large) })
  expect(res.status).toBe(200)
  expect(res.body).toEqual({ Count: 5000, Size: dataBytes(large), Tags: ['web'] })
  // In segments of at most the compaction's size (64 KiB here): 600,000 bytes make 10.
  const afterLarge = await stored(s)
  if (sealing) expect(afterLarge).toEqual({ rows: 40, sealed: 5000, segments: Math.ceil(dataBytes(large) / (64 * KiB)) })
  else expect(afterLarge).toEqual({ rows: 5040, sealed: 0, segments: 0 })
  expect((await s.call('POST', '/api/ingest/json', { jwt: s.adminJwt, json: body(after) })).status).toBe(200)

  const sent = [...before, ...large, ...after].sort(byData)
  const found = await search(s, s.adminJwt, 'tag=web')
  expect(found.length).toBe(sent.length)
  expect([...found].sort(byData)).toEqual(sent)
  // Every row id is distinct from every id a segment holds: a compaction of all rows loses and doubles nothing.
  while ((await s.entries.compact({ all: true })) > 0) {}
  expect((await stored(s)).rows).toBe(0)
  const again = await search(s, s.adminJwt, 'tag=web')
  expect([...again].sort(byData)).toEqual(sent)
  // The search's order is the store's: time, then the order the entries came in.
  const order = again.map((f) => f.data)
  const expected = [...before.map((e, i) => ({ e, k: 0, i })), ...large.map((e, i) => ({ e, k: 1, i })), ...after.map((e, i) => ({ e, k: 2, i }))]
    .sort((a, b) => a.e.ts - b.e.ts || a.k - b.k || a.i - b.i)
    .map((x) => x.e.data)
  expect(order.length === expected.length && (order.every((d, i) => d === expected[i]) || order.every((d, i) => d === expected[expected.length - 1 - i]))).toBe(true)
})

test('past the quota a large batch is refused whole and changes nothing; one that fits is counted by tag', async () => {
  const s = await server({ userQuotaBytes: 1 << 20 })
  const u = await s.createUser()
  const first = entries('first', 10, 100, T0, 1)
  expect((await s.call('POST', '/api/ingest/json', { jwt: u.jwt, json: body(first) })).status).toBe(200)
  const used = first.reduce((n, e) => n + Buffer.byteLength(e.data) + e.tag.length + e.src.length + 16, 0)
  expect(await s.store.quota.usage(u.uid)).toBe(used)
  // 1.2 MiB of data: past the 1 MiB quota.
  const tooMuch = entries('too-much', 4000, 320, T0, 1)
  const before = { store: storeSnapshot(s), blobs: blobFiles(s) }
  const refused = await s.call('POST', '/api/ingest/json', { jwt: u.jwt, json: body(tooMuch) })
  expectError(refused, 413)
  expect(refused.body.Error).toContain('QUARRY_USER_QUOTA')
  expect({ store: storeSnapshot(s), blobs: blobFiles(s) }).toEqual(before)
  // 600 KB fits: stored in segments, and counted.
  const fits = entries('fits', 2000, 300, T0 + 5000, 1)
  expect((await s.call('POST', '/api/ingest/json', { jwt: u.jwt, json: body(fits) })).status).toBe(200)
  expect((await stored(s)).sealed).toBe(sealing ? 2000 : 0)
  const adding = fits.reduce((n, e) => n + Buffer.byteLength(e.data) + e.tag.length + e.src.length + 16, 0)
  expect(await s.store.quota.usage(u.uid)).toBe(used + adding)
  const [byTag] = await s.rows("SELECT bytes FROM ingest_usage_tags WHERE uid = ? AND tag_id = (SELECT id FROM ingest_tags WHERE name = 'web')", [u.uid])
  expect(Number(byTag!.bytes)).toBe(used + adding)
  expect((await search(s, u.jwt, 'tag=web')).length).toBe(2010)
})

test('a large batch naming a tag the store does not know takes the rows (and creates it); the next one of that tag goes into segments', async () => {
  const s = await server()
  const one = entries('one', 5000, 120, T0, 1, 'fresh')
  expect((await s.call('POST', '/api/ingest/json', { jwt: s.adminJwt, json: body(one) })).status).toBe(200)
  expect(await stored(s)).toEqual({ rows: 5000, sealed: 0, segments: 0 })
  const two = entries('two', 5000, 120, T0 + 10_000, 1, 'fresh')
  expect((await s.call('POST', '/api/ingest/json', { jwt: s.adminJwt, json: body(two) })).status).toBe(200)
  expect((await stored(s)).sealed).toBe(sealing ? 5000 : 0)
  expect((await search(s, s.adminJwt, 'tag=fresh')).sort(byData)).toEqual([...one, ...two].sort(byData))
})
