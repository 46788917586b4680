// Retention and deletion across two replicas (server/search/retention.ts): a deletion run on A is seen at once by a
// search on B, whose segment list and decoded segments were loaded before it; two deletions asked of A and B at the
// same moment delete each entry once between them (the cluster's deletion lease: the other waits its turn or is told
// to retry); a retention rule stored through B is applied by whichever replica holds the sweep's lease, and both
// replicas' searches then agree.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type Cluster, type Replica, startCluster, until } from './harness'

let cluster: Cluster
let A: Replica, B: Replica
let admin: string

beforeAll(async () => {
  cluster = await startCluster({
    replicas: 2,
    env: { QUARRY_SEGMENT_SIZE: '2KiB', QUARRY_COMPACT_INTERVAL: '100ms', QUARRY_RETENTION_INTERVAL: '300ms' },
  })
  ;[A, B] = cluster.replicas as [Replica, Replica]
  admin = await cluster.login('admin', cluster.adminPassword, A)
}, 60_000)
afterAll(() => cluster?.stop(), 30_000)

const T0 = Date.parse('2026-01-01T00:00:00Z')
const MIN = 60_000
const DAY = 86_400_000

interface Sent {
  ts: number
  tag: string
  text: string
}

async function ingest(r: Replica, sent: readonly Sent[]) {
  for (let i = 0; i < sent.length; i += 500) {
    const json = sent.slice(i, i + 500).map((e) => ({ TS: new Date(e.ts).toISOString(), Tag: e.tag, Data: Buffer.from(e.text).toString('base64') }))
    expect((await r.call('POST', '/api/ingest/json', { jwt: admin, json })).status).toBe(200)
  }
}

async function search(r: Replica, query: string, from: number, to: number): Promise<string[]> {
  const launched = await r.call('POST', '/api/searchctrl/launch', {
    jwt: admin,
    json: { SearchString: query, SearchStart: new Date(from).toISOString(), SearchEnd: new Date(to).toISOString() },
  })
  expect(launched.status).toBe(200)
  const id = launched.body.SearchID as string
  await until(
    async () => (await r.call('GET', `/api/searchctrl/${id}/details`, { jwt: admin })).body.Finished,
    (f) => f !== '0001-01-01T00:00:00Z',
  )
  const got = await r.call('GET', `/api/searchctrl/${id}/download/json`, { jwt: admin })
  expect(got.status).toBe(200)
  return (got.body as { Data: string }[]).map((e) => Buffer.from(e.Data, 'base64').toString()).sort()
}

const rowCount = async () => Number((await cluster.rows('SELECT count(*) AS n FROM entries'))[0]!.n)

describe('cluster: retention and deletion', () => {
  test('a deletion on A: a search on B finds exactly what stays; deletions asked of both at once delete each entry once', async () => {
    const sent: Sent[] = Array.from({ length: 1200 }, (_, i) => ({ ts: T0 + i * MIN, tag: i % 2 === 0 ? 'cdel' : 'ckeep', text: `${i % 2 === 0 ? 'cdel' : 'ckeep'} ${i} ${'w'.repeat(i % 40)}` }))
    await ingest(A, sent)
    expect(await until(rowCount, (n) => n < 100)).toBeLessThan(100)
    const all = sent.map((e) => e.text).sort()
    // B has read the segment list (and decoded the segments) before the deletion.
    expect(await search(B, 'tag=cdel,ckeep', T0, T0 + 2000 * MIN)).toEqual(all)

    const start = T0 + 100 * MIN
    const end = T0 + 600 * MIN
    const gone = (e: Sent) => e.tag === 'cdel' && e.ts >= start && e.ts < end
    const res = await A.call('POST', '/api/admin/entries/delete', { jwt: admin, json: { Tag: 'cdel', Start: new Date(start).toISOString(), End: new Date(end).toISOString() } })
    expect(res.status).toBe(200)
    expect(res.body.Deleted).toBe(sent.filter(gone).length)
    const left = sent.filter((e) => !gone(e))
    expect(await search(B, 'tag=cdel,ckeep', T0, T0 + 2000 * MIN)).toEqual(left.map((e) => e.text).sort())

    // Both replicas asked at once for overlapping ranges: each entry deleted once; a replica that finds the other's
    // deletion running answers 503 and deletes nothing.
    const s2 = T0 + 500 * MIN
    const e2 = T0 + 1100 * MIN
    const gone2 = (e: Sent) => e.tag === 'cdel' && e.ts >= s2 && e.ts < e2
    const both = await Promise.all(
      [A, B].map((r) => r.call('POST', '/api/admin/entries/delete', { jwt: admin, json: { Tag: 'cdel', Start: new Date(s2).toISOString(), End: new Date(e2).toISOString() } })),
    )
    for (const r of both) expect([200, 503]).toContain(r.status)
    expect(both.some((r) => r.status === 200)).toBe(true)
    const deleted = both.filter((r) => r.status === 200).reduce((n, r) => n + (r.body.Deleted as number), 0)
    expect(deleted).toBe(left.filter(gone2).length)
    const stays = left.filter((e) => !gone2(e)).map((e) => e.text).sort()
    expect(await search(A, 'tag=cdel,ckeep', T0, T0 + 2000 * MIN)).toEqual(stays)
    expect(await search(B, 'tag=cdel,ckeep', T0, T0 + 2000 * MIN)).toEqual(stays)
    expect(await cluster.rows('SELECT key FROM entry_segment_removals WHERE NOT blob_gone')).toEqual([])
  }, 120_000)

  test('a retention rule stored through B is applied by the replica holding the sweep; both replicas then agree', async () => {
    const now = Date.now()
    // Either older than 15 days or newer than 5: with an age of 10 days, which go does not depend on the moment.
    const sent: Sent[] = Array.from({ length: 800 }, (_, i) => ({
      ts: i < 600 ? now - 30 * DAY + i * MIN : now - 4 * DAY + i * MIN,
      tag: i % 2 === 0 ? 'rshort' : 'rlong',
      text: `r ${i} ${'v'.repeat(i % 30)}`,
    }))
    await ingest(B, sent)
    expect(await until(rowCount, (n) => n < 100)).toBeLessThan(100)
    const put = await B.call('PUT', '/api/admin/retention', { jwt: admin, json: { Rules: [{ Tag: 'rshort', MaxAgeMs: 10 * DAY, MaxBytes: null }] } })
    expect(put.status).toBe(200)
    expect((await A.call('GET', '/api/admin/retention', { jwt: admin })).body).toEqual(put.body)
    const stays = sent.filter((e) => e.tag === 'rlong' || e.ts > now - 10 * DAY).map((e) => e.text).sort()
    const found = await until(
      () => search(A, 'tag=rshort,rlong', now - 31 * DAY, now + DAY),
      (t) => t.length === stays.length,
      60_000,
    )
    expect(found).toEqual(stays)
    expect(await search(B, 'tag=rshort,rlong', now - 31 * DAY, now + DAY)).toEqual(stays)
  }, 120_000)
})
