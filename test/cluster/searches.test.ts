// Searches across three replicas (server/cluster; docs/cluster.md) through test/cluster/harness.ts: a search runs
// on the replica that launched it; every replica lists it and answers for it as that replica would (forwarded over
// the internal route); a replica killed mid-search takes its unsaved searches with it, within the heartbeat bound,
// while its saved ones stay and the others keep answering.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { HEARTBEAT_MS, LIVE_HEARTBEATS } from '../../server/cluster'
import { REQ } from '../../plugins/ws/protocol'
import { type Cluster, type Replica, startCluster, until } from './harness'

let cluster: Cluster
let A: Replica, B: Replica, C: Replica
let admin: string

beforeAll(async () => {
  // Entries are compacted into segments of 1 KiB every 200 ms by whichever replica holds the job, while the searches
  // of these tests run on every replica: they must not notice.
  cluster = await startCluster({ env: { QUARRY_SEGMENT_SIZE: '1KiB', QUARRY_COMPACT_INTERVAL: '200ms' } })
  ;[A, B, C] = cluster.replicas as [Replica, Replica, Replica]
  admin = await cluster.login('admin', cluster.adminPassword, A)
}, 60_000)
afterAll(() => cluster?.stop(), 30_000)

/** How long a dead replica may stay listed: the bound, plus room for a loaded machine. */
const DEATH_BOUND_MS = HEARTBEAT_MS * LIVE_HEARTBEATS
const T0 = Date.parse('2026-01-01T00:00:00Z')
const b64 = (text: string) => Buffer.from(text).toString('base64')

async function ingest(r: Replica, count: number, tag: string) {
  for (let i = 0; i < count; i += 1000) {
    const batch = Array.from({ length: Math.min(1000, count - i) }, (_, k) => ({ TS: new Date(T0 + (i + k) * 1000).toISOString(), Tag: tag, Data: b64(`${tag} line ${i + k}`) }))
    const res = await r.call('POST', '/api/ingest/json', { jwt: admin, json: batch })
    expect(res.status).toBe(200)
  }
}

async function launch(r: Replica, jwt: string, query: string): Promise<string> {
  const res = await r.call('POST', '/api/searchctrl/launch', {
    jwt,
    json: { SearchString: query, SearchStart: new Date(T0 - 1000).toISOString(), SearchEnd: new Date(T0 + 86_400_000).toISOString() },
  })
  expect(res.status).toBe(200)
  return res.body.SearchID as string
}

const ids = (r: { body: { ID: string }[] }) => r.body.map((e) => e.ID)

describe('cluster: searches', () => {
  test('launched on A: listed and detailed on B as on A, stopped and saved through B, downloaded and deleted through C', async () => {
    await ingest(A, 3000, 'clusterweb')
    const u = await cluster.createUser('searcher')
    const stranger = await cluster.createUser('stranger')
    const jwt = await cluster.login(u.User, u.Pass, A)
    const strangerJwt = await cluster.login(stranger.User, stranger.Pass, B)
    const id = await launch(A, jwt, 'tag=clusterweb grep line')
    // listed on B at once (published before the launch answered)
    expect(ids(await B.call('GET', '/api/searchctrl', { jwt }))).toContain(id)
    expect(ids(await C.call('GET', '/api/searchctrl/all', { jwt: admin }))).toContain(id)
    expect(ids(await B.call('GET', '/api/searchctrl', { jwt: strangerJwt }))).not.toContain(id)
    // once finished, B's listing equals A's, and B's details are A's (forwarded)
    const finished = await until(() => A.call('GET', `/api/searchctrl/${id}/details`, { jwt }), (r) => r.body.Finished !== '0001-01-01T00:00:00Z')
    expect(finished.body.ItemCount).toBe(3000)
    const onA = await A.call('GET', '/api/searchctrl', { jwt })
    const onB = await until(() => B.call('GET', '/api/searchctrl', { jwt }), (r) => JSON.stringify(r.body) === JSON.stringify(onA.body), DEATH_BOUND_MS * 2)
    expect(onB.body).toEqual(onA.body)
    for (const path of [`/api/searchctrl/${id}`, `/api/searchctrl/${id}/details`]) {
      const [a, b] = [await A.call('GET', path, { jwt }), await B.call('GET', path, { jwt })]
      expect(b.status).toBe(200)
      expect(b.body).toEqual(a.body)
    }
    // the owner's rules apply to requests forwarded from B: a stranger does not see it, anywhere
    for (const r of [A, B, C]) expect((await r.call('GET', `/api/searchctrl/${id}`, { jwt: strangerJwt })).status).toBe(404)
    expect((await B.call('PUT', `/api/searchctrl/${id}/stop`, { jwt: strangerJwt })).status).toBe(404)
    // stop and save through B; detach through B, so that the save completes; seen on A and C
    const stopped = await B.call('PUT', `/api/searchctrl/${id}/stop`, { jwt })
    expect([stopped.status, stopped.text]).toEqual([200, 'null'])
    const saved = await B.call('PATCH', `/api/searchctrl/${id}/save`, { jwt, json: { note: 'saved through B' } })
    expect([saved.status, saved.text]).toEqual([200, 'null'])
    expect((await B.call('PUT', `/api/searchctrl/${id}/detach`, { jwt })).status).toBe(200)
    const dormant = await until(() => C.call('GET', `/api/searchctrl/${id}/details`, { jwt }), (r) => r.body.State === 'DORMANT/SAVED')
    expect(dormant.body.State).toBe('DORMANT/SAVED')
    expect(dormant.body.Metadata).toEqual({ note: 'saved through B' })
    // a saved search stays stoppable nowhere: the same 400 through every replica
    for (const r of [A, B, C]) expect((await r.call('PUT', `/api/searchctrl/${id}/stop`, { jwt })).status).toBe(400)
    // downloaded through C: A's bytes and headers
    const [fromA, fromC] = [await A.call('GET', `/api/searchctrl/${id}/download/json`, { jwt }), await C.call('GET', `/api/searchctrl/${id}/download/json`, { jwt })]
    expect(fromC.status).toBe(200)
    expect(fromC.text).toBe(fromA.text)
    expect(fromC.body).toHaveLength(3000)
    for (const h of ['content-type', 'content-disposition', 'x-content-type-options']) expect(fromC.headers.get(h)).toBe(fromA.headers.get(h))
    // deleted through C: gone everywhere
    const deleted = await C.call('DELETE', `/api/searchctrl/${id}`, { jwt })
    expect([deleted.status, deleted.text]).toEqual([200, 'null'])
    for (const r of [A, B, C]) {
      expect(ids(await r.call('GET', '/api/searchctrl', { jwt }))).not.toContain(id)
      expect((await r.call('GET', `/api/searchctrl/${id}`, { jwt })).status).toBe(404)
    }
    expect(await cluster.rows('SELECT id FROM saved_searches WHERE id = ?', [id])).toEqual([])
  }, 90_000)

  test('entries compacted into segments by one replica: a search on any replica finds what it found over the rows', async () => {
    await ingest(B, 2000, 'clusterseg')
    const want = Array.from({ length: 2000 }, (_, i) => i)
      .filter((i) => `clusterseg line ${i}`.includes('line 1'))
      .map((i) => ({ TS: new Date(T0 + i * 1000).toISOString(), Tag: 'clusterseg', Data: b64(`clusterseg line ${i}`) }))
    const results = async (r: Replica) => {
      const id = await launch(r, admin, 'tag=clusterseg grep "line 1"')
      await until(() => r.call('GET', `/api/searchctrl/${id}/details`, { jwt: admin }), (d) => d.body.Finished !== '0001-01-01T00:00:00Z')
      const got = await r.call('GET', `/api/searchctrl/${id}/download/json`, { jwt: admin })
      expect((await r.call('DELETE', `/api/searchctrl/${id}`, { jwt: admin })).status).toBe(200)
      return (got.body as { TS: string; Tag: string; Data: string }[]).map(({ TS, Tag, Data }) => ({ TS, Tag, Data }))
    }
    // While the compaction goes on, and once it has taken all but the last KiB of rows.
    for (const r of [A, B, C]) expect(await results(r)).toEqual(want)
    const left = await until(
      async () => Number((await cluster.rows("SELECT count(*) AS n FROM entries e JOIN ingest_tags t ON t.id = e.tag_id WHERE t.name = 'clusterseg'"))[0]!.n),
      (n) => n < 100,
    )
    expect(left).toBeLessThan(100)
    expect(Number((await cluster.rows('SELECT count(*) AS n FROM entry_segments'))[0]!.n)).toBeGreaterThan(20)
    for (const r of [A, B, C]) expect(await results(r)).toEqual(want)
  }, 90_000)

  test('followed over a WebSocket on B: attached on A through B, entries as A answers them, detached when the socket closes', async () => {
    await ingest(A, 50, 'clusterws')
    const u = await cluster.createUser('follower')
    const jwt = await cluster.login(u.User, u.Pass, A)
    const id = await launch(A, jwt, 'tag=clusterws')
    await until(() => A.call('GET', `/api/searchctrl/${id}/details`, { jwt }), (r) => r.body.Finished !== '0001-01-01T00:00:00Z')
    const open = (r: Replica) => {
      const ws = new WebSocket(`${r.url.replace(/^http/, 'ws')}/api/ws/search`, jwt)
      const queue: any[] = []
      let wake: (() => void) | null = null
      ws.onmessage = (e) => {
        queue.push(JSON.parse(String(e.data)))
        wake?.()
      }
      const opened = new Promise((resolve) => (ws.onopen = resolve))
      const next = async () => {
        const end = Date.now() + 10_000
        while (queue.length === 0 && Date.now() < end) await new Promise<void>((resolve) => ((wake = resolve), setTimeout(resolve, 200)))
        return queue.shift()
      }
      const ask = async (m: unknown) => (ws.send(JSON.stringify(m)), next())
      return { ws, opened, ask }
    }
    const answers = async (r: Replica) => {
      const s = open(r)
      await s.opened
      const attached = await s.ask({ type: 'attach', data: { ID: id } })
      expect(typeof attached.data.Subproto).toBe('string')
      const sub = attached.data.Subproto as string
      const entries = await s.ask({ type: sub, data: { ID: REQ.GET_ENTRIES, EntryRange: { First: 0, Last: 100 } } })
      const details = await s.ask({ type: sub, data: { ID: REQ.SEARCH_DETAILS } })
      return { s, attached, entries, details, sub }
    }
    const onA = await answers(A)
    const onB = await answers(B)
    expect(onB.entries.type).toBe(onB.sub)
    expect(onB.entries.data).toEqual(onA.entries.data)
    expect(onB.entries.data.Entries).toHaveLength(50)
    expect(onB.details.data.SearchInfo).toEqual(onA.details.data.SearchInfo)
    expect(onB.attached.data.Info.ID).toBe(id)
    // B's socket is a client of the search on A: the launching session, A's socket and B's socket
    const attachedCount = async () => (await A.call('GET', '/api/searchctrl', { jwt })).body.find((e: { ID: string }) => e.ID === id)?.AttachedClients
    expect(await attachedCount()).toBe(3)
    // a Close request on B's subprotocol is answered by A, under B's name
    const closed = await onB.s.ask({ type: onB.sub, data: { ID: REQ.CLOSE } })
    expect([closed.type, closed.data.ID]).toEqual([onB.sub, REQ.CLOSE])
    expect(await until(attachedCount, (n) => n === 2, 10_000)).toBe(2)
    // attach again on B, then close the socket: A's side detaches
    const again = await onB.s.ask({ type: 'attach', data: { ID: id } })
    expect(typeof again.data.Subproto).toBe('string')
    expect(await attachedCount()).toBe(3)
    onB.s.ws.close()
    expect(await until(attachedCount, (n) => n === 2, 10_000)).toBe(2)
    onA.s.ws.close()
  }, 90_000)

  test('a user deleted through C: the searches A runs for them leave every listing within the bound', async () => {
    const u = await cluster.createUser('leaving')
    const jwt = await cluster.login(u.User, u.Pass, A)
    const id = await launch(A, jwt, 'tag=clusterweb')
    expect((await A.call('PATCH', `/api/searchctrl/${id}/background`, { jwt })).status).toBe(200)
    for (const r of [A, B, C]) expect(ids(await r.call('GET', '/api/searchctrl/all', { jwt: admin }))).toContain(id)
    expect((await C.call('DELETE', `/api/users/${u.uid}/`, { jwt: admin })).status).toBe(200)
    for (const r of [A, B, C]) {
      const listed = await until(() => r.call('GET', '/api/searchctrl/all', { jwt: admin }), (res) => !ids(res).includes(id), DEATH_BOUND_MS + 10_000)
      expect(ids(listed)).not.toContain(id)
    }
    expect((await A.call('GET', `/api/searchctrl/${id}`, { jwt: admin })).status).toBe(404)
  }, 60_000)

  test('SIGKILL of A mid-search: B and C keep answering, its unsaved searches leave the listings within the bound, its saved one stays; ping drops A', async () => {
    const ping = async (r: Replica) => Object.keys((await r.call('GET', '/api/stats/ping', { jwt: admin })).body).sort()
    const keyOf = (r: Replica) => new URL(r.url).host
    const all = [A, B, C].map(keyOf)
    expect(await ping(B)).toEqual([...all, 'webserver'].sort())
    expect(Object.keys((await C.call('GET', '/api/stats/sysDesc', { jwt: admin })).body).sort()).toEqual([...all, 'webserver'].sort())
    const u = await cluster.createUser('victim')
    const jwt = await cluster.login(u.User, u.Pass, B)
    // a saved search of A (results in the bucket), a kept one and a running one (many entries to read)
    await ingest(A, 20_000, 'clusterkill')
    const saved = await launch(A, jwt, 'tag=clusterkill grep "line 1"')
    await until(() => A.call('GET', `/api/searchctrl/${saved}/details`, { jwt }), (r) => r.body.Finished !== '0001-01-01T00:00:00Z')
    expect((await B.call('PATCH', `/api/searchctrl/${saved}/save`, { jwt })).status).toBe(200)
    expect((await B.call('PUT', `/api/searchctrl/${saved}/detach`, { jwt })).status).toBe(200)
    await until(() => A.call('GET', `/api/searchctrl/${saved}/details`, { jwt }), (r) => r.body.State === 'DORMANT/SAVED')
    const kept = await launch(A, jwt, 'tag=clusterkill grep "line 2"')
    expect((await C.call('PATCH', `/api/searchctrl/${kept}/background`, { jwt })).status).toBe(200)
    const running = await launch(A, jwt, 'tag=clusterkill')
    for (const r of [B, C]) expect(ids(await r.call('GET', '/api/searchctrl', { jwt }))).toEqual(expect.arrayContaining([saved, kept, running]))

    await cluster.kill(A)
    const killedAt = Date.now()
    // at once: B and C answer; A's unsaved searches are gone (404, not 5xx); its saved one is served
    for (const r of [B, C]) {
      expect((await r.call('GET', '/api/searchctrl', { jwt })).status).toBe(200)
      expect((await r.call('GET', '/api/stats/ping', { jwt: admin })).status).toBe(200)
      for (const id of [kept, running]) {
        const res = await r.call('GET', `/api/searchctrl/${id}/details`, { jwt })
        expect(res.status).toBe(404)
        expect(res.body).toHaveProperty('Error')
      }
    }
    const savedOnC = await C.call('GET', `/api/searchctrl/${saved}/details`, { jwt })
    expect([savedOnC.status, savedOnC.body.State]).toEqual([200, 'DORMANT/SAVED'])
    expect((await B.call('GET', `/api/searchctrl/${saved}/download/json`, { jwt })).status).toBe(200)
    // within the bound: the unsaved ones leave every listing, the saved one stays; A leaves the status objects
    const listedOnB = await until(() => B.call('GET', '/api/searchctrl', { jwt }), (r) => !ids(r).includes(kept) && !ids(r).includes(running))
    expect(Date.now() - killedAt).toBeLessThan(DEATH_BOUND_MS + 10_000)
    expect(ids(listedOnB)).toEqual([saved])
    expect(ids(await C.call('GET', '/api/searchctrl', { jwt }))).toEqual([saved])
    expect(await until(() => ping(C), (k) => !k.includes(keyOf(A)))).toEqual([keyOf(B), keyOf(C), 'webserver'].sort())
    expect(Object.keys((await B.call('GET', '/api/stats/sysDesc', { jwt: admin })).body).sort()).toEqual([keyOf(B), keyOf(C), 'webserver'].sort())
    // A restarted rejoins the status objects; the saved search is still served, whoever holds it now
    await cluster.restart(A)
    expect(await until(() => ping(B), (k) => k.includes(keyOf(A)))).toEqual([...all, 'webserver'].sort())
    const savedOnA = await A.call('GET', `/api/searchctrl/${saved}`, { jwt })
    expect(savedOnA.status).toBe(200)
    expect(ids(await A.call('GET', '/api/searchctrl', { jwt }))).toEqual([saved])
  }, 120_000)
})
