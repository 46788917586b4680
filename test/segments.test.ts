// Sealed segments (server/search/segments.ts; bench/README.md): a search's results are the same whether its entries are
// rows or compacted into segments, through the real app. Each check runs the same searches on a server that
// compacts and on a control server that got the same entries and never compacts, and compares the downloaded
// results byte for byte. On PostgreSQL (QUARRY_TEST_STORE=pg) the segments go to the test S3 server.
import { afterAll, describe, expect, test } from 'bun:test'
import { createS3BlobStore } from '../server/blob'
import { sweepBlobs } from '../server/blob/sweep'
import { Segment, encodeSegment } from '../server/search/segment'
import { SegmentedEntries } from '../server/search/segments'
import { blobReferences } from '../server/repos'
import { type TestServer, type TestServerOptions, createTestServer } from './helpers'
import { onPg } from './pg'
import { MISSING_S3, testS3 } from './s3'

const servers: TestServer[] = []
afterAll(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()))
})

const T0 = Date.parse('2026-03-01T00:00:00Z')
const NEEDLE = 'NEEDLE'

/** A deterministic generator (the same entries on every run). */
function rng(seed: number) {
  let x = seed >>> 0
  return () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0
    return x / 2 ** 32
  }
}

interface Entry {
  TS: string
  Tag: string
  SRC: string
  Data: string
}

/**
 * `n` entries in random time order over [from, to) seconds after T0 (many share a time), of three tags, about one in
 * four holding the needle; with pairs that hold the needle only across two neighbours' bytes (`NEE` + `DLE`).
 */
function entries(seed: number, n: number, from: number, to: number): Entry[] {
  const r = rng(seed)
  const tags = ['web', 'db', 'app']
  const words = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'é-ü', 'x']
  const out: Entry[] = []
  for (let i = 0; i < n; i++) {
    const at = T0 + Math.floor(from + r() * (to - from)) * 1000
    const tag = tags[Math.floor(r() * tags.length)]!
    let text = Array.from({ length: 1 + Math.floor(r() * 8) }, () => words[Math.floor(r() * words.length)]).join(' ')
    const roll = r()
    if (roll < 0.25) text = `${text} ${NEEDLE} ${text}`
    else if (roll < 0.3) {
      // The needle across two entries of the same time and tag (neighbours in a segment's data): not a hit.
      out.push({ TS: new Date(at).toISOString(), Tag: tag, SRC: '192.0.2.1', Data: b64(`${text} NEE`) })
      text = `DLE ${text}`
    } else if (roll < 0.32) text = NEEDLE
    else if (roll < 0.34) text = ''
    out.push({ TS: new Date(at).toISOString(), Tag: tag, SRC: `192.0.2.${1 + Math.floor(r() * 4)}`, Data: b64(text) })
  }
  return out
}

const b64 = (text: string) => Buffer.from(text).toString('base64')
const iso = (s: number) => new Date(T0 + s * 1000).toISOString()

/** Queries and time ranges (seconds after T0) compared between the servers. */
const SEARCHES: [string, number, number][] = [
  ['tag=*', 0, 3000],
  ['tag=web,db grep NEEDLE', 0, 3000],
  ['tag=* grep NEEDLE | limit 7', 0, 3000],
  ['tag=* grep NEEDLE | limit 50', 250, 1700],
  ['tag=app grep NEEDLE | count', 0, 3000],
  ['tag=* grep NEEDLE | count', 400, 1401],
  ['tag=* regex NE+DLE', 0, 3000],
  ['tag=db grep delta | grep NEEDLE', 100, 2900],
  ['tag=* grep EDLE', 0, 3000],
  ['tag=web', 777, 1234],
  ['tag=* | limit 3', 500, 3000],
  ['tag=nosuch grep NEEDLE', 0, 3000],
  ['tag=web,app grep é-ü | count', 0, 3000],
  ['tag=db,app | count', 10, 2990],
  ['tag=db,app regex ^x | limit 20', 0, 3000],
]

async function server(opts: TestServerOptions = {}): Promise<TestServer> {
  let blobs: TestServerOptions['blobs']
  if (onPg) {
    const s3 = testS3()
    if (!s3) throw new Error(MISSING_S3)
    const store = await createS3BlobStore({ ...s3.config, prefix: `seg-${crypto.randomUUID()}/` })
    blobs = async () => store
  }
  // Segments of about 1.5 KB (a few dozen entries), so a few hundred entries make many.
  const s = await createTestServer({}, { blobs, segments: { targetBytes: 1500 }, ...opts })
  servers.push(s)
  return s
}

async function ingest(s: TestServer, list: Entry[]) {
  for (let i = 0; i < list.length; i += 200) {
    const res = await s.call('POST', '/api/ingest/json', { jwt: s.adminJwt, json: list.slice(i, i + 200) })
    expect(res.status).toBe(200)
  }
}

async function launch(s: TestServer, query: string, from: number, to: number): Promise<string> {
  const res = await s.call('POST', '/api/searchctrl/launch', { jwt: s.adminJwt, json: { SearchString: query, SearchStart: iso(from), SearchEnd: iso(to) } })
  expect(res.status).toBe(200)
  return res.body.SearchID as string
}

/** The search's whole results as downloaded; the search is deleted afterwards. */
async function download(s: TestServer, id: string): Promise<string> {
  await s.searches.settled()
  const res = await s.call('GET', `/api/searchctrl/${id}/download/json`, { jwt: s.adminJwt })
  expect({ status: res.status, text: res.status === 200 ? '' : res.text }).toEqual({ status: 200, text: '' })
  const details = await s.call('GET', `/api/searchctrl/${id}/details`, { jwt: s.adminJwt })
  expect(details.body.Error ?? '').toBe('')
  expect((await s.call('DELETE', `/api/searchctrl/${id}`, { jwt: s.adminJwt })).status).toBe(200)
  return res.text
}

async function results(s: TestServer, query: string, from: number, to: number): Promise<string> {
  return download(s, await launch(s, query, from, to))
}

/** Every search of SEARCHES on both servers: the same results, and (as a check of the check) not all empty. */
async function expectSame(seg: TestServer, ctl: TestServer) {
  let nonEmpty = 0
  for (const [query, from, to] of SEARCHES) {
    const want = await results(ctl, query, from, to)
    const got = await results(seg, query, from, to)
    expect({ query, from, to, got }).toEqual({ query, from, to, got: want })
    if (want.length > 0) nonEmpty++
  }
  expect(nonEmpty).toBeGreaterThan(SEARCHES.length - 2)
}

async function counts(s: TestServer) {
  const rows = Number((await s.rows('SELECT count(*) AS n FROM entries'))[0]!.n)
  const segments = await s.rows('SELECT count, key FROM entry_segments')
  return { rows, segments: segments.length, inSegments: segments.reduce((a, r) => a + Number(r.count), 0) }
}

async function segmentBlobs(s: TestServer): Promise<string[]> {
  const keys: string[] = []
  for await (const e of s.blobs.list()) if (e.key.startsWith('segments/')) keys.push(e.key)
  return keys.sort()
}

describe('searches over sealed segments', () => {
  test.each([
    ['default steps', {}],
    ['steps of 3 entries', { chunk: 3 }],
    ['steps of 5 entries or 200 bytes', { chunk: 5, chunkBytes: 200 }],
  ] as const)('give the results of the same searches over rows: after compactions, out-of-order ingest, restarts (%s)', async (_name, steps) => {
    const [seg, ctl] = await Promise.all([server({ search: steps }), server()])
    const first = entries(1, 400, 0, 3000)
    await Promise.all([ingest(seg, first), ingest(ctl, first)])
    await expectSame(seg, ctl)

    const written = await seg.entries.compact()
    const c1 = await counts(seg)
    expect(written).toBeGreaterThan(3)
    expect(c1.segments).toBe(written)
    expect(c1.rows + c1.inSegments).toBe(await totalIngested(ctl))
    expect(c1.rows).toBeGreaterThan(0) // less than a segment's worth stays in rows
    await expectSame(seg, ctl)

    // Entries older than those already in segments, and some at the very same times: rows among the segments.
    const late = entries(2, 150, 0, 3000)
    await Promise.all([ingest(seg, late), ingest(ctl, late)])
    await expectSame(seg, ctl)

    // Compacting those makes segments that overlap the earlier ones.
    expect(await seg.entries.compact()).toBeGreaterThan(0)
    await expectSame(seg, ctl)
    await seg.entries.compact({ all: true })
    const c2 = await counts(seg)
    expect(c2.rows).toBe(0)
    expect(c2.inSegments).toBe(await totalIngested(ctl))
    await expectSame(seg, ctl)

    // A restart reads the segments again from the blob store.
    await seg.restart()
    await expectSame(seg, ctl)
  })

  test('segments of one tag each that overlap in time (tags ingested one after the other) give the same results', async () => {
    const [seg, ctl] = await Promise.all([server({ search: { chunk: 7, chunkBytes: 300 } }), server()])
    const all = entries(5, 600, 0, 3000)
    // Each tag's entries ingested and compacted on their own: segments of one tag, all over the same times.
    for (const tag of ['web', 'db', 'app']) {
      const mine = all.filter((e) => e.Tag === tag)
      await Promise.all([ingest(seg, mine), ingest(ctl, mine)])
      await seg.entries.compact({ all: true })
    }
    expect((await counts(seg)).rows).toBe(0)
    await expectSame(seg, ctl)
  })

  test('searches running while a compaction moves their entries find what they would have found', async () => {
    const gate = gated()
    const seg = await server({ search: { chunk: 4, stepMs: 0, step: gate.step } })
    const ctl = await server()
    const list = entries(3, 300, 0, 3000)
    await Promise.all([ingest(seg, list), ingest(ctl, list)])
    // Half of the entries in segments first, so the search walks segments, then rows that are compacted under it.
    await seg.entries.compact({ maxSegments: 4 })
    const elsewhere = new SegmentedEntries(seg.store.entries, seg.store.segments, seg.blobs, { targetBytes: 1500 })
    for (const [query, from, to] of [
      ['tag=*', 0, 3000],
      ['tag=web,db grep NEEDLE', 0, 3000],
      ['tag=* regex NE+DLE | limit 40', 200, 2800],
    ] as const) {
      const want = await results(ctl, query, from, to)
      gate.close()
      // Two searches at once: after the compaction both find the new segments at the same moment.
      const ids = [await launch(seg, query, from, to), await launch(seg, query, from, to)]
      await gate.reached()
      // More entries after the search's end: a compaction now also takes rows the search has not reached yet.
      const more = entries(4, 40, 3000, 3100)
      await Promise.all([ingest(seg, more), ingest(ctl, more)])
      // Compacted by another instance over the same store and blob store (another replica): this server's searches
      // find the new segments themselves, both at their next step.
      expect(await elsewhere.compact()).toBeGreaterThan(0)
      gate.open()
      for (const id of ids) expect({ query, got: await download(seg, id) }).toEqual({ query, got: want })
    }
    await seg.entries.compact({ all: true })
    await expectSame(seg, ctl)
  })

  test('a compaction that commits while a search step reads the rows: the step reads again, nothing is lost', async () => {
    const seg = await server({ search: { chunk: 8, stepMs: 0 } })
    const ctl = await server()
    const list = entries(8, 300, 0, 3000)
    await Promise.all([ingest(seg, list), ingest(ctl, list)])
    await seg.entries.compact({ maxSegments: 2 })
    // The first step past the segments (a read of the rows alone) reads them after a compaction registered a segment
    // of the rows it is about to read, as when another replica compacts at that moment: the list the step chose its
    // window with is stale, and the step must read again.
    const scan = seg.store.entries.scan.bind(seg.store.entries)
    let armed = false
    let compacted = 0
    seg.store.entries.scan = async (...args) => {
      const [, after, , , , opts] = args
      if (armed && after.ts > T0 && opts?.upTo === undefined) {
        armed = false
        compacted += await seg.entries.compact({ maxSegments: 3 })
      }
      return scan(...args)
    }
    for (const [query, from, to] of [
      ['tag=*', 0, 3000],
      ['tag=* grep NEEDLE', 0, 3000],
    ] as const) {
      armed = true
      const want = await results(ctl, query, from, to)
      expect({ query, got: await results(seg, query, from, to) }).toEqual({ query, got: want })
    }
    expect(armed).toBe(false)
    expect(compacted).toBeGreaterThan(3)
  })

  test('a segment blob is written and stored before the transaction that registers it; a failed one changes nothing', async () => {
    const [seg, ctl] = await Promise.all([server(), server()])
    const list = entries(5, 200, 0, 3000)
    await Promise.all([ingest(seg, list), ingest(ctl, list)])
    const register = seg.store.segments.register.bind(seg.store.segments)
    const seen: (number | undefined)[] = []
    seg.store.segments.register = async (meta, rowIds, created) => {
      seen.push((await seg.blobs.stat(meta.key))?.size)
      expect(seen.at(-1)).toBe(meta.bytes)
      return register(meta, rowIds, created)
    }
    expect(await seg.entries.compact({ maxSegments: 2 })).toBe(2)
    expect(seen.length).toBe(2)

    // The store fails the registering transaction: the compaction fails, its blob goes, rows and results stay.
    const before = await counts(seg)
    const keys = await segmentBlobs(seg)
    seg.store.segments.register = async () => {
      throw new Error('the store is gone')
    }
    await expect(seg.entries.compact()).rejects.toThrow('the store is gone')
    expect(await counts(seg)).toEqual(before)
    expect(await segmentBlobs(seg)).toEqual(keys)
    seg.store.segments.register = register
    await expectSame(seg, ctl)
  })

  test('two compactions of the same rows at once register one segment for them; the other blob goes', async () => {
    const [seg, ctl] = await Promise.all([server(), server()])
    const list = entries(6, 200, 0, 3000)
    await Promise.all([ingest(seg, list), ingest(ctl, list)])
    // The second compaction runs while the first stands between its blob write and its transaction (a holder that
    // stalled past its lease, and the replica that took the job over): both read the same rows, the second registers
    // its segment first, and the first finds its rows gone.
    const register = seg.store.segments.register.bind(seg.store.segments)
    let second: Promise<number> | undefined
    seg.store.segments.register = async (...args) => {
      if (!second) {
        second = seg.entries.compact({ maxSegments: 1 })
        expect(await second).toBe(1)
      }
      return register(...args)
    }
    const first = await seg.entries.compact({ maxSegments: 1 })
    seg.store.segments.register = register
    expect([first, await second]).toEqual([0, 1])
    const c = await counts(seg)
    expect(c.segments).toBe(1)
    expect(c.rows + c.inSegments).toBe(await totalIngested(ctl))
    expect((await segmentBlobs(seg)).length).toBe(1)
    await expectSame(seg, ctl)
  })

  test('segments written before compression (plain) and compressed ones give the same results, side by side', async () => {
    const [seg, ctl] = await Promise.all([server(), server()])
    const list = entries(11, 500, 0, 3000)
    await Promise.all([ingest(seg, list), ingest(ctl, list)])
    // What an earlier version's compaction left: plain segments of the oldest rows, registered as it did.
    const rows = await seg.rows('SELECT id, ts, tag_id, src, data FROM entries ORDER BY ts, tag_id, id LIMIT 120')
    for (let i = 0; i < rows.length; i += 40) {
      const part = rows.slice(i, i + 40).map((r) => ({ ts: Number(r.ts), tagId: Number(r.tag_id), id: Number(r.id), src: String(r.src), data: new Uint8Array(r.data as Uint8Array) }))
      const plain = encodeSegment(part)
      const key = `segments/plain-${i}`
      await seg.blobs.put(key, new Blob([plain]).stream())
      const cursor = (e: (typeof part)[number]) => ({ ts: e.ts, tagId: e.tagId, id: e.id })
      expect(await seg.store.segments.register({ key, count: part.length, bytes: plain.byteLength, min: cursor(part[0]!), max: cursor(part.at(-1)!) }, part.map((e) => e.id), Date.now())).toBe(true)
    }
    // The rest compacted now: compressed segments, smaller than the plain encoding of the same entries.
    await seg.restart()
    await seg.entries.compact({ all: true })
    const stored = await seg.rows('SELECT key, bytes FROM entry_segments ORDER BY seq')
    const formats = new Map<string, number>()
    for (const r of stored) {
      const body = await blobBytes(seg, String(r.key))
      expect(body.byteLength).toBe(Number(r.bytes))
      const magic = Buffer.from(body.subarray(0, 8)).toString('latin1')
      formats.set(magic, (formats.get(magic) ?? 0) + 1)
      const decoded = new Segment(body)
      expect(decoded.compressed).toBe(magic === 'QSEG0002')
      if (decoded.compressed) expect(body.byteLength).toBeLessThan(decoded.decodedBytes)
    }
    expect(formats.get('QSEG0001')).toBe(3)
    expect(formats.get('QSEG0002')).toBeGreaterThan(3)
    expect((await counts(seg)).rows).toBe(0)
    await expectSame(seg, ctl)
  }, 60_000)

  test('with compactOnIngest, ingest starts short compaction runs: rows do not pile up, and only while allowed', async () => {
    const [seg, ctl] = await Promise.all([server(), server()])
    let allowed = false
    seg.entries.compactOnIngest(() => allowed)
    const list = entries(13, 1200, 0, 3000)
    const half = list.length / 2
    await Promise.all([ingest(seg, list.slice(0, half)), ingest(ctl, list.slice(0, half))])
    // Not allowed (another replica holds the lease): nothing compacted.
    expect((await counts(seg)).segments).toBe(0)
    allowed = true
    // Allowed: a batch once a segment's worth (1.5 KB) came in starts a run of at most two segments, so the rows
    // go down while the ingest goes on (each run awaited here, so that the count does not depend on timing).
    let runs = 0
    for (let i = half; i < list.length; i += 50) {
      const part = list.slice(i, i + 50)
      await Promise.all([ingest(seg, part), ingest(ctl, part)])
      await seg.entries.compacted()
      runs++
    }
    const c = await counts(seg)
    expect(c.segments).toBeGreaterThanOrEqual(runs / 2)
    expect(c.rows + c.inSegments).toBe(await totalIngested(ctl))
    expect(c.rows).toBeLessThan(half)
    await expectSame(seg, ctl)
  }, 60_000)

  test('a corrupt compressed segment fails the searches that read it with an error, and the server goes on', async () => {
    const [seg] = await Promise.all([server()])
    await ingest(seg, entries(12, 300, 0, 3000))
    await seg.entries.compact({ all: true })
    const [first] = await segmentBlobs(seg)
    const body = Buffer.from(await blobBytes(seg, first!))
    body[body.byteLength - 20]! ^= 0xff
    await seg.blobs.delete(first!)
    await seg.blobs.put(first!, new Blob([body]).stream())
    await seg.restart()
    const id = await launch(seg, 'tag=* grep NEEDLE', 0, 3000)
    await seg.searches.settled()
    const details = await seg.call('GET', `/api/searchctrl/${id}/details`, { jwt: seg.adminJwt })
    expect(details.body.Error).toMatch(/corrupt segment/)
    expect((await seg.call('GET', '/api/info/whoami', { jwt: seg.adminJwt })).status).toBe(200)
  }, 60_000)

  test('the blob sweep keeps registered segments and removes the blob of a compaction cut off before registering', async () => {
    const [seg, ctl] = await Promise.all([server(), server()])
    const list = entries(7, 200, 0, 3000)
    await Promise.all([ingest(seg, list), ingest(ctl, list)])
    await seg.entries.compact()
    const registered = await segmentBlobs(seg)
    expect(registered.length).toBeGreaterThan(0)
    // What a crash between the blob write and the transaction leaves: a segment of rows that are still rows.
    const rows = await seg.rows('SELECT id, ts, tag_id, src, data FROM entries ORDER BY ts, tag_id, id LIMIT 5')
    const orphan = encodeSegment(
      rows.map((r) => ({ ts: Number(r.ts), tagId: Number(r.tag_id), id: Number(r.id), src: String(r.src), data: new Uint8Array(r.data as Uint8Array) })),
    )
    await seg.blobs.put('segments/orphan-of-a-crash', new Blob([orphan]).stream())
    await expectSame(seg, ctl)
    const log = { info: () => {}, warn: () => {} }
    const swept = await sweepBlobs({ blobs: seg.blobs, references: () => blobReferences(seg.store), now: Date.now() + 60_000, graceMs: 1000, log })
    expect(swept.removed).toEqual(['segments/orphan-of-a-crash'])
    expect(swept.missing).toEqual([])
    expect(await segmentBlobs(seg)).toEqual(registered)
    await expectSame(seg, ctl)
  })
})

/** A blob's bytes, from the disk store (a Blob) or S3 (a stream). */
async function blobBytes(s: TestServer, key: string): Promise<Uint8Array> {
  const body = await s.blobs.body(key)
  return new Uint8Array(body instanceof Blob ? await body.arrayBuffer() : await new Response(body).arrayBuffer())
}

async function totalIngested(ctl: TestServer): Promise<number> {
  return Number((await ctl.rows('SELECT count(*) AS n FROM entries'))[0]!.n)
}

/** A step for searches that waits, while closed, until the test opens it. */
function gated() {
  let open = true
  let waiting: (() => void)[] = []
  let first = Promise.withResolvers<void>()
  return {
    step: () => {
      first.resolve()
      return open ? Promise.resolve() : new Promise<void>((resolve) => waiting.push(resolve))
    },
    reached: () => first.promise,
    close() {
      open = false
      first = Promise.withResolvers<void>()
    },
    open() {
      open = true
      for (const resolve of waiting) resolve()
      waiting = []
    },
  }
}
