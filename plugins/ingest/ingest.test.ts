// The storage bounds of POST /api/ingest/json: entries count toward the ingesting user's quota, a per-user ingest
// rate, the free-space floor, and the bound on distinct tags; and tags resolved from memory, not from a read of the
// whole tag table per search.
import { afterEach, describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { decodeBase64 } from '.'
import type { Config } from '../../server/runtime/config'
import { REQ } from '../ws/protocol'
import { type CallResult, type TestServer, blobFiles, createTestServer, expectError, storeSnapshot } from '../../test/helpers'

const KiB = 1024
const MiB = 1024 * KiB
const servers: TestServer[] = []
afterEach(() => {
  for (const s of servers.splice(0)) s.close()
})

async function server(config: Partial<Config> = {}) {
  const s = await createTestServer(config)
  servers.push(s)
  return s
}

const T0 = Date.parse('2026-01-01T00:00:00Z')

/** `count` entries of `bytes` data bytes each, of `tag` (or of tags tag0, tag1... with `distinct`). */
function batch(count: number, bytes: number, tag = 'web', distinct = false) {
  const data = Buffer.alloc(bytes, 0x61).toString('base64')
  return Array.from({ length: count }, (_, i) => ({ TS: new Date(T0 + i).toISOString(), Tag: distinct ? `${tag}${i}` : tag, Data: data }))
}

const ingest = (s: TestServer, jwt: string, entries: unknown[], headers: Record<string, string> = {}) =>
  s.call('POST', '/api/ingest/json', { jwt, json: entries, headers })

/** The bytes an entry of `bytes` data, tag `tag` and no source counts for (server/search/entries.ts entryBytes). */
const counted = (bytes: number, tag = 'web') => bytes + tag.length + 16

/** A refusal with `status` whose message names `words`, and nothing changed in the store or the blob files. */
async function refusedUnchanged(s: TestServer, status: number, words: string[], act: () => Promise<CallResult>) {
  const before = { store: storeSnapshot(s), blobs: blobFiles(s) }
  const res = await act()
  expectError(res, status)
  for (const w of words) expect(res.body.Error).toContain(w)
  expect({ store: storeSnapshot(s), blobs: blobFiles(s) }).toEqual(before)
  return res
}

async function upload(s: TestServer, jwt: string, bytes: number) {
  const form = new FormData()
  form.append('file', new Blob([new Uint8Array(bytes).fill(0x62)]), 'f.bin')
  const res = new Response(form)
  const type = res.headers.get('content-type')!
  return s.call('POST', '/api/files', { jwt, body: new Uint8Array(await res.arrayBuffer()), headers: { 'content-type': type } })
}

/** Entries stored: rows, and those a large batch wrote straight into segments (server/search/segments.ts). */
const entryCount = async (s: TestServer) =>
  Number((await s.rows('SELECT (SELECT count(*) FROM entries) + (SELECT coalesce(sum(count), 0) FROM entry_segments) AS n'))[0]!.n)
const tagCount = async (s: TestServer) => Number((await s.rows('SELECT count(*) AS n FROM ingest_tags'))[0]!.n)

describe('ingest counts toward the user\'s storage quota', () => {
  test('with a 1 MiB quota, a 2 MiB batch is refused (413) like a 2 MiB file, and nothing of it is stored', async () => {
    const s = await server({ userQuotaBytes: MiB, maxBodyBytes: 8 * MiB, maxFileBytes: 8 * MiB })
    const u = await s.createUser()
    await refusedUnchanged(s, 413, ['QUARRY_USER_QUOTA'], () => upload(s, u.jwt, 2 * MiB))
    await refusedUnchanged(s, 413, ['QUARRY_USER_QUOTA', String(MiB)], () => ingest(s, u.jwt, batch(32, 64 * KiB)))
    expect(await entryCount(s)).toBe(0)
    expect(await s.store.quota.usage(u.uid)).toBe(0)
  })

  test('batches are stored while they fit; the one that would pass the quota is refused whole; other items then count the entries', async () => {
    const s = await server({ userQuotaBytes: MiB })
    const u = await s.createUser()
    const part = batch(4, 64 * KiB) // 256 KiB of data per batch
    for (let i = 0; i < 3; i++) expect((await ingest(s, u.jwt, part)).status).toBe(200)
    const used = 3 * 4 * counted(64 * KiB)
    expect(await s.store.quota.usage(u.uid)).toBe(used)
    // A fourth would take the user to 1 MiB plus the per-entry counts: refused, and nothing of it stored.
    await refusedUnchanged(s, 413, ['QUARRY_USER_QUOTA'], () => ingest(s, u.jwt, part))
    expect(await entryCount(s)).toBe(12)
    // What is left fits a smaller batch, not a file larger than it.
    expect((await ingest(s, u.jwt, batch(1, 100 * KiB))).status).toBe(200)
    await refusedUnchanged(s, 413, ['QUARRY_USER_QUOTA'], () => upload(s, u.jwt, 200 * KiB))
    // Through an API token the owner's quota binds the same way.
    const token = await s.call('POST', '/api/tokens', { jwt: u.jwt, json: { name: 'ingester', capabilities: ['Ingest'] } })
    expect(token.status).toBe(200)
    const viaToken = await s.call('POST', '/api/ingest/json', { json: batch(1, 200 * KiB), headers: { 'Service-Token': token.body.token } })
    expectError(viaToken, 413)
    // Another user is not charged for it; an admin, as for every item, is counted but never refused.
    const other = await s.createUser()
    expect((await ingest(s, other.jwt, part)).status).toBe(200)
    expect(await s.store.quota.usage(other.uid)).toBe(4 * counted(64 * KiB))
    expect((await ingest(s, s.adminJwt, batch(8, 256 * KiB))).status).toBe(200)
    expect(await s.store.quota.usage(1)).toBe(8 * counted(256 * KiB))
  })

  test('empty entries are not free: each counts its tag, source and 16 bytes', async () => {
    const s = await server({ userQuotaBytes: 64 * KiB })
    const u = await s.createUser()
    const empty = (n: number) => Array.from({ length: n }, () => ({ Tag: 'e', SRC: '10.0.0.1', Data: '' }))
    const each = 1 + '10.0.0.1'.length + 16
    const fits = Math.floor((64 * KiB) / each)
    expect((await ingest(s, u.jwt, empty(fits))).status).toBe(200)
    await refusedUnchanged(s, 413, ['QUARRY_USER_QUOTA'], () => ingest(s, u.jwt, empty(1)))
  })
})

describe('the ingest rate (QUARRY_INGEST_RATE)', () => {
  test('a user past the rate gets 429 with Retry-After and nothing stored; other users are not held back; after the wait it passes', async () => {
    const s = await server({ ingestRateBytes: 32 * KiB })
    const u = await s.createUser()
    const other = await s.createUser()
    // One batch is admitted while the user is not in debt, whatever its size: this one leaves a debt of ~96 KiB, 3 s.
    expect((await ingest(s, u.jwt, batch(1, 128 * KiB))).status).toBe(200)
    const refused = await refusedUnchanged(s, 429, ['QUARRY_INGEST_RATE', String(32 * KiB)], () => ingest(s, u.jwt, batch(1, 10)))
    const wait = Number(refused.headers.get('retry-after'))
    expect(wait).toBeGreaterThanOrEqual(2)
    expect(wait).toBeLessThanOrEqual(3)
    // The user's tokens share the user's rate.
    const token = await s.call('POST', '/api/tokens', { jwt: u.jwt, json: { name: 'ingester', capabilities: ['Ingest'] } })
    const viaToken = await s.call('POST', '/api/ingest/json', { json: batch(1, 10), headers: { 'Service-Token': token.body.token } })
    expectError(viaToken, 429)
    expect(viaToken.headers.get('retry-after')).not.toBeNull()
    expect((await ingest(s, other.jwt, batch(1, 10 * KiB))).status).toBe(200)
    await Bun.sleep(wait * 1000)
    expect((await ingest(s, u.jwt, batch(1, 10))).status).toBe(200)
    expect(await entryCount(s)).toBe(3)
  })

  test('a refused batch (over the quota) does not use up the rate', async () => {
    const s = await server({ ingestRateBytes: 64 * KiB, userQuotaBytes: 32 * KiB })
    const u = await s.createUser()
    for (let i = 0; i < 5; i++) expectError(await ingest(s, u.jwt, batch(1, 40 * KiB)), 413)
    expect((await ingest(s, u.jwt, batch(1, 10 * KiB))).status).toBe(200)
  })
})

describe('the free-space floor (QUARRY_MIN_FREE_SPACE)', () => {
  test('with a floor above the free space, ingest and file and resource uploads are refused with 507 and change nothing', async () => {
    const s = await server({ minFreeSpaceBytes: Number.MAX_SAFE_INTEGER })
    const u = await s.createUser()
    const words = ['QUARRY_MIN_FREE_SPACE', String(Number.MAX_SAFE_INTEGER)]
    await refusedUnchanged(s, 507, words, () => ingest(s, u.jwt, batch(1, 10)))
    await refusedUnchanged(s, 507, words, () => upload(s, u.jwt, 10))
    const created = await s.call('POST', '/api/resources', { jwt: u.jwt, json: { ResourceName: 'r', Description: '', GroupACL: [], Global: false } })
    expect(created.status).toBe(200)
    const form = new FormData()
    form.append('file', new Blob(['contents']), 'r.txt')
    const body = new Response(form)
    const type = body.headers.get('content-type')!
    const bytes = new Uint8Array(await body.arrayBuffer())
    const raw = () => s.call('PUT', `/api/resources/${created.body.GUID}/raw`, { jwt: u.jwt, body: bytes, headers: { 'content-type': type } })
    await refusedUnchanged(s, 507, words, raw)
  })

  test('below the floor writes go on (the default floor, 1 GiB, on a disk with room)', async () => {
    const s = await server()
    expect(s.config.minFreeSpaceBytes).toBe(1024 * MiB)
    const u = await s.createUser()
    expect((await ingest(s, u.jwt, batch(1, 10))).status).toBe(200)
    expect((await upload(s, u.jwt, 10)).status).toBe(200)
  })
})

/**
 * A server with an entry of tag `known`, then 400,000 more tags written straight into the table (the flood of the
 * attack; the API would take minutes to make this many).
 */
async function flooded() {
  const s = await server({ maxTags: 1_000_000 })
  const u = await s.createUser()
  expect((await ingest(s, u.jwt, [{ TS: new Date(T0).toISOString(), Tag: 'known', Data: Buffer.from('known entry').toString('base64') }])).status).toBe(200)
  if (s.store.kind === 'pg') await s.rows("INSERT INTO ingest_tags (name) SELECT 'flood' || i FROM generate_series(1, 400000) AS i")
  else await s.rows("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 400000) INSERT INTO ingest_tags (name) SELECT 'flood' || i FROM n")
  expect(await tagCount(s)).toBe(400_001)
  return { s, u }
}

describe('the number of distinct tags (QUARRY_MAX_TAGS)', () => {
  test('a batch whose new tags would pass the bound is refused whole (413 naming it); batches of known tags and those that fit pass', async () => {
    const s = await server({ maxTags: 10 })
    const u = await s.createUser()
    expect((await ingest(s, u.jwt, batch(8, 4, 't', true))).status).toBe(200)
    // 3 new tags (and an entry of a known one): 11 > 10, nothing stored, not even the known tag's entry.
    const over = [...batch(3, 4, 'n', true), ...batch(1, 4, 't0')]
    await refusedUnchanged(s, 413, ['QUARRY_MAX_TAGS', '10'], () => ingest(s, u.jwt, over))
    expect((await ingest(s, u.jwt, batch(2, 4, 'n', true))).status).toBe(200)
    expect((await ingest(s, u.jwt, [...batch(8, 4, 't', true), ...batch(2, 4, 'n', true)])).status).toBe(200)
    await refusedUnchanged(s, 413, ['QUARRY_MAX_TAGS'], () => ingest(s, u.jwt, batch(1, 4, 'eleventh')))
    expect(await tagCount(s)).toBe(10)
    // The admin is bound too: the bound is the store's, not a user's.
    await refusedUnchanged(s, 413, ['QUARRY_MAX_TAGS'], () => ingest(s, s.adminJwt, batch(1, 4, 'eleventh')))
  })

  test('400,000 tags in the table: launches neither read it nor slow down; a tag created after the start resolves at once', async () => {
    const { s, u } = await flooded()
    // A tag created through the API now, after the server read the table: found by the searches below.
    expect((await ingest(s, u.jwt, [{ TS: new Date(T0 + 1).toISOString(), Tag: 'late', Data: Buffer.from('late entry').toString('base64') }])).status).toBe(200)
    const range = { SearchStart: new Date(T0 - 1000).toISOString(), SearchEnd: new Date(T0 + 60_000).toISOString() }
    const queries = ['tag=known', 'tag=late', 'tag=*', 'tag=flood7,late', 'tag=unknown']
    const found: Record<string, string[]> = {}
    const t0 = performance.now()
    for (let i = 0; i < 10; i++) {
      const q = queries[i % queries.length]!
      const launched = await s.call('POST', '/api/searchctrl/launch', { jwt: u.jwt, json: { SearchString: q, ...range } })
      expect(launched.status).toBe(200)
      await s.searches.settled()
      const got = await s.call('GET', `/api/searchctrl/${launched.body.SearchID}/download/json`, { jwt: u.jwt })
      found[q] = (got.body as { Tag: string; Data: string }[]).map((r) => `${r.Tag}:${Buffer.from(r.Data, 'base64')}`)
    }
    const elapsed = performance.now() - t0
    expect(found).toEqual({
      'tag=known': ['known:known entry'],
      'tag=late': ['late:late entry'],
      'tag=*': ['known:known entry', 'late:late entry'],
      'tag=flood7,late': ['late:late entry'],
      'tag=unknown': [],
    })
    // Reading 400,000 tags took about 0.7 s per launch (7 s for these 10); without it they take milliseconds each.
    expect(elapsed).toBeLessThan(2500)
  }, 60_000)

  test('400,000 tags in the table: WebSocket entries and tags requests do not read it', async () => {
    const { s, u } = await flooded()
    s.app.listen({ hostname: '127.0.0.1', port: 0 })
    try {
      const launched = await s.call('POST', '/api/searchctrl/launch', {
        jwt: u.jwt,
        json: { SearchString: 'tag=known', SearchStart: new Date(T0 - 1000).toISOString(), SearchEnd: new Date(T0 + 1000).toISOString() },
      })
      expect(launched.status).toBe(200)
      await s.searches.settled()
      const ws = new WebSocket(`ws://127.0.0.1:${s.app.server!.port}/api/ws/search`, u.jwt)
      const queue: any[] = []
      ws.onmessage = (e) => queue.push(JSON.parse(String(e.data)))
      await new Promise((resolve) => (ws.onopen = resolve))
      const ask = async (m: unknown) => {
        ws.send(JSON.stringify(m))
        const end = Date.now() + 20_000
        while (queue.length === 0 && Date.now() < end) await Bun.sleep(5)
        return queue.shift()
      }
      const sub = (await ask({ type: 'attach', data: { ID: launched.body.SearchID } })).data.Subproto as string
      const t0 = performance.now()
      for (let i = 0; i < 10; i++) {
        const entries = await ask({ type: sub, data: { ID: REQ.GET_ENTRIES, EntryRange: { First: 0, Last: 10 } } })
        expect(entries.data.Entries.map((e: { Data: string }) => Buffer.from(e.Data, 'base64').toString())).toEqual(['known entry'])
        const tags = await ask({ type: sub, data: { ID: REQ.SEARCH_TAGS } })
        expect(Object.keys(tags.data.Tags)).toEqual(['known'])
        expect(entries.data.Entries[0].Tag).toBe(tags.data.Tags.known)
      }
      const elapsed = performance.now() - t0
      ws.close()
      // Each of these 20 requests read the 400,000 tags before (about 0.7 s each); now they take milliseconds.
      expect(elapsed).toBeLessThan(2500)
    } finally {
      await s.app.stop(true)
    }
  }, 60_000)
})

describe('the ways log shippers send an API token (AccessSpec.shipper)', () => {
  async function withToken(capabilities: string[]) {
    const s = await server()
    const u = await s.createUser()
    const res = await s.call('POST', '/api/tokens', { jwt: u.jwt, json: { name: 'shipper', capabilities } })
    expect(res.status).toBe(200)
    return { s, u, token: res.body.token as string }
  }
  const basic = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`
  const post = (s: TestServer, authorization: string) =>
    s.call('POST', '/api/ingest/json', { json: batch(1, 4, 'shipped'), headers: { authorization } })

  test('Bearer <token>, Splunk <token> and Basic with the token as password each store the batch', async () => {
    const { s, token } = await withToken(['Ingest'])
    for (const authorization of [`Bearer ${token}`, `Splunk ${token}`, basic('anyone', token), basic('', token)]) {
      const res = await post(s, authorization)
      expect(res.status).toBe(200)
      expect(res.body.Count).toBe(1)
    }
    expect(await entryCount(s)).toBe(4)
  })

  test('a session\'s JWT still works as Bearer; a wrong secret, an empty password or another scheme is 401', async () => {
    const { s, u, token } = await withToken(['Ingest'])
    expect((await post(s, `Bearer ${u.jwt}`)).status).toBe(200)
    for (const authorization of [`Bearer ${token}x`, `Splunk x${token}`, basic('anyone', `${token}x`), basic(token, ''), `Digest ${token}`, 'Splunk'])
      await refusedUnchanged(s, 401, [], () => post(s, authorization))
    expect(await entryCount(s)).toBe(1)
  })

  test('a token without Ingest is 403 in every style; other routes take none of these styles', async () => {
    const { s, token } = await withToken(['AttachSearch'])
    for (const authorization of [`Bearer ${token}`, `Splunk ${token}`, basic('u', token)]) {
      const res = await post(s, authorization)
      expectError(res, 403, { Cap: 'Ingest' })
    }
    expect(await entryCount(s)).toBe(0)
    const { s: s2, token: reader } = await withToken(['AttachSearch', 'Ingest'])
    for (const authorization of [`Bearer ${reader}`, `Splunk ${reader}`, basic('u', reader)])
      expectError(await s2.call('GET', '/api/searchctrl', { headers: { authorization } }), 401)
  })
})

describe('ingest in /metrics', () => {
  test('entries and bytes stored, and refusals by reason, per listener and protocol', async () => {
    const s = await server({ userQuotaBytes: 1024 })
    const u = await s.createUser()
    expect((await ingest(s, u.jwt, batch(3, 10))).status).toBe(200)
    expectError(await ingest(s, u.jwt, [{ Tag: 'web', Data: '!!' }]), 400)
    expectError(await ingest(s, u.jwt, batch(1, 2000)), 413)
    const text = (await s.call('GET', '/metrics')).text
    expect(text).toContain('quarry_ingest_entries_total{listener="http",protocol="json"} 3')
    expect(text).toContain('quarry_ingest_bytes_total{listener="http",protocol="json"} 30')
    expect(text).toContain('quarry_ingest_refusals_total{listener="http",protocol="json",reason="invalid"} 1')
    expect(text).toContain('quarry_ingest_refusals_total{listener="http",protocol="json",reason="quota"} 1')
  })
})

describe('the entries of a batch are checked one by one, as the wire format says', () => {
  test('decodeBase64 takes exactly standard padded base64 (against Buffer and a strict alphabet check)', () => {
    /** The old check, independent of Uint8Array.fromBase64: the alphabet, whole groups, padding only at the end. */
    const reference = (s: string) => {
      if (s.length % 4 !== 0 || /[^A-Za-z0-9+/=]/.test(s)) return undefined
      const pad = s.endsWith('==') ? 2 : s.endsWith('=') ? 1 : 0
      const first = s.indexOf('=')
      if (first !== -1 && first !== s.length - pad) return undefined
      return Buffer.from(s, 'base64').toString('hex')
    }
    const text = fc.oneof(
      fc.uint8Array({ maxLength: 40 }).map((b) => Buffer.from(b).toString('base64')),
      fc.uint8Array({ maxLength: 40 }).map((b) => Buffer.from(b).toString('base64url')),
      fc.string({ maxLength: 24, unit: fc.constantFrom(...'ABCabc019+/=-_ \n\t.'.split('')) }),
    )
    fc.assert(
      fc.property(text, (s) => {
        const got = decodeBase64(s)
        expect(got === undefined ? undefined : Buffer.from(got).toString('hex')).toEqual(reference(s))
      }),
      { numRuns: 3000 },
    )
    for (const bad of ['QQ', 'QQ=', 'Q===', 'QQ==QQ==', ' QQ=', 'QUJD\nREVG', 'QUJ DRA=']) expect(decodeBase64(bad)).toBeUndefined()
  })

  test('a bad entry anywhere refuses the batch whole, naming its index; a good batch of mixed tags and sources stores every entry', async () => {
    const s = await server()
    const good = (i: number) => ({ TS: new Date(T0 + i).toISOString(), Tag: i % 3 ? 'web' : 'db', SRC: i % 2 ? '10.0.0.1' : undefined, Data: Buffer.from(`entry ${i}`).toString('base64') })
    const base = Array.from({ length: 50 }, (_, i) => good(i))
    const cases: [Record<string, unknown>, string][] = [
      [{ Data: 'ZW50cnk=\n' }, 'Data is not base64'],
      [{ Data: 'ZW50 cnk=' }, 'Data is not base64'],
      [{ Data: 'ZW5=0cnk' }, 'Data is not base64'],
      [{ Data: 'ZW50cn' }, 'Data is not base64'],
      [{ Tag: 'no spaces' }, 'Tag must be'],
      [{ SRC: '10.0.0.300' }, 'SRC is not an IP address'],
      [{ TS: 'yesterday' }, 'TS is not an RFC 3339 time'],
    ]
    for (const [change, words] of cases)
      for (const at of [0, 1, 37]) {
        const list = base.map((e) => ({ ...e }))
        list[at] = { ...list[at]!, ...change }
        await refusedUnchanged(s, 400, [`entry ${at}:`, words], () => ingest(s, s.adminJwt, list))
      }
    const res = await ingest(s, s.adminJwt, [...base, { ...good(50), SRC: null }])
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ Count: 51, Size: base.reduce((n, e) => n + Buffer.from(e.Data, 'base64').byteLength, 0) + 8, Tags: ['db', 'web'] })
    const rows = await s.rows('SELECT e.src AS src, e.data AS data, t.name AS tag FROM entries e JOIN ingest_tags t ON t.id = e.tag_id ORDER BY e.id')
    expect(rows.map((r) => [r.tag, r.src, Buffer.from(r.data as Uint8Array).toString()])).toEqual(
      [...base, { ...good(50), SRC: undefined }].map((e, i) => [i % 3 ? 'web' : 'db', e.SRC ?? '', `entry ${i}`]),
    )
  })
})

test('PUT /api/ingest/json (the TypeScript client\'s ingestJSONEntries) stores the same batch and answers the count alone', async () => {
  const s = await server()
  const entries = ['Text with 👻 emojis', 'This is utf8 赤ちゃん', 'third'].map((text, i) => ({
    TS: new Date(T0 + i * 1000).toISOString(),
    Tag: 'custom-test',
    Data: Buffer.from(text).toString('base64'),
  }))
  const res = await s.call('PUT', '/api/ingest/json', { jwt: s.adminJwt, json: entries })
  expect(res.status).toBe(200)
  expect(res.body).toBe(3)
  const rows = await s.rows('SELECT e.ts AS ts, e.data AS data, t.name AS tag FROM entries e JOIN ingest_tags t ON t.id = e.tag_id ORDER BY e.id')
  expect(rows.map((r) => [r.tag, Buffer.from(r.data as Uint8Array).toString()])).toEqual(entries.map((e) => ['custom-test', Buffer.from(e.Data, 'base64').toString()]))
  // a bad entry refuses the batch whole, as POST does
  await refusedUnchanged(s, 400, ['entry 1:', 'Data is not base64'], () =>
    s.call('PUT', '/api/ingest/json', { jwt: s.adminJwt, json: [entries[0], { ...entries[1], Data: 'not base64!' }] }),
  )
  // a token needs Ingest, as for POST
  const user = await s.createUser()
  expectError(await s.call('PUT', '/api/ingest/json', { json: entries }), 401)
  expect((await s.call('PUT', '/api/ingest/json', { jwt: user.jwt, json: entries })).status).toBe(200)
})

test('SRC null, "" or absent is stored as no source; an address as itself', async () => {
  const s = await server()
  const u = await s.createUser()
  const data = Buffer.from('x').toString('base64')
  const res = await ingest(s, u.jwt, [
    { Tag: 'web', SRC: null, Data: data },
    { Tag: 'web', SRC: '', Data: data },
    { Tag: 'web', Data: data },
    { Tag: 'web', SRC: '192.0.2.9', Data: data },
  ])
  expect(res.status).toBe(200)
  expect((await s.rows('SELECT src FROM entries ORDER BY id')).map((r) => r.src)).toEqual(['', '', '', '192.0.2.9'])
})
