// The WebSocket endpoints through a real listening server and real WebSocket clients (Bun's). Each client test
// sends exactly what the TypeScript client's function sends (subscribeToOneSearch with initiateSearch,
// validateOneQuery, modifyOneQuery, attachToOneSearch, subscribeToManySystemInformations) and checks the answers
// against the fields that client reads, with their types (null vs [] included).
import { afterAll, describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ADMIN_PASSWORD, type TestServer, createTestServer, expectError, listening as spawnedListening, spawnServer, tempDirs } from '../../test/helpers'
import { type SocketClient as Client, frame, nonReadingClient, openSocket as open } from '../../test/ws-client'
import { CREDENTIAL_CHECK_MS, MAX_ANSWER_BYTES, MAX_ENTRIES, WS_HIGH_WATER, WS_MAX_MESSAGE, WS_MAX_PENDING } from '.'
import { writeSearchArchive } from '../../server/search/archive'
import { PREVIEW_ENTRIES } from '../../server/search/manager'
import { ZERO_TIME } from '../../server/runtime/time'
import { REQ, RESP_ERROR } from './protocol'

const servers: TestServer[] = []
const tempDir = tempDirs('ws')
afterAll(async () => {
  for (const s of servers) {
    await s.app.stop(true)
    s.close()
  }
})

/** A test server listening on a free loopback port; answers it and its ws:// base. */
async function listening(overrides: Parameters<typeof createTestServer>[0] = {}) {
  const server = await createTestServer(overrides)
  servers.push(server)
  server.app.listen({ hostname: '127.0.0.1', port: 0 })
  const port = server.app.server!.port!
  return { server, port, base: `ws://127.0.0.1:${port}` }
}

/** The raw answer to an upgrade request (status and body), for refused upgrades. */
async function upgradeStatus(port: number, path: string, headers: Record<string, string>) {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    headers: { upgrade: 'websocket', connection: 'Upgrade', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==', ...headers },
  })
  const text = await res.text()
  return { status: res.status, body: text ? JSON.parse(text) : undefined }
}

async function ingest(server: TestServer, tag: string, n: number, size = 16) {
  const now = server.clock.now()
  const entries = Array.from({ length: n }, (_, i) => ({
    TS: new Date(now - 60_000 + i).toISOString(),
    Tag: tag,
    SRC: '10.0.0.1',
    Data: Buffer.from(`entry ${i} `.padEnd(size, 'x')).toString('base64'),
  }))
  const batch = Math.max(1, Math.min(500, Math.floor((2 << 20) / (size * 2))))
  for (let i = 0; i < entries.length; i += batch) {
    const res = await server.call('POST', '/api/ingest/json', { jwt: server.adminJwt, json: entries.slice(i, i + batch) })
    expect(res.status).toBe(200)
  }
}

const isString = (v: unknown) => typeof v === 'string'
const isNumber = (v: unknown) => typeof v === 'number'
const isBoolean = (v: unknown) => typeof v === 'boolean'

/** What initiateSearch sends (filterID in the Addendum as subscribeToOneSearch passes it). */
function initiateMessage(query: string, range: [Date, Date], extra: Record<string, unknown> = {}) {
  return {
    type: 'search',
    data: {
      Addendum: { filterID: 'search-filter-1' },
      Background: false,
      Metadata: {},
      SearchStart: range[0].toISOString(),
      SearchEnd: range[1].toISOString(),
      SearchString: query,
      ...extra,
    },
  }
}

/** subscribeToOneSearch up to the ACK: answers the initiated message and the subprotocol. */
async function initiate(c: Client, query: string, range: [Date, Date], extra: Record<string, unknown> = {}) {
  c.send({ Subs: ['PONG', 'parse', 'search', 'attach'] })
  c.send(initiateMessage(query, range, extra))
  const init = await c.next((m) => m.type === 'search' && m.data.RawQuery === query)
  if (init.data.Error) return { init, subproto: '' }
  c.send({ type: 'search', data: { OK: true, OutputSearchSubproto: init.data.OutputSearchSubproto } })
  return { init, subproto: init.data.OutputSearchSubproto as string }
}

/** The four requests requestEntries sends for a filter. */
function requestEntries(c: Client, subproto: string, filterID: string, first: number, count: number, range: [Date, Date]) {
  const start = range[0].toISOString()
  const end = range[1].toISOString()
  c.send({ type: subproto, data: { ID: REQ.TS_RANGE, Addendum: { filterID }, EntryRange: { First: first, Last: first + count, StartTS: start, EndTS: end } } })
  c.send({ type: subproto, data: { ID: REQ.STATS_GET, Addendum: { filterID }, Stats: { SetCount: 90 } } })
  c.send({ type: subproto, data: { ID: REQ.SEARCH_DETAILS, Addendum: { filterID } } })
  c.send({ type: subproto, data: { ID: REQ.STATS_GET_RANGE, Addendum: { filterID }, Stats: { SetCount: 90, SetEnd: end, SetStart: start } } })
}

async function finished(server: TestServer, id: string) {
  for (let i = 0; i < 400; i++) {
    const res = await server.call('GET', `/api/searchctrl/${id}/details`, { jwt: server.adminJwt })
    if (res.status === 200 && res.body.Finished !== '0001-01-01T00:00:00Z') return
    await Bun.sleep(25)
  }
  throw new Error(`search ${id} did not finish`)
}

describe('/api/ws/stats (subscribeToManySystemInformations)', () => {
  test('the JWT as subprotocol is echoed; ACK, then ping and sysDesc keyed by webserver and host:port', async () => {
    const { server, base, port } = await listening()
    const c = await open(`${base}/api/ws/stats`, { protocol: server.adminJwt })
    expect(c.ws.protocol).toBe(server.adminJwt)
    c.send({ Subs: ['ping', 'sysDesc'] })
    expect(await c.next((m) => m.Resp !== undefined)).toEqual({ Resp: 'ACK' })
    const ping = await c.next((m) => m.type === 'ping')
    expect(ping.data.States).toEqual({ webserver: 'OK', [`127.0.0.1:${port}`]: 'OK' })
    const desc = await c.next((m) => m.type === 'sysDesc')
    for (const key of ['webserver', `127.0.0.1:${port}`]) {
      const d = desc.data[key]
      for (const f of ['VirtSystem', 'VirtRole', 'CPUModel', 'CPUMhz', 'CPUCache', 'SystemVersion']) expect(isString(d[f])).toBe(true)
      for (const f of ['CPUCount', 'TotalMemoryMB']) expect(Number.isInteger(d[f])).toBe(true)
    }
    // Updates keep coming (every STATS_INTERVAL_MS); the client's own test accepts only ping messages and the ACK.
    await c.next((m) => m.type === 'ping', 6000)
    for (const m of c.received) if (m.type === undefined) expect(m).toEqual({ Resp: 'ACK' })
    else expect(['ping', 'sysDesc']).toContain(m.type)
    c.ws.close()
  })

  test('sysStats, igstStats and idxStats have the shapes the client declares', async () => {
    const { server, base } = await listening()
    const c = await open(`${base}/api/ws/stats`, { protocol: server.adminJwt })
    c.send({ Subs: ['sysStats', 'igstStats', 'idxStats'] })
    const sys = await c.next((m) => m.type === 'sysStats')
    const stats = sys.data.Stats.webserver.Stats
    for (const f of ['Uptime', 'TotalMemory', 'ProcessHeapAllocation', 'ProcessSysReserved', 'MemoryUsedPercent', 'CPUUsage', 'CPUCount']) expect(isNumber(stats[f])).toBe(true)
    expect(stats.Disks).toEqual([])
    expect(stats.IO).toEqual([])
    expect(stats.Net).toEqual({ Up: 0, Down: 0 })
    expect(isString(stats.BuildInfo.BuildDate)).toBe(true)
    expect((await c.next((m) => m.type === 'igstStats')).data).toEqual({ Stats: {} })
    const idx = await c.next((m) => m.type === 'idxStats')
    for (const v of Object.values(idx.data.Stats) as any[]) expect(v.IndexStats).toEqual([])
    c.ws.close()
  })

  test('a malformed message or an unknown category is answered with an error; the socket stays usable', async () => {
    const { server, base } = await listening()
    const c = await open(`${base}/api/ws/stats`, { protocol: server.adminJwt })
    c.send('{not json')
    expect(isString((await c.next((m) => m.Error !== undefined)).Error)).toBe(true)
    c.send({ Subs: 'ping' })
    expect(isString((await c.next((m) => m.Error !== undefined)).Error)).toBe(true)
    c.send({ Subs: ['ping', 'nonsense'] })
    expect(await c.next((m) => m.Resp !== undefined)).toEqual({ Resp: 'ACK' })
    expect((await c.next((m) => m.Error !== undefined)).Error).toContain('nonsense')
    await c.next((m) => m.type === 'ping')
    c.ws.close()
  })
})

describe('authentication of the upgrade', () => {
  test('JWT in Authorization, API token with the permission: accepted; none, bad, or a token without it: refused', async () => {
    const { server, base, port } = await listening()
    const user = await server.createUser()
    // Authorization header
    const byHeader = await open(`${base}/api/ws/search`, { headers: { authorization: `Bearer ${user.jwt}` } })
    byHeader.send({ type: 'parse', data: { SearchString: 'tag=*', Sequence: 1 } })
    expect((await byHeader.next((m) => m.type === 'parse')).data.GoodQuery).toBe(true)
    byHeader.ws.close()
    // API tokens: with Search (and Stats), accepted; without, 403 naming the permission
    const token = async (capabilities: string[]) => {
      const res = await server.call('POST', '/api/tokens', { jwt: user.jwt, json: { name: `t${capabilities.join('')}`, capabilities } })
      expect(res.status).toBe(200)
      return res.body.token as string
    }
    const searchToken = await token(['Search'])
    const byToken = await open(`${base}/api/ws/search`, { headers: { 'Service-Token': searchToken } })
    byToken.send({ type: 'parse', data: { SearchString: 'tag=*', Sequence: 2 } })
    expect((await byToken.next((m) => m.type === 'parse')).data.Sequence).toBe(2)
    byToken.ws.close()
    expect(await upgradeStatus(port, '/api/ws/stats', { 'Service-Token': searchToken })).toEqual({ status: 403, body: { Error: 'permission Stats required', Cap: 'Stats' } })
    const statsToken = await token(['Stats'])
    expect(await upgradeStatus(port, '/api/ws/search', { 'Service-Token': statsToken })).toEqual({ status: 403, body: { Error: 'permission Search required', Cap: 'Search' } })
    const statsSocket = await open(`${base}/api/ws/stats`, { headers: { 'Gravwell-Token': statsToken } })
    statsSocket.ws.close()
    // anonymous, garbage JWT (as subprotocol and as header), garbage token: 401 before any upgrade
    for (const path of ['/api/ws/search', '/api/ws/stats']) {
      const bad: Record<string, string>[] = [{}, { 'sec-websocket-protocol': 'not.a.jwt' }, { authorization: 'Bearer not.a.jwt' }, { 'Service-Token': 'nope' }]
      for (const headers of bad) {
        const res = await upgradeStatus(port, path, headers)
        expect(res.status).toBe(401)
        expect(isString(res.body.Error)).toBe(true)
      }
    }
    // a real client without credentials does not get a socket
    const anonymous = new WebSocket(`${base}/api/ws/search`)
    const outcome = await new Promise<string>((resolve) => {
      anonymous.onopen = () => resolve('open')
      anonymous.onerror = () => resolve('refused')
    })
    expect(outcome).toBe('refused')
  })

  test('logging out ends the sockets of that session (1008) and removes their searches nobody keeps; a refresh does not', async () => {
    const { server, base } = await listening()
    const user = await server.createUser()
    const now = server.clock.now()
    const c = await open(`${base}/api/ws/search`, { protocol: user.jwt })
    const { init } = await initiate(c, 'tag=web', [new Date(now - 1000), new Date(now + 1000)])
    // the JWT is refreshed: the socket goes on, under the new session
    const refreshed = await server.call('GET', '/api/login/refreshtoken', { jwt: user.jwt })
    expect(refreshed.status).toBe(200)
    const jwt = refreshed.body.JWT as string
    c.send({ type: 'parse', data: { SearchString: 'tag=*', Sequence: 5 } })
    expect((await c.next((m) => m.type === 'parse')).data.Sequence).toBe(5)
    const res = await server.call('PUT', '/api/logout', { jwt })
    expect(res.status).toBe(200)
    expect((await c.closed).code).toBe(1008)
    expect((await server.call('GET', '/api/searchctrl?admin=true', { jwt: server.adminJwt })).body.find((s: any) => s.ID === init.data.SearchID)).toBeUndefined()
  })
  test('messages on a socket count as activity of its session (idle timeout), at most one store write per second per session', async () => {
    const { server, base } = await listening({ sessionIdleMs: 60_000 })
    const user = await server.createUser()
    const sessionId = JSON.parse(Buffer.from(user.jwt.split('.')[1]!, 'base64url').toString()).jti as string
    const lastHit = async () => (await server.store.sessions.getWithUser(sessionId))!.session.lastHit
    const c = await open(`${base}/api/ws/search`, { protocol: user.jwt })
    let seq = 0
    const parse = async () => {
      const sequence = ++seq
      c.send({ type: 'parse', data: { SearchString: 'tag=*', Sequence: sequence } })
      expect((await c.next((m) => m.type === 'parse' && m.data.Sequence === sequence)).data.GoodQuery).toBe(true)
    }
    const until = async (want: number) => {
      for (let i = 0; i < 200 && (await lastHit()) !== want; i++) await Bun.sleep(10)
      return lastHit()
    }
    // 40 s, a message, 40 s more: 80 s since the login, 40 s since the last activity: the session is alive
    server.clock.advance(40_000)
    await parse()
    const touched = server.clock.now()
    expect(await until(touched)).toBe(touched)
    server.clock.advance(40_000)
    expect((await server.call('GET', '/api/info/whoami', { jwt: user.jwt })).status).toBe(200)
    expect(await until(server.clock.now())).toBe(server.clock.now())
    // within a second of the last write, messages (from any socket of the session) write nothing
    const written = server.clock.now()
    const second = await open(`${base}/api/ws/search`, { protocol: user.jwt })
    server.clock.advance(1)
    await parse()
    second.send({ type: 'parse', data: { SearchString: 'tag=*', Sequence: 1 } })
    await second.next((m) => m.type === 'parse')
    await Bun.sleep(100)
    expect(await lastHit()).toBe(written)
    // PONG keep-alives are not activity: 61 s of them end the session, and its sockets close (1008)
    for (let i = 0; i < 61; i++) {
      server.clock.advance(1000)
      c.send({ type: 'PONG', data: {} })
    }
    await Bun.sleep(100)
    expect(await lastHit()).toBe(written)
    c.send({ type: 'parse', data: { SearchString: 'tag=*', Sequence: 99 } })
    expect((await c.closed).code).toBe(1008)
    expect((await second.closed).code).toBe(1008)
    expect((await server.call('GET', '/api/info/whoami', { jwt: user.jwt })).status).toBe(401)
  })
})

describe('/api/ws/search', () => {
  test('subscribeToOneSearch: launch, ACK, entries, stats, details; the search is the one GET /api/searchctrl lists', async () => {
    const { server, base } = await listening()
    await ingest(server, 'web', 150)
    const user = await server.createUser()
    const now = server.clock.now()
    const range: [Date, Date] = [new Date(now - 3_600_000), new Date(now + 1000)]
    const c = await open(`${base}/api/ws/search`, { protocol: user.jwt })
    const query = 'tag=web grep entry'
    const { init, subproto } = await initiate(c, query, range)
    // RawSearchInitiatedMessageReceived
    const d = init.data
    expect(d.Error).toBeUndefined()
    expect(d.RawQuery).toBe(query)
    expect(d.SearchString).toBe(query)
    expect(d.RenderModule).toBe('text')
    expect(isString(d.RenderCmd)).toBe(true)
    expect(isString(d.OutputSearchSubproto)).toBe(true)
    expect(isString(d.SearchID)).toBe(true)
    expect(d.SearchID).toMatch(/^\d+$/)
    expect(d.SearchStartRange).toBe(range[0].toISOString())
    expect(d.SearchEndRange).toBe(range[1].toISOString())
    expect(d.Metadata).toEqual({})
    expect(d.Tags).toEqual(['web'])
    expect(d.ModuleHints).toEqual([
      { Name: 'grep', ProducedEVs: [], ConsumedEVs: [], ResourcesNeeded: [], Condensing: false },
      { Name: 'text', ProducedEVs: [], ConsumedEVs: [], ResourcesNeeded: [], Condensing: false },
    ])
    expect(d.CollapsingIndex).toBe(1)
    expect(d.TimeZoomDisabled).toBe(false)
    await finished(server, d.SearchID)

    // the same search through REST: listed, attached by this socket
    const list = await server.call('GET', '/api/searchctrl', { jwt: user.jwt })
    const listed = list.body.find((s: any) => s.ID === d.SearchID)
    expect(listed).toMatchObject({ UID: user.uid, State: 'ACTIVE', AttachedClients: 1, UserQuery: query, EffectiveQuery: query })

    requestEntries(c, subproto, 'search-filter-2', 0, 100, range)
    const entries = await c.next((m) => m.type === subproto && m.data.ID === REQ.TS_RANGE)
    expect(entries.data.Addendum).toEqual({ filterID: 'search-filter-2' })
    expect(entries.data.EntryRange).toEqual({ First: 0, Last: 100, StartTS: range[0].toISOString(), EndTS: range[1].toISOString() })
    expect(entries.data.Finished).toBe(true)
    expect(entries.data.EntryCount).toBe(150)
    expect(entries.data.AdditionalEntries).toBe(true)
    expect(entries.data.Entries).toHaveLength(100)
    for (const e of entries.data.Entries) {
      // the client's isRawSearchEntry: TS, SRC, Data strings, Tag a number, Enumerated an array
      expect(isString(e.TS) && isString(e.SRC) && isNumber(e.Tag) && isString(e.Data) && Array.isArray(e.Enumerated)).toBe(true)
    }
    // newest first: entry i is at t0 + i ms
    expect(Buffer.from(entries.data.Entries[0].Data, 'base64').toString()).toStartWith('entry 149 ')
    expect(Buffer.from(entries.data.Entries[99].Data, 'base64').toString()).toStartWith('entry 50 ')

    const stats = await c.next((m) => m.type === subproto && m.data.ID === REQ.STATS_GET)
    expect(stats.data.Addendum).toEqual({ filterID: 'search-filter-2' })
    expect(stats.data.Finished).toBe(true)
    expect(stats.data.EntryCount).toBe(150)
    expect(stats.data.AdditionalEntries).toBe(false)
    for (const f of ['Current', 'RangeStart', 'RangeEnd']) expect(isString(stats.data.Stats[f])).toBe(true)
    expect(isNumber(stats.data.Stats.Size)).toBe(true)
    expect(stats.data.Stats.Set.length).toBeGreaterThan(0)
    for (const set of stats.data.Stats.Set) {
      expect(isString(set.TS)).toBe(true)
      for (const m of set.Stats) {
        expect(isString(m.Name) && isString(m.Args)).toBe(true)
        for (const f of ['Duration', 'InputBytes', 'InputCount', 'OutputBytes', 'OutputCount']) expect(isNumber(m[f])).toBe(true)
      }
    }
    // every window asked for is listed; the last row's outputs add up to every entry
    expect(stats.data.Stats.Set).toHaveLength(90)
    expect(stats.data.Stats.Set.reduce((n: number, set: any) => n + set.Stats.at(-1).OutputCount, 0)).toBe(150)

    const details = await c.next((m) => m.type === subproto && m.data.ID === REQ.SEARCH_DETAILS)
    expect(details.data.Finished).toBe(true)
    const info = details.data.SearchInfo
    expect(info.ID).toBe(d.SearchID)
    expect(info.UID).toBe(user.uid)
    expect(info.UserQuery).toBe(query)
    expect(info.EffectiveQuery).toBe(query)
    for (const f of ['StartRange', 'EndRange', 'Started', 'LastUpdate', 'Duration']) expect(isString(info[f])).toBe(true)
    for (const f of ['CollapsingIndex', 'IndexSize', 'ItemCount', 'MinZoomWindow', 'StoreSize']) expect(isNumber(info[f])).toBe(true)
    for (const f of ['Descending', 'NoHistory', 'TimeZoomDisabled']) expect(isBoolean(info[f])).toBe(true)
    expect(info.RenderDownloadFormats).toEqual(['json', 'csv', 'text'])
    expect(info.Metadata).toEqual({})
    expect(info.ItemCount).toBe(150)

    const zoom = await c.next((m) => m.type === subproto && m.data.ID === REQ.STATS_GET_RANGE)
    expect(Array.isArray(zoom.data.Stats.Set)).toBe(true)

    // the rest of the results
    c.send({ type: subproto, data: { ID: REQ.TS_RANGE, Addendum: {}, EntryRange: { First: 100, Last: 200, StartTS: range[0].toISOString(), EndTS: range[1].toISOString() } } })
    const rest = await c.next((m) => m.type === subproto && m.data.ID === REQ.TS_RANGE)
    expect(rest.data.Entries).toHaveLength(50)
    expect(rest.data.EntryRange.Last).toBe(150)
    expect(rest.data.AdditionalEntries).toBe(false)
    c.ws.close()
  })

  test('Preview (no range): the newest PREVIEW_ENTRIES entries of the query\'s tags, the range they span in SearchInfo', async () => {
    const { server, base } = await listening()
    await ingest(server, 'web', 1200) // entry i at now - 60 s + i ms
    const now = server.clock.now()
    const old = Array.from({ length: 50 }, (_, i) => ({ TS: new Date(now - 86_400_000 + i).toISOString(), Tag: 'db', Data: Buffer.from(`db ${i}`).toString('base64') }))
    expect((await server.call('POST', '/api/ingest/json', { jwt: server.adminJwt, json: old })).status).toBe(200)
    const c = await open(`${base}/api/ws/search`, { protocol: server.adminJwt })
    const preview = async (query: string) => {
      const { init, subproto } = await initiate(c, query, [new Date(0), new Date(0)], { SearchStart: null, SearchEnd: null, Preview: true })
      expect(init.data.Error).toBeUndefined()
      await finished(server, init.data.SearchID)
      c.send({ type: subproto, data: { ID: REQ.SEARCH_DETAILS } })
      const info = (await c.next((m) => m.type === subproto && m.data.ID === REQ.SEARCH_DETAILS)).data.SearchInfo
      c.send({ type: subproto, data: { ID: REQ.GET_ENTRIES, EntryRange: { First: 0, Last: 1000 } } })
      const entries = (await c.next((m) => m.type === subproto && m.data.ID === REQ.GET_ENTRIES)).data.Entries
      return { info, texts: entries.map((e: any) => Buffer.from(e.Data, 'base64').toString().split(' ').slice(0, 2).join(' ')) }
    }
    // 1200 web entries: the newest 500, newest first; the range starts at the oldest of them
    const web = await preview('tag=web')
    expect(web.texts).toEqual(Array.from({ length: PREVIEW_ENTRIES }, (_, k) => `entry ${1199 - k}`))
    expect(web.info.Preview).toBe(true)
    expect(Date.parse(web.info.StartRange)).toBe(now - 60_000 + 1200 - PREVIEW_ENTRIES)
    // fewer than PREVIEW_ENTRIES: all of them, a day old
    const db = await preview('tag=db')
    expect(db.texts).toEqual(Array.from({ length: 50 }, (_, k) => `db ${49 - k}`))
    c.ws.close()
  })

  test('entries asked while the search runs: each answer is the newest of what is stored, and one that says Finished holds them all', async () => {
    const { server, base } = await listening()
    await ingest(server, 'web', 5000)
    const now = server.clock.now()
    const range: [Date, Date] = [new Date(now - 3_600_000), new Date(now + 1000)]
    const c = await open(`${base}/api/ws/search`, { protocol: server.adminJwt })
    const { subproto } = await initiate(c, 'tag=web', range)
    const number = (e: any) => Number(Buffer.from(e.Data, 'base64').toString().split(' ')[1])
    let finishedSeen = false
    for (let i = 0; i < 2000 && !finishedSeen; i++) {
      c.send({ type: subproto, data: { ID: REQ.GET_ENTRIES, Addendum: { i }, EntryRange: { First: 0, Last: 1000 } } })
      const a = (await c.next((m) => m.type === subproto && m.data.Addendum?.i === i)).data
      // entry i is at t0 + i ms: the newest stored first, as many as asked or stored
      expect(a.Entries.map(number)).toEqual(Array.from({ length: Math.min(1000, a.EntryCount) }, (_, k) => a.EntryCount - 1 - k))
      if (a.Finished) {
        expect(a.EntryCount).toBe(5000)
        finishedSeen = true
      }
    }
    expect(finishedSeen).toBe(true)
    c.ws.close()
  })

  test('a zoomed time range (TS_RANGE, EXPLORE_TS_RANGE) answers only the entries with TS in [StartTS, EndTS), counted within them, newest first', async () => {
    const { server, base } = await listening()
    await ingest(server, 'web', 150) // entry i at t0 + i ms
    const now = server.clock.now()
    const t0 = now - 60_000
    const range: [Date, Date] = [new Date(now - 3_600_000), new Date(now + 1000)]
    const c = await open(`${base}/api/ws/search`, { protocol: server.adminJwt })
    const { init, subproto } = await initiate(c, 'tag=web', range)
    await finished(server, init.data.SearchID)
    const texts = (m: any) => m.data.Entries.map((e: any) => Buffer.from(e.Data, 'base64').toString().split(' ')[1])
    const ask = async (id: number, first: number, last: number, start: string, end: string) => {
      c.send({ type: subproto, data: { ID: id, Addendum: { filterID: `f${first}` }, EntryRange: { First: first, Last: last, StartTS: start, EndTS: end } } })
      return c.next((m) => m.type === subproto && m.data.Addendum?.filterID === `f${first}`)
    }
    const zoom: [string, string] = [new Date(t0 + 20).toISOString(), new Date(t0 + 70).toISOString()] // entries 20..69
    const page = await ask(REQ.TS_RANGE, 10, 30, ...zoom)
    expect(page.data.ID).toBe(REQ.TS_RANGE)
    expect(texts(page)).toEqual(Array.from({ length: 20 }, (_, i) => String(59 - i)))
    expect(page.data.EntryRange).toEqual({ First: 10, Last: 30, StartTS: zoom[0], EndTS: zoom[1] })
    expect(page.data.AdditionalEntries).toBe(true)
    expect(page.data.EntryCount).toBe(150)
    // the oldest end of the subset: StartTS is inclusive (entry 20 is in it)
    const tail = await ask(REQ.TS_RANGE, 40, 60, ...zoom)
    expect(texts(tail)).toEqual(Array.from({ length: 10 }, (_, i) => String(29 - i)))
    // the newest: EndTS is exclusive (entry 70 is not in it)
    expect(texts(await ask(REQ.TS_RANGE, 0, 1, ...zoom))).toEqual(['69'])
    expect(tail.data.EntryRange.Last).toBe(50)
    expect(tail.data.AdditionalEntries).toBe(false)
    // explore entries, the zero time as EndTS: unbounded on that side
    const open_ = await ask(REQ.EXPLORE_TS_RANGE, 0, 100, new Date(t0 + 140).toISOString(), '0001-01-01T00:00:00Z')
    expect(texts(open_)).toEqual(Array.from({ length: 10 }, (_, i) => String(149 - i)))
    expect(open_.data.Explore).toEqual([])
    expect(open_.data.AdditionalEntries).toBe(false)
    // a range holding no entry
    const none = await ask(REQ.TS_RANGE, 0, 100, new Date(t0 - 10_000).toISOString(), new Date(t0).toISOString())
    expect(none.data.Entries).toEqual([])
    expect(none.data.AdditionalEntries).toBe(false)
    // a time that is not one: an error answer, the socket stays usable
    const bad = await ask(REQ.TS_RANGE, 5, 10, 'yesterday', zoom[1])
    expect(bad.data.ID).toBe(RESP_ERROR)
    expect(bad.data.Error).toContain('StartTS')
    const whole = await ask(REQ.TS_RANGE, 0, 200, ...(range.map((d) => d.toISOString()) as [string, string]))
    expect(whole.data.Entries).toHaveLength(150)
    expect(whole.data.AdditionalEntries).toBe(false)
    c.ws.close()
  })

  test('a zoomed time range over an imported search, whose results may be in any order, scans them for the range', async () => {
    const { server, base } = await listening()
    const t0 = Date.parse('2026-01-01T00:00:00Z')
    // records 0..99 at t0 + i s, written in a shuffled order; every other one with its TS not first
    const order = Array.from({ length: 100 }, (_, i) => (i * 37) % 100)
    const records = order.map((i) =>
      i % 2 === 0
        ? { TS: new Date(t0 + i * 1000).toISOString(), Tag: 'web', SRC: '10.0.0.1', Data: Buffer.from(`entry ${i}`).toString('base64') }
        : { Data: Buffer.from(`entry ${i}`).toString('base64'), SRC: '10.0.0.1', Tag: 'web', TS: new Date(t0 + i * 1000).toISOString() },
    )
    const description = { Format: 'quarry-search-archive', Version: 1, UserQuery: 'tag=web', EffectiveQuery: 'tag=web', StartRange: ZERO_TIME, EndRange: ZERO_TIME, Started: ZERO_TIME, Finished: ZERO_TIME }
    const archive = new Uint8Array(await new Response(writeSearchArchive(description, records)).arrayBuffer())
    const form = new FormData()
    form.append('file', new Blob([archive]), 'search.tar.gz')
    const body = new Response(form)
    const type = body.headers.get('content-type')!
    const imported = await server.call('POST', '/api/searchctrl/import', { jwt: server.adminJwt, body: new Uint8Array(await body.arrayBuffer()), headers: { 'content-type': type } })
    expect(imported.status).toBe(200)
    const c = await open(`${base}/api/ws/search`, { protocol: server.adminJwt })
    c.send({ type: 'attach', data: { ID: imported.body.ID } })
    const subproto = (await c.next((m) => m.type === 'attach')).data.Subproto as string
    const zoom = { StartTS: new Date(t0 + 10_000).toISOString(), EndTS: new Date(t0 + 30_000).toISOString() } // entries 10..29
    const ask = async (first: number, last: number) => {
      c.send({ type: subproto, data: { ID: REQ.TS_RANGE, Addendum: { filterID: `f${first}` }, EntryRange: { First: first, Last: last, ...zoom } } })
      return c.next((m) => m.type === subproto && m.data.Addendum?.filterID === `f${first}`)
    }
    const numbers = (m: any) => m.data.Entries.map((e: any) => Number(Buffer.from(e.Data, 'base64').toString().split(' ')[1]))
    const page = await ask(0, 15)
    expect(numbers(page)).toHaveLength(15)
    expect(page.data.AdditionalEntries).toBe(true)
    const rest = await ask(15, 100)
    expect(rest.data.AdditionalEntries).toBe(false)
    const all = [...numbers(page), ...numbers(rest)]
    expect(all.toSorted((a: number, b: number) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => 10 + i))
    // in the reverse of the stored order (a search's own results are stored oldest first), counted within the range
    expect(all).toEqual(order.filter((i) => i >= 10 && i < 30).reverse())
    expect(rest.data.EntryRange).toEqual({ First: 15, Last: 20, ...zoom })
    c.ws.close()
  })

  test('a count query answers table entries; a bad query answers Error with its RawQuery', async () => {
    const { server, base } = await listening()
    await ingest(server, 'web', 7)
    const now = server.clock.now()
    const range: [Date, Date] = [new Date(now - 3_600_000), new Date(now + 1000)]
    const c = await open(`${base}/api/ws/search`, { protocol: server.adminJwt })
    const { init, subproto } = await initiate(c, 'tag=web | count', range)
    expect(init.data.RenderModule).toBe('table')
    await finished(server, init.data.SearchID)
    c.send({ type: subproto, data: { ID: REQ.TS_RANGE, Addendum: {}, EntryRange: { First: 0, Last: 100, StartTS: range[0].toISOString(), EndTS: range[1].toISOString() } } })
    const table = await c.next((m) => m.type === subproto && m.data.ID === REQ.TS_RANGE)
    expect(table.data.Entries.Columns).toEqual(['count'])
    expect(table.data.Entries.Rows).toHaveLength(1)
    expect(table.data.Entries.Rows[0].Row).toEqual(['7'])
    expect(isString(table.data.Entries.Rows[0].TS)).toBe(true)

    const bad = await initiate(c, 'tag=web | nosuchmodule', range)
    expect(isString(bad.init.data.Error)).toBe(true)
    expect(bad.init.data.RawQuery).toBe('tag=web | nosuchmodule')
    const list = await server.call('GET', '/api/searchctrl', { jwt: server.adminJwt })
    expect(list.body).toHaveLength(1)
    c.ws.close()
  })

  test('validateOneQuery: a good and a bad query, answered by Sequence with the fields the client picks', async () => {
    const { server, base } = await listening()
    await ingest(server, 'web', 1)
    const c = await open(`${base}/api/ws/search`, { protocol: server.adminJwt })
    c.send({ Subs: ['PONG', 'parse', 'search', 'attach'] })
    expect(await c.next((m) => m.Resp !== undefined)).toEqual({ Resp: 'ACK' })
    // the client's keep-alive
    c.send({ type: 'PONG', data: {} })
    c.send({ type: 'parse', data: { SearchString: 'tag=web   grep  "a b"', Sequence: 1 } })
    c.send({ type: 'parse', data: { SearchString: 'tag=web | limit x', Sequence: 2 } })
    const good = await c.next((m) => m.type === 'parse' && m.data.Sequence === 1)
    expect(good.data.GoodQuery).toBe(true)
    expect(good.data.ParsedQuery).toBe('tag=web grep "a b"')
    expect(good.data.RawQuery).toBe('tag=web   grep  "a b"')
    expect(good.data.RenderModule).toBe('text')
    expect(good.data.Tags).toEqual(['web'])
    expect(good.data.ModuleHints.map((h: { Name: string }) => h.Name)).toEqual(['grep', 'text'])
    expect(good.data.ModuleIndex).toBe(0)
    const bad = await c.next((m) => m.type === 'parse' && m.data.Sequence === 2)
    expect(bad.data.GoodQuery).toBe(false)
    expect(isString(bad.data.ParseError)).toBe(true)
    expect(bad.data.ParsedQuery).toBe('tag=web | limit x')
    expect(bad.data.ModuleIndex).toBe(0)
    // no answer to the PONG
    expect(c.received.filter((m) => m.type === 'PONG')).toEqual([])
    c.ws.close()
  })

  test('modifyOneQuery: without filters the normalised query; filters become inline filters of their module', async () => {
    const { server, base } = await listening()
    await ingest(server, 'web', 1)
    const c = await open(`${base}/api/ws/search`, { protocol: server.adminJwt })
    c.send({ Subs: ['PONG', 'parse', 'search', 'attach'] })
    let seq = 0
    const parse = async (SearchString: string, Filters?: unknown) => {
      c.send({ type: 'parse', data: { SearchString, Sequence: ++seq, ...(Filters === undefined ? {} : { Filters }) } })
      const at = seq
      return (await c.next((m) => m.type === 'parse' && m.data.Sequence === at)).data
    }
    expect(await parse('tag=web|count')).toMatchObject({ GoodQuery: true, ParsedQuery: 'tag=web count', RenderModule: 'table' })
    // the module is in the query: the filter joins its arguments
    expect(await parse('tag=web regex "n=(?P<n>[0-9]+)" | count', [{ Tag: 'web', Module: 'regex', Path: 'n', Op: '>=', Value: '5' }])).toMatchObject({
      GoodQuery: true,
      ParsedQuery: 'tag=web regex n=(?P<n>[0-9]+) n >= 5 | count',
    })
    // it is not: the module comes first, with the filter's Args
    expect(await parse('tag=web count', [{ Module: 'regex', Args: '"n=(?P<n>[0-9]+)"', Path: 'n', Op: '~', Value: 'a b' }])).toMatchObject({
      GoodQuery: true,
      ParsedQuery: 'tag=web regex n=(?P<n>[0-9]+) n ~ "a b" | count',
    })
    // a filter its module cannot take: the platform's wording, the module's index
    expect(await parse('tag=web grep x | regex "(?P<n>.)"', [{ Module: 'regex', Path: 'm', Op: '==', Value: '1' }])).toMatchObject({
      GoodQuery: false,
      ModuleIndex: 1,
      ParseError: expect.stringMatching(/^regex \(module idx 1\) error: /),
    })
    expect(await parse('tag=web', [{ Module: 'nosuch', Path: 'a', Op: '==', Value: '1' }])).toMatchObject({
      GoodQuery: false,
      ParseError: expect.stringMatching(/^nosuch \(module idx 0\) error: unknown module/),
    })
    expect(await parse('tag=web', [{ Module: 'regex', Path: 'a', Op: '=>', Value: '1' }])).toMatchObject({ GoodQuery: false, ParseError: expect.stringContaining('unknown filter operator') })
    expect(await parse('tag=web', [{ Module: 'regex' }])).toMatchObject({ GoodQuery: false, ParseError: 'each filter needs Module and Path (strings)' })
    expect(await parse('tag=web', 'x')).toMatchObject({ GoodQuery: false, ParseError: 'Filters must be a list' })
    c.ws.close()
  })

  test('POST /api/parse (the Go client\'s ParseSearch) answers as the socket does', async () => {
    const server = await createTestServer()
    servers.push(server)
    await ingest(server, 'web', 1)
    const parse = async (json: unknown) => (await server.call('POST', '/api/parse', { jwt: server.adminJwt, json })).body
    expect(await parse({ SearchString: 'tag=web  grep a|count', Sequence: 4919 })).toMatchObject({
      Sequence: 4919,
      GoodQuery: true,
      RawQuery: 'tag=web  grep a|count',
      ParsedQuery: 'tag=web grep a | count',
      RenderModule: 'table',
      CollapsingIndex: 1,
    })
    expect(await parse({ SearchString: 'tag=nope', Sequence: 1 })).toMatchObject({ GoodQuery: false, ParseError: 'Could not match tag spec nope against any known tags', ModuleIndex: 0 })
    expect(await parse({ SearchString: 'tag=web', Filters: [{ Module: 'regex', Args: '"(?P<n>.)"', Path: 'n', Op: '==', Value: 'x' }] })).toMatchObject({
      GoodQuery: true,
      ParsedQuery: 'tag=web regex (?P<n>.) n == x',
    })
    expectError(await server.call('POST', '/api/parse', { jwt: server.adminJwt, json: { Sequence: 1 } }), 400)
    expectError(await server.call('POST', '/api/parse', { json: { SearchString: 'tag=web' } }), 401)
  })

  test('validateOneQuery: an unknown tag is refused in the words the clients check; hints name each module and the renderer', async () => {
    const { server, base } = await listening()
    await ingest(server, 'web', 1)
    const c = await open(`${base}/api/ws/search`, { protocol: server.adminJwt })
    c.send({ Subs: ['PONG', 'parse', 'search', 'attach'] })
    c.send({ type: 'parse', data: { SearchString: 'tag=non-existant', Sequence: 1 } })
    expect((await c.next((m) => m.type === 'parse' && m.data.Sequence === 1)).data).toMatchObject({
      GoodQuery: false,
      ParseError: 'Could not match tag spec non-existant against any known tags',
      ModuleIndex: 0,
    })
    c.send({ type: 'parse', data: { SearchString: 'tag=web,other grep x', Sequence: 2 } })
    expect((await c.next((m) => m.type === 'parse' && m.data.Sequence === 2)).data.ParseError).toBe('Could not match tag spec other against any known tags')
    c.send({ type: 'parse', data: { SearchString: 'tag=* regex "(?P<a>.)(?P<b>.)" | count', Sequence: 3 } })
    const good = (await c.next((m) => m.type === 'parse' && m.data.Sequence === 3)).data
    expect(good).toMatchObject({ GoodQuery: true, RenderModule: 'table', Tags: ['*'], ModuleIndex: 0 })
    expect(good.ModuleHints[0]).toEqual({ Name: 'regex', ProducedEVs: ['a', 'b'], ConsumedEVs: [], ResourcesNeeded: [], Condensing: false })
    expect(good.ModuleHints.map((h: { Name: string }) => h.Name)).toEqual(['regex', 'count', 'table'])
    c.ws.close()
  })

  test('stats per module and per window (overview, zoom, summary) match the entries; text entries carry their values', async () => {
    const { server, base } = await listening()
    const now = server.clock.now()
    const t0 = Math.floor(now / 3_600_000) * 3_600_000 - 3_600_000 // an hour ago, on the hour
    // one entry per minute for 60 minutes: "entry <i>", every third one holding a "7"... computed below
    const data = Array.from({ length: 60 }, (_, i) => `entry ${i} ${i % 3 === 0 ? 'keep' : 'drop'}`)
    const res = await server.call('POST', '/api/ingest/json', {
      jwt: server.adminJwt,
      json: data.map((d, i) => ({ TS: new Date(t0 + i * 60_000).toISOString(), Tag: 'web', SRC: '10.0.0.1', Data: Buffer.from(d).toString('base64') })),
    })
    expect(res.status).toBe(200)
    const range: [Date, Date] = [new Date(t0), new Date(t0 + 3_600_000)]
    const c = await open(`${base}/api/ws/search`, { protocol: server.adminJwt })
    const query = 'tag=web regex "entry (?P<n>[0-9]+) (?P<w>[a-z]+)" | grep keep'
    const { init, subproto } = await initiate(c, query, range)
    expect(init.data.ModuleHints.map((h: any) => [h.Name, h.ProducedEVs])).toEqual([['regex', ['n', 'w']], ['grep', []], ['text', []]])
    await finished(server, init.data.SearchID)
    const ask = async (ID: number, Stats: Record<string, unknown> = {}) => {
      c.send({ type: subproto, data: { ID, Stats } })
      return (await c.next((m) => m.type === subproto && m.data.ID === ID)).data
    }
    const kept = (from: number, to: number) => data.slice(from, to).filter((d) => d.endsWith('keep')).length
    // the overview: 12 windows of 5 minutes, each row regex then grep
    const overview = (await ask(REQ.STATS_GET, { SetCount: 12 })).Stats
    expect(overview.Set.map((x: any) => [Date.parse(x.TS) - t0, x.Stats.map((r: any) => [r.Name, r.InputCount, r.OutputCount])])).toEqual(
      Array.from({ length: 12 }, (_, w) => [w * 300_000, [['regex', 5, 5], ['grep', 5, kept(w * 5, w * 5 + 5)]]]),
    )
    const bytes = (from: number, to: number) => data.slice(from, to).reduce((n, d) => n + d.length, 0)
    expect(overview.Set[0].Stats[0]).toMatchObject({ Args: expect.stringContaining('entry'), InputBytes: bytes(0, 5), OutputBytes: bytes(0, 5) })
    // the zoom: minutes 10 to 20, SetEnd inclusive, in 5 windows
    const zoom = (await ask(REQ.STATS_GET_RANGE, { SetCount: 5, SetStart: new Date(t0 + 600_000).toISOString(), SetEnd: new Date(t0 + 1_200_000).toISOString() })).Stats
    expect(zoom.Set.map((x: any) => x.Stats[1].InputCount)).toEqual([2, 2, 2, 2, 3])
    const summary = (await ask(REQ.STATS_GET_SUMMARY)).Stats
    expect(summary.Set[0].Stats.map((r: any) => [r.Name, r.InputCount, r.OutputCount])).toEqual([['regex', 60, 60], ['grep', 60, kept(0, 60)]])
    expect((await ask(REQ.STATS_GET_OVERVIEW, { SetCount: 2 })).Stats.OverviewSet.map((o: any) => o.Count)).toEqual([kept(0, 30), kept(30, 60)])
    // details: zoom works for text, at the stats bucket width (1 s: 60 entries fit in the counters to the second)
    const details = await ask(REQ.SEARCH_DETAILS)
    expect(details.SearchInfo).toMatchObject({ TimeZoomDisabled: false, MinZoomWindow: 1 })
    // entries, newest first: Tag the number, the values of the stored record
    c.send({ type: subproto, data: { ID: REQ.GET_ENTRIES, EntryRange: { First: 0, Last: 2 } } })
    const entries = (await c.next((m) => m.type === subproto && m.data.ID === REQ.GET_ENTRIES)).data.Entries
    expect(entries.map((e: any) => e.Enumerated)).toEqual([
      [{ Name: 'n', ValueStr: '57' }, { Name: 'w', ValueStr: 'keep' }],
      [{ Name: 'n', ValueStr: '54' }, { Name: 'w', ValueStr: 'keep' }],
    ])
    expect(isNumber(entries[0].Tag)).toBe(true)
    c.ws.close()
  })

  test('attachToOneSearch from a second socket; Close; closing a socket detaches it; the grace period then removes the search', async () => {
    const { server, base } = await listening()
    await ingest(server, 'web', 5)
    const user = await server.createUser()
    const now = server.clock.now()
    const range: [Date, Date] = [new Date(now - 3_600_000), new Date(now + 1000)]
    const a = await open(`${base}/api/ws/search`, { protocol: user.jwt })
    const { init } = await initiate(a, 'tag=web', range)
    const id = init.data.SearchID as string
    await finished(server, id)

    const b = await open(`${base}/api/ws/search`, { protocol: user.jwt })
    b.send({ Subs: ['PONG', 'parse', 'search', 'attach'] })
    b.send({ type: 'attach', data: { ID: id } })
    const attached = await b.next((m) => m.type === 'attach')
    expect(isString(attached.data.Subproto)).toBe(true)
    expect(attached.data.RendererMod).toBe('text')
    expect(isString(attached.data.RendererCmd)).toBe(true)
    expect(attached.data.Info).toMatchObject({ ID: id, UID: user.uid, UserQuery: 'tag=web', EffectiveQuery: 'tag=web', ItemCount: 5, NoHistory: false })
    expect(attached.data.Info.Import).toEqual({ Imported: false, Time: '0001-01-01T00:00:00Z', BatchName: '', BatchInfo: '' })
    const clients = async () => (await server.call('GET', `/api/searchctrl`, { jwt: user.jwt })).body.find((s: any) => s.ID === id)
    expect((await clients()).AttachedClients).toBe(2)

    // Close on b's subprotocol: answered with ID 1, b leaves
    b.send({ type: attached.data.Subproto, data: { ID: REQ.CLOSE } })
    expect((await b.next((m) => m.type === attached.data.Subproto)).data.ID).toBe(REQ.CLOSE)
    expect((await clients()).AttachedClients).toBe(1)
    // an unknown id cannot be attached
    b.send({ type: 'attach', data: { ID: '123' } })
    expect(isString((await b.next((m) => m.type === 'attach')).data.Error)).toBe(true)

    // a closes its socket: detached, kept for the grace period, then removed
    a.ws.close()
    await a.closed
    for (let i = 0; i < 100 && (await clients())?.AttachedClients !== 0; i++) await Bun.sleep(20)
    expect(await clients()).toMatchObject({ AttachedClients: 0, State: 'ACTIVE' })
    server.clock.advance(server.config.searchGraceMs)
    expect(await clients()).toBeUndefined()
    b.ws.close()
  })

  test('a backgrounded search outlives its socket', async () => {
    const { server, base } = await listening()
    const now = server.clock.now()
    const c = await open(`${base}/api/ws/search`, { protocol: server.adminJwt })
    const { init } = await initiate(c, 'tag=web', [new Date(now - 1000), new Date(now + 1000)], { Background: true })
    c.ws.close()
    await c.closed
    server.clock.advance(server.config.searchGraceMs * 2)
    const list = await server.call('GET', '/api/searchctrl', { jwt: server.adminJwt })
    expect(list.body.find((s: any) => s.ID === init.data.SearchID)).toMatchObject({ AttachedClients: 0, State: 'DORMANT/BACKGROUNDED' })
  })

  test('bad messages get an error on the socket, which stays usable; an oversized message closes only that socket', async () => {
    const { server, base } = await listening()
    await ingest(server, 'web', 3)
    const now = server.clock.now()
    const range: [Date, Date] = [new Date(now - 3_600_000), new Date(now + 1000)]
    const c = await open(`${base}/api/ws/search`, { protocol: server.adminJwt })
    const errors = () => c.next((m) => m.Error !== undefined || m.data?.Error !== undefined)
    c.send('not json at all')
    expect(isString((await errors()).Error)).toBe(true)
    c.send('[1,2,3]')
    expect(isString((await errors()).Error)).toBe(true)
    c.ws.send(new Uint8Array([0xff, 0x00, 0x7b]))
    expect(isString((await errors()).Error)).toBe(true)
    c.send({ type: 42 })
    expect(isString((await errors()).Error)).toBe(true)
    c.send({ type: 'nosuchtype', data: {} })
    expect((await errors()).type).toBe('nosuchtype')
    c.send({ type: 'parse', data: 'x' })
    expect((await errors()).type).toBe('parse')
    c.send({ type: 'search', data: { SearchString: 'tag=web', SearchStart: 'yesterday' } })
    expect((await errors()).data.Error).toContain('SearchStart')
    c.send({ type: 'search', data: { SearchString: 'tag=web', Metadata: JSON.parse('['.repeat(200) + ']'.repeat(200)) } })
    expect((await errors()).data.Error).toContain('Metadata')
    c.send({ type: 'attach', data: { ID: 'abc' } })
    expect((await errors()).type).toBe('attach')
    const { subproto } = await initiate(c, 'tag=web', range)
    c.send({ type: subproto, data: { ID: 0x1234 } })
    const unknown = await c.next((m) => m.type === subproto)
    expect(unknown.data.ID).toBe(RESP_ERROR)
    expect(isString(unknown.data.Error)).toBe(true)
    c.send({ type: subproto, data: { ID: REQ.TS_RANGE, EntryRange: { First: -5, Last: 'x' } } })
    expect((await c.next((m) => m.type === subproto)).data.Entries.length).toBeLessThanOrEqual(1)
    // still usable
    c.send({ type: 'parse', data: { SearchString: 'tag=*', Sequence: 9 } })
    expect((await c.next((m) => m.type === 'parse' && m.data.Sequence === 9)).data.GoodQuery).toBe(true)

    // one message over the limit: that socket is closed (1009), the server and other sockets go on
    const other = await open(`${base}/api/ws/search`, { protocol: server.adminJwt })
    c.send({ type: 'parse', data: { SearchString: 'x'.repeat(WS_MAX_MESSAGE), Sequence: 10 } })
    expect((await c.closed).code).toBe(1009)
    other.send({ type: 'parse', data: { SearchString: 'tag=*', Sequence: 11 } })
    expect((await other.next((m) => m.type === 'parse')).data.Sequence).toBe(11)
    other.ws.close()
  })

  test(`one answer holds at most ${MAX_ENTRIES} entries`, async () => {
    const { server, base } = await listening()
    await ingest(server, 'web', MAX_ENTRIES + 10)
    const now = server.clock.now()
    const range: [Date, Date] = [new Date(now - 3_600_000), new Date(now + 1000)]
    const c = await open(`${base}/api/ws/search`, { protocol: server.adminJwt })
    const { init, subproto } = await initiate(c, 'tag=web', range)
    await finished(server, init.data.SearchID)
    c.send({ type: subproto, data: { ID: REQ.GET_ENTRIES, EntryRange: { First: 0, Last: 100_000 } } })
    const answer = await c.next((m) => m.type === subproto)
    expect(answer.data.Entries).toHaveLength(MAX_ENTRIES)
    expect(answer.data.AdditionalEntries).toBe(true)
    c.ws.close()
  })

  /** A finished, backgrounded search of 200 entries of 64 KiB (about 17 MB of answers when read whole). */
  async function bigSearch(server: TestServer) {
    await ingest(server, 'big', 200, 64 * 1024)
    const now = server.clock.now()
    const launched = await server.call('POST', '/api/searchctrl/launch', {
      jwt: server.adminJwt,
      json: { SearchString: 'tag=big', SearchStart: new Date(now - 3_600_000).toISOString(), SearchEnd: new Date(now + 1000).toISOString(), Background: true },
    })
    expect(launched.status).toBe(200)
    await finished(server, launched.body.SearchID)
    return launched.body.SearchID as string
  }

  test('back-pressure: answers stop while more than WS_HIGH_WATER bytes wait unread, with a bounded buffer', async () => {
    const { server, port } = await listening()
    const id = await bigSearch(server)
    const { sock, send } = await nonReadingClient(port, server.adminJwt)
    send({ type: 'attach', data: { ID: id } })
    // 50 requests of up to MAX_ANSWER_BYTES each: about 200 MB if all were answered into the send buffer.
    for (let i = 0; i < 50; i++) send({ type: 'search1', data: { ID: REQ.GET_ENTRIES, EntryRange: { First: 0, Last: 100 } } })
    const paused = () => server.logs.filter((l) => l.includes('websocket answers paused'))
    for (let i = 0; i < 200 && paused().length === 0; i++) await Bun.sleep(50)
    expect(paused()).toHaveLength(1)
    await Bun.sleep(1000)
    // still paused: nothing more was built, and what waits is one answer past the mark at most
    expect(paused()).toHaveLength(1)
    expect(server.logs.some((l) => l.includes('websocket answers resumed'))).toBe(false)
    const { buffered, pending } = JSON.parse(paused()[0]!)
    expect(buffered).toBeLessThanOrEqual(WS_HIGH_WATER + MAX_ANSWER_BYTES + 64 * 1024)
    expect(pending).toBeGreaterThan(0)
    // the server answers others meanwhile
    expect((await server.call('GET', '/api/stats/ping', { jwt: server.adminJwt })).status).toBe(200)
    sock.destroy()
  })

  test(`a client that sends requests and never reads is ended once WS_MAX_PENDING wait`, async () => {
    const { server, port } = await listening()
    const id = await bigSearch(server)
    const { sock, send } = await nonReadingClient(port, server.adminJwt)
    send({ type: 'attach', data: { ID: id } })
    for (let i = 0; i < WS_MAX_PENDING * 2; i++) send({ type: 'search1', data: { ID: REQ.GET_ENTRIES, EntryRange: { First: 0, Last: 100 } } })
    // A paused socket may not see its own end, so the server's log tells.
    const terminated = () => server.logs.some((l) => l.includes('the client sends requests without reading the answers'))
    for (let i = 0; i < 400 && !terminated(); i++) await Bun.sleep(50)
    expect(terminated()).toBe(true)
    sock.destroy()
    expect((await server.call('GET', '/api/stats/ping', { jwt: server.adminJwt })).status).toBe(200)
  })
})

describe('floods and the limits of sockets', () => {
  /** Messages a client may send that are no request at all, and stats subscriptions to nothing (ACK and an error each). */
  const JUNK = ['1', 'null', '"x"', '[1]', 'true', '{"Subs":["nope"]}']

  test('sockets of one user that flood junk and never read are cut; the server stays small and answers others meanwhile', async () => {
    // The server in a process of its own: its memory is its own, and its answers to others are timed from outside.
    const proc = spawnServer({ QUARRY_DATA_DIR: join(tempDir(), 'data'), QUARRY_ADMIN_PASSWORD: ADMIN_PASSWORD })
    try {
      const { url, lines } = await spawnedListening(proc)
      const port = Number(new URL(url).port)
      const post = async (path: string, json: unknown, jwt?: string) =>
        fetch(`${url}${path}`, { method: 'POST', headers: jwt ? { authorization: `Bearer ${jwt}` } : {}, body: JSON.stringify(json) })
      const adminJwt = ((await (await post('/api/login', { User: 'admin', Pass: ADMIN_PASSWORD })).json()) as { JWT: string }).JWT
      const account = { User: 'flooder', Pass: 'flooder-password', Name: 'F', Email: 'f@example.com', Admin: false }
      expect((await post('/api/users', account, adminJwt)).status).toBe(200)
      const jwt = ((await (await post('/api/login', { User: account.User, Pass: account.Pass })).json()) as { JWT: string }).JWT
      // 8 sockets (search and stats), 1,200,000 messages each that are no request (and, to the stats sockets,
      // subscriptions to nothing): about 100 MB of error answers per socket if each were sent
      const floodOf = (junk: string[]) => {
        const frames = junk.map(frame)
        return Buffer.concat(Array.from({ length: 1_200_000 }, (_, k) => frames[k % frames.length]!))
      }
      const floods = { '/api/ws/search': floodOf(JUNK.filter((m) => !m.includes('Subs'))), '/api/ws/stats': floodOf(JUNK) }
      const sockets: { sock: import('node:net').Socket; flood: Buffer }[] = []
      for (let i = 0; i < 8; i++) {
        const path = i % 2 ? '/api/ws/stats' : '/api/ws/search'
        sockets.push({ sock: (await nonReadingClient(port, jwt, path)).sock, flood: floods[path] })
      }
      const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${proc.pid}/status`, 'utf8'))![1]) * 1024
      const before = rss()
      let peak = before
      const sampler = setInterval(() => (peak = Math.max(peak, rss())), 20)
      for (const { sock, flood } of sockets) sock.write(flood)
      // meanwhile the admin's requests are answered
      const cut = () => lines.filter((l) => l.includes('websocket closed: ')).length
      let slowest = 0
      const deadline = Date.now() + 30_000
      while (cut() < sockets.length && Date.now() < deadline) {
        const started = Date.now()
        expect((await fetch(`${url}/api/stats/ping`, { headers: { authorization: `Bearer ${adminJwt}` } })).status).toBe(200)
        slowest = Math.max(slowest, Date.now() - started)
        await Bun.sleep(50)
      }
      await Bun.sleep(200)
      clearInterval(sampler)
      for (const { sock } of sockets) sock.destroy()
      console.log(`junk flood: ${cut()} of ${sockets.length} sockets cut, server memory +${((peak - before) / 2 ** 20).toFixed(0)} MiB at most, another request waited ${slowest} ms at most`)
      expect(cut()).toBe(sockets.length)
      // each socket held about WS_HIGH_WATER of answers before it was cut; the rest is the garbage of the messages
      // read before the cut (one read of the socket each)
      expect((peak - before) / 2 ** 20).toBeLessThan(192)
      expect(slowest).toBeLessThan(10_000)
      // the cut sockets no longer count: the user opens a socket and is answered
      const c = await open(`ws://127.0.0.1:${port}/api/ws/search`, { protocol: jwt })
      c.send({ type: 'parse', data: { SearchString: 'tag=*', Sequence: 1 } })
      expect((await c.next((m) => m.type === 'parse')).data.GoodQuery).toBe(true)
      c.ws.close()
    } finally {
      proc.kill()
      await proc.exited
    }
  }, 60_000)

  test('a socket that reads its junk answers is answered every one, in order, on both sockets', async () => {
    const { server, base } = await listening()
    for (const path of ['/api/ws/search', '/api/ws/stats']) {
      const c = await open(`${base}${path}`, { protocol: server.adminJwt })
      for (const m of JUNK) c.send(m)
      const answers = path === '/api/ws/stats' ? JUNK.length + 1 : JUNK.length
      for (let i = 0; i < 100 && c.received.length < answers; i++) await Bun.sleep(20)
      expect(c.received).toHaveLength(answers)
      expect(c.received.slice(0, 5).every((m) => isString(m.Error))).toBe(true)
      expect(c.received[5]).toEqual({ Resp: 'ACK' })
      c.ws.close()
    }
  })

  test('QUARRY_WS_PER_USER: past it an upgrade is refused (429), API tokens of the user included; other users are not affected', async () => {
    const { server, base, port } = await listening({ wsPerUser: 3 })
    const user = await server.createUser()
    const other = await server.createUser()
    const token = (await server.call('POST', '/api/tokens', { jwt: user.jwt, json: { name: 'ws', capabilities: ['Search', 'Stats'] } })).body.token as string
    const held = [
      await open(`${base}/api/ws/search`, { protocol: user.jwt }),
      await open(`${base}/api/ws/stats`, { protocol: user.jwt }),
      await open(`${base}/api/ws/search`, { headers: { 'Service-Token': token } }),
    ]
    for (const [path, headers] of [
      ['/api/ws/search', { authorization: `Bearer ${user.jwt}` }],
      ['/api/ws/stats', { 'sec-websocket-protocol': user.jwt }],
      ['/api/ws/search', { 'Service-Token': token }],
    ] as const) {
      const refused = await upgradeStatus(port, path, headers)
      expect(refused.status).toBe(429)
      expect(refused.body.Error).toContain('QUARRY_WS_PER_USER')
    }
    const others = await open(`${base}/api/ws/search`, { protocol: other.jwt })
    others.ws.close()
    // a closed socket frees its place
    held[0]!.ws.close()
    await held[0]!.closed
    let again: Client | undefined
    for (let i = 0; i < 50 && !again; i++) again = await open(`${base}/api/ws/search`, { protocol: user.jwt }).catch(() => Bun.sleep(20).then(() => undefined))
    expect(again).toBeDefined()
    // upgrades at once: no more than the limit stay open, the others refused or closed with 1013
    const rush = await Promise.allSettled(Array.from({ length: 6 }, () => open(`${base}/api/ws/stats`, { protocol: other.jwt })))
    await Bun.sleep(300)
    const opened = rush.filter((r) => r.status === 'fulfilled').map((r) => (r as PromiseFulfilledResult<Client>).value)
    const stayed = opened.filter((c) => c.ws.readyState === WebSocket.OPEN)
    expect(stayed).toHaveLength(3)
    for (const c of opened.filter((c) => c.ws.readyState !== WebSocket.OPEN)) expect((await c.closed).code).toBe(1013)
    for (const c of [...held, again!, ...opened]) c.ws.close()
  })
})

describe('a socket acts with its caller\'s current rights', () => {
  async function launched(server: TestServer, jwt: string) {
    const now = server.clock.now()
    const res = await server.call('POST', '/api/searchctrl/launch', {
      jwt,
      json: { SearchString: 'tag=web', SearchStart: new Date(now - 3_600_000).toISOString(), SearchEnd: new Date(now + 1000).toISOString(), Background: true },
    })
    expect(res.status).toBe(200)
    return res.body.SearchID as string
  }

  /** Attaches a socket to a search; answers the subprotocol. */
  async function attached(c: Client, id: string) {
    c.send({ type: 'attach', data: { ID: id } })
    const answer = await c.next((m) => m.type === 'attach')
    expect(answer.data.Error).toBeUndefined()
    return answer.data.Subproto as string
  }

  /** What the socket gets now for the search: its details, and a new attach. */
  async function readsNow(c: Client, subproto: string, id: string) {
    c.send({ type: subproto, data: { ID: REQ.SEARCH_DETAILS } })
    const details = await c.next((m) => m.type === subproto)
    c.send({ type: 'attach', data: { ID: id } })
    const attach = await c.next((m) => m.type === 'attach')
    return { details: details.data, attach: attach.data }
  }

  test('an admin demoted while the socket is open no longer reads another user\'s private search (as REST: 404)', async () => {
    const { server, base } = await listening()
    await ingest(server, 'web', 3)
    const admin = await server.createUser({ Admin: true })
    const owner = await server.createUser()
    const id = await launched(server, owner.jwt)
    const c = await open(`${base}/api/ws/search`, { protocol: admin.jwt })
    const subproto = await attached(c, id)
    expect((await readsNow(c, subproto, id)).details.SearchInfo.ID).toBe(id)
    const clients = async () => (await server.call('GET', '/api/searchctrl', { jwt: owner.jwt })).body.find((s: any) => s.ID === id).AttachedClients as number
    const attachedBefore = await clients()
    expect((await server.call('DELETE', `/api/users/${admin.uid}/admin`, { jwt: server.adminJwt })).status).toBe(200)
    expect((await server.call('GET', `/api/searchctrl/${id}`, { jwt: admin.jwt })).status).toBe(404)
    const now = await readsNow(c, subproto, id)
    expect(now.details.ID).toBe(RESP_ERROR)
    expect(now.details.SearchInfo).toBeUndefined()
    expect(now.attach.Error).toBeDefined()
    expect(now.attach.Info).toBeUndefined()
    // the socket no longer holds the search it may not see
    expect(await clients()).toBe(attachedBefore - 1)
    c.ws.close()
  })

  test('a member removed from the group a search is shared with no longer reads it over the socket', async () => {
    const { server, base } = await listening()
    await ingest(server, 'web', 3)
    const owner = await server.createUser()
    const member = await server.createUser()
    const gid = await server.createGroup('team', [owner.uid, member.uid])
    expect((await server.call('PUT', `/api/users/${owner.uid}/searchgroup`, { jwt: owner.jwt, json: { GID: gid } })).status).toBe(200)
    const id = await launched(server, owner.jwt)
    const c = await open(`${base}/api/ws/search`, { protocol: member.jwt })
    const subproto = await attached(c, id)
    expect((await readsNow(c, subproto, id)).details.SearchInfo.ID).toBe(id)
    expect((await server.call('DELETE', `/api/users/${member.uid}/group/${gid}`, { jwt: server.adminJwt })).status).toBe(200)
    expect((await server.call('GET', `/api/searchctrl/${id}`, { jwt: member.jwt })).status).toBe(404)
    const now = await readsNow(c, subproto, id)
    expect(now.details.ID).toBe(RESP_ERROR)
    expect(now.attach.Error).toBeDefined()
    c.ws.close()
  })

  test('a token that loses the Search capability ends its search socket at the next request (1008)', async () => {
    const { server, base } = await listening()
    const user = await server.createUser()
    const created = await server.call('POST', '/api/tokens', { jwt: user.jwt, json: { name: 'ws', capabilities: ['Search'] } })
    const c = await open(`${base}/api/ws/search`, { headers: { 'Service-Token': created.body.token } })
    c.send({ type: 'parse', data: { SearchString: 'tag=*', Sequence: 1 } })
    expect((await c.next((m) => m.type === 'parse')).data.GoodQuery).toBe(true)
    const changed = await server.call('PUT', `/api/tokens/${created.body.id}`, { jwt: user.jwt, json: { name: 'ws', capabilities: ['Stats'] } })
    expect(changed.status).toBe(200)
    c.send({ type: 'parse', data: { SearchString: 'tag=*', Sequence: 2 } })
    const end = await c.closed
    expect(end.code).toBe(1008)
    expect(end.reason).toContain('Search')
    expect(c.received.filter((m) => m.type === 'parse')).toHaveLength(1)
  })
})

describe('a stats socket checks its session against the store at its tick', () => {
  /** The socket's end, or 'open' if it has not ended within `ms`. */
  const endWithin = (c: Client, ms: number) => Promise.race([c.closed.then((e) => e.code), Bun.sleep(ms).then(() => 'open' as const)])

  test('sessions deleted in the store behind the server (as `quarry admin reset-password` does on SQLite) end it (1008)', async () => {
    const { server, base } = await listening()
    const user = await server.createUser()
    const c = await open(`${base}/api/ws/stats`, { protocol: user.jwt })
    c.send({ Subs: ['ping'] })
    await c.next((m) => m.type === 'ping')
    // no event tells the server: only the store changed
    expect(await server.store.sessions.deleteForUser(user.uid)).toHaveLength(1)
    expect((await server.call('GET', '/api/info/whoami', { jwt: user.jwt })).status).toBe(401)
    expect(await endWithin(c, 3 * CREDENTIAL_CHECK_MS + 2000)).toBe(1008)
  })

  test('a session gone idle ends its stats socket (1008); a live one keeps streaming', async () => {
    const { server, base } = await listening({ sessionIdleMs: 60_000 })
    const idle = await server.createUser()
    const active = await server.createUser()
    const c = await open(`${base}/api/ws/stats`, { protocol: idle.jwt })
    c.send({ Subs: ['ping'] })
    await c.next((m) => m.type === 'ping')
    // 61 s: the session that only its stats socket holds is idle; the other one was used 31 s ago
    server.clock.advance(30_000)
    expect((await server.call('GET', '/api/info/whoami', { jwt: active.jwt })).status).toBe(200)
    server.clock.advance(31_000)
    const live = await open(`${base}/api/ws/stats`, { protocol: active.jwt })
    live.send({ Subs: ['ping'] })
    expect(await endWithin(c, 3 * CREDENTIAL_CHECK_MS + 2000)).toBe(1008)
    expect((await server.call('GET', '/api/info/whoami', { jwt: idle.jwt })).status).toBe(401)
    await live.next((m) => m.type === 'ping')
    await live.next((m) => m.type === 'ping', 2 * CREDENTIAL_CHECK_MS + 2000)
    expect(live.ws.readyState).toBe(WebSocket.OPEN)
    live.ws.close()
  })
})
