// The cluster inside one process (server/cluster, plugins/cluster): the internal routes' refusals, the replica
// registry in the status objects, and what a replica shows of searches other replicas hold. Several real replicas:
// test/cluster/.
import { afterEach, describe, expect, test } from 'bun:test'
import { HEARTBEAT_MS, LIVE_HEARTBEATS } from '../../server/cluster'
import type { Config } from '../../server/runtime/config'
import { type TestServer, createTestServer, expectError, itemWorld, refused } from '../../test/helpers'

const SECRET = 'the-cluster-secret-of-this-test-0123456789'
/** A replica of a cluster (QUARRY_DATABASE_URL set; the store itself is the test's). */
const CLUSTER: Partial<Config> = { databaseUrl: 'postgres://cluster.test/quarry', clusterSecret: SECRET }
/** An address nothing listens on: a replica there does not answer. */
const DEAD_ADDRESS = 'http://127.0.0.1:9'
const BOUND_MS = HEARTBEAT_MS * LIVE_HEARTBEATS

const servers: TestServer[] = []
afterEach(() => {
  for (const s of servers.splice(0)) void s.close()
})

async function setup(config: Partial<Config> = {}) {
  const s = await createTestServer(config)
  servers.push(s)
  return itemWorld(s)
}

async function launch(s: TestServer, jwt: string): Promise<string> {
  const now = s.clock.now()
  const res = await s.call('POST', '/api/searchctrl/launch', {
    jwt,
    json: { SearchString: 'tag=web', SearchStart: new Date(now - 3_600_000).toISOString(), SearchEnd: new Date(now).toISOString() },
  })
  expect(res.status).toBe(200)
  await s.searches.settled()
  return res.body.SearchID as string
}

/** Registers another replica straight in the store, with its heartbeat at `heartbeat`. */
async function otherReplica(s: TestServer, id: string, name: string, heartbeat: number, address = DEAD_ADDRESS) {
  await s.rows('INSERT INTO replicas (id, name, address, description, started, heartbeat) VALUES (?, ?, ?, ?, ?, ?)', [
    id, name, address, JSON.stringify({ VirtSystem: 'other', VirtRole: '', CPUCount: 1, CPUModel: 'm', CPUMhz: '1', CPUCache: '1', TotalMemoryMB: 1, SystemVersion: 'v' }),
    heartbeat, heartbeat,
  ])
}

const upgrade = { upgrade: 'websocket', connection: 'Upgrade', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==' }

describe('internal routes: only with the cluster secret, and then only as the caller', () => {
  test('no secret, a wrong one, or a user JWT alone: 401/403 with an Error body, and nothing changes', async () => {
    const { s, owner } = await setup(CLUSTER)
    const id = await launch(s, owner.jwt)
    const path = `/api/internal/forward/api/searchctrl/${id}`
    const detailBefore = await s.call('GET', `/api/searchctrl/${id}/details`, { jwt: owner.jwt })
    await refused(s, 401, 'DELETE', path, { jwt: owner.jwt })
    await refused(s, 401, 'PUT', `${path}/stop`, { jwt: owner.jwt, headers: { 'x-quarry-cluster-secret': '' } })
    await refused(s, 403, 'DELETE', path, { jwt: owner.jwt, headers: { 'x-quarry-cluster-secret': SECRET.replace(/.$/, '!') } })
    await refused(s, 403, 'DELETE', path, { jwt: owner.jwt, headers: { 'x-quarry-cluster-secret': SECRET.slice(0, -1) } })
    await refused(s, 403, 'DELETE', path, { jwt: owner.jwt, headers: { 'x-quarry-cluster-secret': `${SECRET}x` } })
    await refused(s, 401, 'GET', '/api/internal/forward/api/searchctrl', { jwt: s.adminJwt })
    await refused(s, 401, 'GET', '/api/internal/ws/search', { headers: { ...upgrade, authorization: `Bearer ${owner.jwt}` } })
    await refused(s, 403, 'GET', '/api/internal/ws/search', { headers: { ...upgrade, authorization: `Bearer ${owner.jwt}`, 'x-quarry-cluster-secret': 'no' } })
    await refused(s, 401, 'GET', '/api/internal', {})
    // the search is untouched: still there, same state
    const detailAfter = await s.call('GET', `/api/searchctrl/${id}/details`, { jwt: owner.jwt })
    expect(detailAfter.status).toBe(200)
    expect(detailAfter.body.State).toBe(detailBefore.body.State)
  })

  test('a server without a secret takes no internal request, whatever secret is shown', async () => {
    const { s, owner } = await setup()
    const id = await launch(s, owner.jwt)
    await refused(s, 403, 'DELETE', `/api/internal/forward/api/searchctrl/${id}`, { jwt: owner.jwt, headers: { 'x-quarry-cluster-secret': SECRET } })
    expect((await s.call('GET', `/api/searchctrl/${id}`, { jwt: owner.jwt })).status).toBe(200)
  })

  test('with the secret, the request is served as its caller: no credentials 401, a stranger 404, the owner 200', async () => {
    const { s, owner, stranger } = await setup(CLUSTER)
    const id = await launch(s, owner.jwt)
    const path = `/api/internal/forward/api/searchctrl/${id}`
    const secret = { 'x-quarry-cluster-secret': SECRET }
    await refused(s, 401, 'DELETE', path, { headers: secret })
    await refused(s, 404, 'DELETE', path, { jwt: stranger.jwt, headers: secret })
    expect((await s.call('GET', `/api/searchctrl/${id}`, { jwt: owner.jwt })).status).toBe(200)
    // only /api/ routes outside /api/internal/ can be reached
    await refused(s, 404, 'GET', '/api/internal/forward/metrics', { jwt: owner.jwt, headers: secret })
    await refused(s, 404, 'GET', `/api/internal/forward/api/internal/forward/api/searchctrl/${id}`, { jwt: owner.jwt, headers: secret })
    const deleted = await s.call('DELETE', path, { jwt: owner.jwt, headers: secret })
    expect(deleted.status).toBe(200)
    expect(deleted.text).toBe('null')
    expectError(await s.call('GET', `/api/searchctrl/${id}`, { jwt: owner.jwt }), 404)
  })
})

describe('replica registry and status objects', () => {
  test('a single server: DistributedWebservers false, its own key; in a cluster: true', async () => {
    const single = await setup()
    const settings = await single.s.call('GET', '/api/settings', { jwt: single.admin })
    expect(settings.body.DistributedWebservers).toBe(false)
    expect(Object.keys((await single.s.call('GET', '/api/stats/ping', { jwt: single.admin })).body).sort()).toEqual(['127.0.0.1:8080', 'webserver'])
    const replica = await setup(CLUSTER)
    expect((await replica.s.call('GET', '/api/settings', { jwt: replica.admin })).body.DistributedWebservers).toBe(true)
  })

  test('ping and sysDesc: one key per live replica plus webserver; a replica leaves them once its heartbeat is older than the bound', async () => {
    const { s, admin } = await setup(CLUSTER)
    await s.cluster.start({ name: '10.0.0.1:8080', address: 'http://10.0.0.1:8080', description: { VirtSystem: 'self' } })
    const now = s.clock.now()
    await otherReplica(s, 'replica-b', '10.0.0.2:8080', now)
    await otherReplica(s, 'replica-dead', '10.0.0.3:8080', now - BOUND_MS - 1)
    const ping = await s.call('GET', '/api/stats/ping', { jwt: admin })
    expect(ping.body).toEqual({ webserver: 'OK', '10.0.0.1:8080': 'OK', '10.0.0.2:8080': 'OK' })
    const sysDesc = await s.call('GET', '/api/stats/sysDesc', { jwt: admin })
    expect(Object.keys(sysDesc.body).sort()).toEqual(['10.0.0.1:8080', '10.0.0.2:8080', 'webserver'])
    expect(sysDesc.body['10.0.0.2:8080'].VirtSystem).toBe('other')
    expect(sysDesc.body['10.0.0.1:8080']).toEqual(sysDesc.body.webserver)
    // B stops beating: gone after the bound (this replica beats on: its own heartbeat is refreshed here by hand)
    s.clock.advance(BOUND_MS + 1)
    await s.store.cluster.heartbeat(s.cluster.id, s.clock.now())
    expect((await s.call('GET', '/api/stats/ping', { jwt: admin })).body).toEqual({ webserver: 'OK', '10.0.0.1:8080': 'OK' })
    await s.cluster.stop()
    expect(await s.rows('SELECT id FROM replicas WHERE id = ?', [s.cluster.id])).toEqual([])
  })
})

describe('searches other replicas hold (shared store)', () => {
  test('a launch is published before it answers; a deletion unpublishes it', async () => {
    const { s, owner } = await setup(CLUSTER)
    const id = await launch(s, owner.jwt)
    const rows = await s.rows('SELECT id, owner, uid FROM search_records')
    expect(rows).toEqual([{ id, owner: s.cluster.id, uid: owner.uid }])
    expect((await s.call('DELETE', `/api/searchctrl/${id}`, { jwt: owner.jwt })).status).toBe(200)
    expect(await s.rows('SELECT id FROM search_records')).toEqual([])
  })

  test('listed by who may see them while their owner lives; a gone owner: 404 (not 5xx), then out of every listing', async () => {
    const { s, owner, member, stranger, gid, admin } = await setup(CLUSTER)
    const now = s.clock.now()
    await otherReplica(s, 'replica-b', '127.0.0.1:9', now)
    const record = {
      id: '4000000001', uid: owner.uid, gid, userQuery: 'tag=web', effectiveQuery: 'tag=web', startRange: now - 1000, endRange: now,
      started: now - 500, finished: 0, lastUpdate: now, storeSize: 120, indexSize: 16, itemCount: 2, metadata: null, import: null,
      launchInfo: { background: false, client: 'session' }, noHistory: false, error: '',
    }
    const data = JSON.stringify({ record, background: true, save: 'none', attached: 2, unattendedSince: 0 })
    await s.rows('INSERT INTO search_records (id, owner, uid, gid, started, data, updated) VALUES (?, ?, ?, ?, ?, ?, ?)', [
      record.id, 'replica-b', owner.uid, gid, record.started, data, now,
    ])
    const listed = await s.call('GET', '/api/searchctrl', { jwt: owner.jwt })
    expect(listed.body).toEqual([
      expect.objectContaining({ ID: record.id, UID: owner.uid, GID: gid, State: 'ACTIVE/BACKGROUNDED', AttachedClients: 2, StoredData: 120 }),
    ])
    expect((await s.call('GET', '/api/searchctrl', { jwt: member.jwt })).body.map((e: { ID: string }) => e.ID)).toEqual([record.id])
    expect((await s.call('GET', '/api/searchctrl', { jwt: stranger.jwt })).body).toEqual([])
    expect((await s.call('GET', '/api/searchctrl/all', { jwt: admin })).body.map((e: { ID: string }) => e.ID)).toEqual([record.id])
    // its owner does not answer: gone, as after a restart
    expectError(await s.call('GET', `/api/searchctrl/${record.id}`, { jwt: owner.jwt }), 404)
    expectError(await s.call('PUT', `/api/searchctrl/${record.id}/stop`, { jwt: owner.jwt }), 404)
    s.clock.advance(BOUND_MS + 1)
    expect((await s.call('GET', '/api/searchctrl', { jwt: owner.jwt })).body).toEqual([])
    expect((await s.call('GET', '/api/searchctrl/all', { jwt: admin })).body).toEqual([])
  })

  test('the per-user cap on unsaved searches counts those other live replicas hold; a dead replica\'s no longer count', async () => {
    const { s, owner, gid } = await setup({ ...CLUSTER, maxSearchesPerUser: 3 })
    const now = s.clock.now()
    await otherReplica(s, 'replica-b', '127.0.0.1:9', now)
    const publish = async (id: string, save: string) => {
      const record = {
        id, uid: owner.uid, gid, userQuery: 'tag=web', effectiveQuery: 'tag=web', startRange: now - 1000, endRange: now, started: now - 500,
        finished: 0, lastUpdate: now, storeSize: 0, indexSize: 0, itemCount: 0, metadata: null, import: null,
        launchInfo: { background: true, client: 'session' }, noHistory: false, error: '',
      }
      await s.rows('INSERT INTO search_records (id, owner, uid, gid, started, data, updated) VALUES (?, ?, ?, ?, ?, ?, ?)', [
        id, 'replica-b', owner.uid, gid, record.started, JSON.stringify({ record, background: true, save, attached: 0, unattendedSince: 0 }), now,
      ])
    }
    // two unsaved searches on B (a saved one does not count), one here: the fourth is refused here
    await publish('4000000011', 'none')
    await publish('4000000012', 'saving')
    await publish('4000000013', 'saved')
    await launch(s, owner.jwt)
    const refusedLaunch = await s.call('POST', '/api/searchctrl/launch', { jwt: owner.jwt, json: { SearchString: 'tag=web' } })
    expectError(refusedLaunch, 429)
    expect(refusedLaunch.body.Error).toContain('QUARRY_MAX_SEARCHES_PER_USER')
    expect((await s.call('GET', '/api/searchctrl', { jwt: owner.jwt })).body).toHaveLength(4)
    // B stops beating: its searches are gone, and the user may launch again
    s.clock.advance(BOUND_MS + 1)
    await launch(s, owner.jwt)
  })

  test('a saved search nobody holds is listed DORMANT/SAVED and taken over by the replica that needs it', async () => {
    const { s, owner } = await setup(CLUSTER)
    const now = s.clock.now()
    await s.rows(
      `INSERT INTO saved_searches (id, uid, gid, state, user_query, effective_query, start_range, end_range, started, finished, last_update,
        store_size, index_size, item_count, metadata, import, launch_info, no_history, error, results_key, index_key)
       VALUES (?, ?, 0, 'saved', 'tag=web', 'tag=web', ?, ?, ?, ?, ?, 0, 0, 0, NULL, NULL, ?, ?, '', 'searches/4000000002/results', 'searches/4000000002/index')`,
      ['4000000002', owner.uid, now - 1000, now, now - 900, now - 800, now - 800, JSON.stringify({ background: false, client: 'session' }), s.store.kind === 'pg' ? false : 0],
    )
    const listed = await s.call('GET', '/api/searchctrl', { jwt: owner.jwt })
    expect(listed.body).toEqual([expect.objectContaining({ ID: '4000000002', State: 'DORMANT/SAVED', AttachedClients: 0 })])
    expect(await s.rows('SELECT id FROM search_records')).toEqual([])
    const details = await s.call('GET', '/api/searchctrl/4000000002/details', { jwt: owner.jwt })
    expect(details.status).toBe(200)
    expect(details.body.State).toBe('DORMANT/SAVED')
    expect(await s.rows('SELECT id, owner FROM search_records')).toEqual([{ id: '4000000002', owner: s.cluster.id }])
    expect((await s.call('GET', '/api/searchctrl', { jwt: owner.jwt })).body).toEqual(listed.body)
  })
})
