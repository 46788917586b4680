// The WebSocket endpoints through a real listening server and real WebSocket clients (Bun's). Each client test
// sends exactly what the TypeScript client's function sends (subscribeToOneSearch with initiateSearch,
// validateOneQuery, modifyOneQuery, attachToOneSearch, subscribeToManySystemInformations) and checks the answers
// against the fields that client reads, with their types (null vs [] included).
import { afterAll, describe, expect, test } from 'bun:test'
import { connect as tcpConnect } from 'node:net'
import { type TestServer, createTestServer } from '../../test/helpers'
import { MAX_ANSWER_BYTES, MAX_ENTRIES, WS_HIGH_WATER, WS_MAX_MESSAGE, WS_MAX_PENDING } from '.'
import { REQ, RESP_ERROR } from './protocol'

const servers: TestServer[] = []
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

interface Client {
  ws: WebSocket
  received: any[]
  send(message: unknown): void
  /** The next message (from now or already received and not yet taken) that `match` accepts. */
  next(match: (m: any) => boolean, timeoutMs?: number): Promise<any>
  closed: Promise<{ code: number; reason: string }>
}

/** Opens a socket as the TypeScript client does (`new WebSocket(url, jwt)`), or with headers. */
async function open(url: string, auth: { protocol?: string; headers?: Record<string, string> }): Promise<Client> {
  const ws = auth.headers
    ? new WebSocket(url, { headers: auth.headers, protocols: auth.protocol ? [auth.protocol] : [] } as unknown as string[])
    : new WebSocket(url, auth.protocol)
  const received: any[] = []
  const taken = new Set<number>()
  const waiters: (() => void)[] = []
  ws.onmessage = (e) => {
    received.push(JSON.parse(String(e.data)))
    for (const w of waiters.splice(0)) w()
  }
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    ws.addEventListener('close', (e) => {
      resolve({ code: e.code, reason: e.reason })
      for (const w of waiters.splice(0)) w()
    })
  })
  await new Promise<void>((resolve, reject) => {
    ws.onopen = () => resolve()
    ws.onerror = (e) => reject(new Error(`socket failed: ${(e as ErrorEvent).message}`))
  })
  return {
    ws,
    received,
    closed,
    send: (m) => ws.send(typeof m === 'string' ? m : JSON.stringify(m)),
    async next(match, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs
      for (;;) {
        const i = received.findIndex((m, k) => !taken.has(k) && match(m))
        if (i >= 0) {
          taken.add(i)
          return received[i]
        }
        if (Date.now() > deadline) throw new Error(`no matching message; received: ${JSON.stringify(received).slice(0, 2000)}`)
        await Promise.race([new Promise<void>((r) => waiters.push(r)), Bun.sleep(50)])
      }
    },
  }
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
    byHeader.send({ type: 'parse', data: { SearchString: 'tag=a', Sequence: 1 } })
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
    byToken.send({ type: 'parse', data: { SearchString: 'tag=a', Sequence: 2 } })
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
    c.send({ type: 'parse', data: { SearchString: 'tag=a', Sequence: 5 } })
    expect((await c.next((m) => m.type === 'parse')).data.Sequence).toBe(5)
    const res = await server.call('PUT', '/api/logout', { jwt })
    expect(res.status).toBe(200)
    expect((await c.closed).code).toBe(1008)
    expect((await server.call('GET', '/api/searchctrl?admin=true', { jwt: server.adminJwt })).body.find((s: any) => s.ID === init.data.SearchID)).toBeUndefined()
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
    expect(d.ModuleHints).toEqual([])
    expect(isNumber(d.CollapsingIndex)).toBe(true)
    expect(isBoolean(d.TimeZoomDisabled)).toBe(true)
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
    expect(Buffer.from(entries.data.Entries[0].Data, 'base64').toString()).toStartWith('entry 0 ')
    expect(Buffer.from(entries.data.Entries[99].Data, 'base64').toString()).toStartWith('entry 99 ')

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
    expect(stats.data.Stats.Set.at(-1).Stats.at(-1).OutputCount).toBe(150)

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
    expect(good.data.ModuleHints).toEqual([])
    expect(isNumber(good.data.ModuleIndex)).toBe(true)
    const bad = await c.next((m) => m.type === 'parse' && m.data.Sequence === 2)
    expect(bad.data.GoodQuery).toBe(false)
    expect(isString(bad.data.ParseError)).toBe(true)
    expect(bad.data.ParsedQuery).toBe('tag=web | limit x')
    expect(isNumber(bad.data.ModuleIndex)).toBe(true)
    // no answer to the PONG
    expect(c.received.filter((m) => m.type === 'PONG')).toEqual([])
    c.ws.close()
  })

  test('modifyOneQuery: without filters the normalised query; filters the engine cannot apply are refused', async () => {
    const { server, base } = await listening()
    const c = await open(`${base}/api/ws/search`, { protocol: server.adminJwt })
    c.send({ Subs: ['PONG', 'parse', 'search', 'attach'] })
    c.send({ type: 'parse', data: { SearchString: 'tag=web|count', Sequence: 1 } })
    const plain = await c.next((m) => m.type === 'parse' && m.data.Sequence === 1)
    expect(plain.data).toMatchObject({ GoodQuery: true, ParsedQuery: 'tag=web count', RenderModule: 'table' })
    c.send({ type: 'parse', data: { SearchString: 'tag=web', Sequence: 2, Filters: [{ Tag: 'web', Module: 'json', Path: 'a', Op: '==', Value: '1' }] } })
    const filtered = await c.next((m) => m.type === 'parse' && m.data.Sequence === 2)
    expect(filtered.data.GoodQuery).toBe(false)
    expect(filtered.data.ParseError).toContain('filters')
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
    c.send({ type: 'parse', data: { SearchString: 'tag=a', Sequence: 9 } })
    expect((await c.next((m) => m.type === 'parse' && m.data.Sequence === 9)).data.GoodQuery).toBe(true)

    // one message over the limit: that socket is closed (1009), the server and other sockets go on
    const other = await open(`${base}/api/ws/search`, { protocol: server.adminJwt })
    c.send({ type: 'parse', data: { SearchString: 'x'.repeat(WS_MAX_MESSAGE), Sequence: 10 } })
    expect((await c.closed).code).toBe(1009)
    other.send({ type: 'parse', data: { SearchString: 'tag=a', Sequence: 11 } })
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

  /** A raw WebSocket client that sends requests and never reads a byte of the answers. */
  async function nonReadingClient(port: number, jwt: string) {
    const sock = tcpConnect(port, '127.0.0.1')
    await new Promise<void>((resolve) => sock.once('connect', () => resolve()))
    sock.pause()
    sock.on('error', () => undefined)
    sock.write(
      `GET /api/ws/search HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n` +
        `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nAuthorization: Bearer ${jwt}\r\n\r\n`,
    )
    const send = (message: unknown) => {
      const payload = Buffer.from(JSON.stringify(message))
      const mask = Buffer.from([1, 2, 3, 4])
      const head = payload.length < 126 ? Buffer.from([0x81, 0x80 | payload.length]) : Buffer.from([0x81, 0x80 | 126, payload.length >> 8, payload.length & 255])
      sock.write(Buffer.concat([head, mask, Buffer.from(payload.map((b, i) => b ^ mask[i % 4]!))]))
    }
    return { sock, send }
  }

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
