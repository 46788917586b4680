// What a cluster's replicas do about a replica that died (test/cluster/harness.ts, real processes on PostgreSQL and
// S3): a saved search it held moves to another replica only for a caller who may see it, and a search it was saving
// is not lost silently: a survivor lists it in ERROR with the reason, for its owner to read and delete.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ORPHANED } from '../../server/search/manager'
import { type Cluster, type Replica, startCluster, until } from './harness'

let cluster: Cluster
let A: Replica, B: Replica, C: Replica
let admin: string

beforeAll(async () => {
  // Short leases: a periodic job held by a killed replica moves to a survivor within seconds.
  cluster = await startCluster({ env: { QUARRY_LEASE_TTL: '2s' } })
  ;[A, B, C] = cluster.replicas as [Replica, Replica, Replica]
  admin = await cluster.login('admin', cluster.adminPassword, B)
  const T0 = Date.parse('2026-01-01T00:00:00Z')
  const batch = Array.from({ length: 500 }, (_, i) => ({ TS: new Date(T0 + i * 1000).toISOString(), Tag: 'failures', Data: Buffer.from(`failures line ${i}`).toString('base64') }))
  expect((await B.call('POST', '/api/ingest/json', { jwt: admin, json: batch })).status).toBe(200)
}, 60_000)
afterAll(() => cluster?.stop(), 30_000)

async function launch(r: Replica, jwt: string, json: Record<string, unknown> = {}): Promise<string> {
  const res = await r.call('POST', '/api/searchctrl/launch', {
    jwt,
    json: { SearchString: 'tag=failures grep line', SearchStart: '2025-12-31T00:00:00Z', SearchEnd: '2026-01-02T00:00:00Z', ...json },
  })
  expect(res.status).toBe(200)
  return res.body.SearchID as string
}

/** Whether replica `r` holds search `id` by the store (its record names r as owner). */
async function holds(r: Replica, id: string): Promise<boolean> {
  const rows = await cluster.rows('SELECT s.owner FROM search_records s JOIN replicas p ON p.id = s.owner WHERE s.id = ? AND p.address = ?', [id, r.url])
  return rows.length > 0
}

describe('cluster: a replica dies', () => {
  test('a saved search of a dead replica moves to the replica asked only for a caller who may see it', async () => {
    const owner = await cluster.createUser('keeper')
    const stranger = await cluster.createUser('peeker')
    const jwt = await cluster.login(owner.User, owner.Pass, A)
    const strangerJwt = await cluster.login(stranger.User, stranger.Pass, B)
    const id = await launch(A, jwt)
    expect((await A.call('PATCH', `/api/searchctrl/${id}/save`, { jwt })).status).toBe(200)
    expect((await A.call('PUT', `/api/searchctrl/${id}/detach`, { jwt })).status).toBe(200)
    const saved = await until(() => A.call('GET', `/api/searchctrl/${id}/details`, { jwt }), (r) => r.body.State === 'DORMANT/SAVED')
    expect(saved.body.State).toBe('DORMANT/SAVED')
    // the details say SAVED as the row is being written: the kill waits for the row
    await until(() => cluster.rows('SELECT state FROM saved_searches WHERE id = ?', [id]), (rows) => rows[0]?.state === 'saved')
    await cluster.kill(A)
    // The stranger's requests through B (A unreachable, then counted dead) are refused, and B does not take it over.
    for (const path of [`/api/searchctrl/${id}`, `/api/searchctrl/${id}/details`, `/api/searchctrl/${id}/download/json`]) {
      expect((await B.call('GET', path, { jwt: strangerJwt })).status).toBe(404)
      expect(await holds(B, id)).toBe(false)
    }
    expect((await B.call('DELETE', `/api/searchctrl/${id}`, { jwt: strangerJwt })).status).toBe(404)
    expect(await holds(B, id)).toBe(false)
    // Its owner's request through B takes it over and reads it.
    const mine = await B.call('GET', `/api/searchctrl/${id}/download/json`, { jwt })
    expect(mine.status).toBe(200)
    expect(mine.body).toHaveLength(500)
    expect(await holds(B, id)).toBe(true)
  }, 60_000)

  test('a search being saved on a replica killed before it was stored is listed in ERROR with the reason, then deleted by its owner', async () => {
    const owner = await cluster.createUser('saver')
    const other = await cluster.createUser('bystander')
    const jwt = await cluster.login(owner.User, owner.Pass, C)
    const otherJwt = await cluster.login(other.User, other.Pass, B)
    // Backgrounded and saved while its launcher stays attached: it stays SAVING (results only in C's working files).
    const id = await launch(C, jwt, { Background: true })
    expect((await C.call('PATCH', `/api/searchctrl/${id}/save`, { jwt })).status).toBe(200)
    expect((await C.call('GET', `/api/searchctrl/${id}/details`, { jwt })).body.State).toBe('ACTIVE/BACKGROUNDED/SAVING')
    await cluster.kill(C)
    const entry = (r: { body: { ID: string; State: string }[] }) => r.body.find((e) => e.ID === id)
    const listed = await until(() => B.call('GET', '/api/searchctrl', { jwt }), (r) => entry(r)?.State.includes('ERROR') === true, 40_000)
    expect(entry(listed)?.State).toBe('DORMANT/SAVING/ERROR')
    const details = await B.call('GET', `/api/searchctrl/${id}/details`, { jwt })
    expect(details.status).toBe(200)
    expect(details.body.Error).toBe(ORPHANED)
    expect(details.body.Finished).not.toBe('0001-01-01T00:00:00Z')
    // Its results were lost: none are answered, no blob is read.
    const results = await B.call('GET', `/api/searchctrl/${id}/download/json`, { jwt })
    expect([results.status, results.body]).toEqual([200, []])
    // Listed to its owner (and admins), not to others.
    expect((await B.call('GET', '/api/searchctrl', { jwt: otherJwt })).body.map((e: { ID: string }) => e.ID)).not.toContain(id)
    expect((await B.call('GET', '/api/searchctrl/all', { jwt: admin })).body.map((e: { ID: string }) => e.ID)).toContain(id)
    // The owner deletes it: gone from the store and every listing.
    expect((await B.call('DELETE', `/api/searchctrl/${id}`, { jwt })).status).toBe(200)
    expect(await cluster.rows('SELECT id FROM saved_searches WHERE id = ?', [id])).toEqual([])
    expect((await B.call('GET', '/api/searchctrl', { jwt })).body.map((e: { ID: string }) => e.ID)).not.toContain(id)
  }, 90_000)

  test('a replica that comes back with the working files of a search marked failed finishes saving it and clears the mark', async () => {
    if (!A.alive) await cluster.restart(A)
    const owner = await cluster.createUser('returner')
    const jwt = await cluster.login(owner.User, owner.Pass, A)
    const id = await launch(A, jwt, { Background: true })
    await until(() => A.call('GET', `/api/searchctrl/${id}/details`, { jwt }), (r) => r.body.Finished !== '0001-01-01T00:00:00Z')
    expect((await A.call('PATCH', `/api/searchctrl/${id}/save`, { jwt })).status).toBe(200)
    await cluster.kill(A)
    const marked = await until(() => B.call('GET', `/api/searchctrl/${id}/details`, { jwt }), (r) => r.body.Error === ORPHANED, 40_000)
    expect(marked.body.State).toBe('DORMANT/SAVING/ERROR')
    // B adopted it to answer; A comes back with its working files and saves it all the same
    await cluster.restart(A)
    const saved = await until(() => A.call('GET', `/api/searchctrl/${id}/details`, { jwt }), (r) => r.body.State === 'DORMANT/SAVED', 30_000)
    expect([saved.body.State, saved.body.Error, saved.body.ItemCount]).toEqual(['DORMANT/SAVED', '', 500])
    // B let its stand-in go at its next heartbeat (it answered without results meanwhile) and forwards to A again
    const fromB = await until(() => B.call('GET', `/api/searchctrl/${id}/download/json`, { jwt }), (r) => r.body?.length === 500, 10_000)
    expect(fromB.body).toHaveLength(500)
    expect(await holds(A, id)).toBe(true)
    expect(await holds(B, id)).toBe(false)
  }, 120_000)
})
