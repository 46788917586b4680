// The renderers' answers over the search WebSocket and their downloads, through a real listening server and real
// WebSocket clients: what the TypeScript client sends (REQ_GET_ENTRIES, REQ_TS_RANGE with First, Last, StartTS,
// EndTS) and the shapes it reads per renderer (its isRaw...Renderer guards), checked against counts made by plain
// loops over the ingested entries.
import { afterAll, describe, expect, test } from 'bun:test'
import { type TestServer, createTestServer } from '../../test/helpers'
import { type SocketClient as Client, openSocket } from '../../test/ws-client'
import { REQ, RESP_ERROR } from './protocol'

const servers: TestServer[] = []
afterAll(async () => {
  for (const s of servers) {
    if (s.app.server) await s.app.stop(true)
    s.close()
  }
})

/** A socket opened as the TypeScript client opens one (`new WebSocket(url, jwt)`). */
const open = (url: string, protocol: string) => openSocket(url, { protocol })

const HOSTS = ['a', 'b', 'c']
const MIN = 60_000

/**
 * A server with N entries "host=<h> bytes=<i>" one second apart from t0 (a whole minute), host h = HOSTS[i % 7 % 3]
 * (uneven counts); answers the server, its ws:// base, t0 and the entries as a plain list.
 */
async function world(n = 180) {
  const server = await createTestServer()
  servers.push(server)
  server.app.listen({ hostname: '127.0.0.1', port: 0 })
  const now = server.clock.now()
  const t0 = Math.floor((now - 30 * MIN) / MIN) * MIN
  const rows = Array.from({ length: n }, (_, i) => ({ ts: t0 + i * 1000, host: HOSTS[(i % 7) % 3]!, bytes: i }))
  const json = rows.map((r) => ({ TS: new Date(r.ts).toISOString(), Tag: 'web', SRC: '10.0.0.1', Data: Buffer.from(`host=${r.host} bytes=${r.bytes}`).toString('base64') }))
  const res = await server.call('POST', '/api/ingest/json', { jwt: server.adminJwt, json })
  expect(res.status).toBe(200)
  return { server, base: `ws://127.0.0.1:${server.app.server!.port}`, t0, rows, range: [new Date(t0 - 30 * MIN), new Date(now + 1000)] as [Date, Date] }
}

const EXTRACT = 'tag=web regex "host=(?P<host>\\w+) bytes=(?P<bytes>\\d+)"'

async function launch(c: Client, query: string, range: [Date, Date]) {
  c.send({ Subs: ['PONG', 'parse', 'search', 'attach'] })
  c.send({ type: 'search', data: { Addendum: {}, Background: false, Metadata: {}, SearchStart: range[0].toISOString(), SearchEnd: range[1].toISOString(), SearchString: query } })
  const init = await c.next((m) => m.type === 'search' && m.data.RawQuery === query)
  expect(init.data.Error).toBeUndefined()
  c.send({ type: 'search', data: { OK: true, OutputSearchSubproto: init.data.OutputSearchSubproto } })
  return { init: init.data, subproto: init.data.OutputSearchSubproto as string }
}

async function finished(server: TestServer, id: string) {
  for (let i = 0; i < 400; i++) {
    const res = await server.call('GET', `/api/searchctrl/${id}/details`, { jwt: server.adminJwt })
    if (res.status === 200 && res.body.Finished !== '0001-01-01T00:00:00Z') return
    await Bun.sleep(25)
  }
  throw new Error(`search ${id} did not finish`)
}

let asked = 0
async function ask(c: Client, subproto: string, id: number, range: Record<string, unknown>) {
  const tag = `r${asked++}`
  c.send({ type: subproto, data: { ID: id, Addendum: { tag }, EntryRange: range } })
  return (await c.next((m) => m.type === subproto && m.data.Addendum?.tag === tag)).data
}

const countBy = (rows: readonly { ts: number; host: string }[], from = -Infinity, to = Infinity) => {
  const out = new Map<string, number>()
  for (const r of rows) if (r.ts >= from && r.ts < to) out.set(r.host, (out.get(r.host) ?? 0) + 1)
  return out
}

const isString = (v: unknown) => typeof v === 'string'

describe('renderers over the search socket', () => {
  test('stats count by host | table: {Columns, Rows}, cells as strings; a zoom merges the windows within it', async () => {
    const { server, base, t0, rows, range } = await world()
    const c = await open(`${base}/api/ws/search`, server.adminJwt)
    const { init, subproto } = await launch(c, `${EXTRACT} | stats count by host over 1m | table host count`, range)
    expect(init.RenderModule).toBe('table')
    expect(init.RenderCmd).toBe('table')
    await finished(server, init.SearchID)
    const all = await ask(c, subproto, REQ.GET_ENTRIES, { First: 0, Last: 100 })
    expect(all.ID).toBe(REQ.GET_ENTRIES)
    expect(all.Entries.Columns).toEqual(['host', 'count'])
    // the client's isRawTableEntries / isRawTableRow
    for (const r of all.Entries.Rows) expect(isString(r.TS) && r.Row.every(isString)).toBe(true)
    expect(new Map(all.Entries.Rows.map((r: any) => [r.Row[0], Number(r.Row[1])]))).toEqual(countBy(rows))
    expect(all.AdditionalEntries).toBe(false)
    expect(all.EntryRange).toMatchObject({ First: 0, Last: all.Entries.Rows.length })
    // zoom on the second minute: the table counts that minute only
    const zoom = await ask(c, subproto, REQ.TS_RANGE, { First: 0, Last: 100, StartTS: new Date(t0 + MIN).toISOString(), EndTS: new Date(t0 + 2 * MIN).toISOString() })
    expect(new Map(zoom.Entries.Rows.map((r: any) => [r.Row[0], Number(r.Row[1])]))).toEqual(countBy(rows, t0 + MIN, t0 + 2 * MIN))
    // a page of one row
    const page = await ask(c, subproto, REQ.GET_ENTRIES, { First: 1, Last: 2 })
    expect(page.Entries.Rows).toEqual([all.Entries.Rows[1]])
    expect(page.AdditionalEntries).toBe(true)
    // Last before First is refused (the client's error$)
    const bad = await ask(c, subproto, REQ.GET_ENTRIES, { First: 5, Last: 1 })
    expect(bad.ID).toBe(RESP_ERROR)
    expect(bad.Error).toMatch(/Last/)
    // the renderer's downloads, listed where the clients read them
    c.send({ type: subproto, data: { ID: REQ.SEARCH_DETAILS } })
    const details = await c.next((m) => m.type === subproto && m.data.ID === REQ.SEARCH_DETAILS)
    expect(details.data.SearchInfo.RenderDownloadFormats).toEqual(['csv', 'json'])
    c.ws.close()
  })

  test('stats count by host over 1m | chart count by host: one point per window, re-bucketed to the points asked', async () => {
    const { server, base, t0, rows, range } = await world()
    const c = await open(`${base}/api/ws/search`, server.adminJwt)
    const { init, subproto } = await launch(c, `${EXTRACT} | stats count by host over 1m | chart count by host`, range)
    expect(init.RenderModule).toBe('chart')
    await finished(server, init.SearchID)
    // the whole range at 1m windows: 61 or 62 points, the three minutes with data, null elsewhere
    const all = await ask(c, subproto, REQ.GET_ENTRIES, { First: 0, Last: 100 })
    const e = all.Entries
    expect(e.Names).toEqual(['a', 'b', 'c'])
    expect(e.KeyComps).toEqual([{ Keys: ['a'] }, { Keys: ['b'] }, { Keys: ['c'] }])
    expect(e.Categories).toEqual(['count'])
    expect(e.Values.length).toBeLessThanOrEqual(100)
    expect(e.Values.length).toBeGreaterThanOrEqual(61)
    for (const v of e.Values) {
      expect(isString(v.TS)).toBe(true)
      expect(v.Data).toHaveLength(3)
      const t = Date.parse(v.TS)
      const want = countBy(rows, t, t + MIN)
      expect(v.Data).toEqual(e.Names.map((h: string) => want.get(h) ?? null))
    }
    // zoomed on the three minutes, three points: one a minute
    const zoom = [new Date(t0).toISOString(), new Date(t0 + 3 * MIN).toISOString()]
    const three = await ask(c, subproto, REQ.TS_RANGE, { First: 0, Last: 3, StartTS: zoom[0], EndTS: zoom[1] })
    expect(three.Entries.Values.map((v: any) => v.TS)).toEqual([0, 1, 2].map((m) => new Date(t0 + m * MIN).toISOString()))
    expect(three.EntryRange).toEqual({ First: 0, Last: 3, StartTS: zoom[0], EndTS: zoom[1] })
    // one point for the three minutes: their windows merged
    const one = await ask(c, subproto, REQ.TS_RANGE, { First: 0, Last: 1, StartTS: zoom[0], EndTS: zoom[1] })
    const total = countBy(rows)
    expect(one.Entries.Values).toHaveLength(1)
    expect(one.Entries.Values[0].Data).toEqual(one.Entries.Names.map((h: string) => total.get(h)!))
    c.ws.close()
  })

  test('stats count | numbercard and gauge: [{Name, Magnitude, Min, Max}]', async () => {
    const { server, base, rows, range } = await world(120)
    const c = await open(`${base}/api/ws/search`, server.adminJwt)
    const card = await launch(c, `${EXTRACT} | stats count | numbercard count`, range)
    expect(card.init.RenderModule).toBe('numbercard')
    await finished(server, card.init.SearchID)
    expect((await ask(c, card.subproto, REQ.GET_ENTRIES, { First: 0, Last: 10 })).Entries).toEqual([{ Name: 'count', Magnitude: rows.length, Min: 0, Max: 0 }])
    const g = await launch(c, `${EXTRACT} | stats count by host | gauge (count 0 1000 "entries")`, range)
    expect(g.init.RenderModule).toBe('gauge')
    await finished(server, g.init.SearchID)
    const values = (await ask(c, g.subproto, REQ.GET_ENTRIES, { First: 0, Last: 10 })).Entries as { Name: string; Magnitude: number; Min: number; Max: number }[]
    const want = countBy(rows)
    expect(new Map(values.map((v) => [v.Name, v.Magnitude]))).toEqual(new Map([...want].map(([h, n]) => [`${h} entries`, n])))
    for (const v of values) expect([v.Min, v.Max]).toEqual([0, 1000])
    c.ws.close()
  })

  test('stackgraph: [{Key, Values: [{Label, Value}]}]', async () => {
    const { server, base, rows, range } = await world(120)
    const c = await open(`${base}/api/ws/search`, server.adminJwt)
    const { init, subproto } = await launch(c, `${EXTRACT} | stats count by host | stackgraph host host count`, range)
    await finished(server, init.SearchID)
    const sets = (await ask(c, subproto, REQ.GET_ENTRIES, { First: 0, Last: 10 })).Entries as { Key: string; Values: { Label: string; Value: number }[] }[]
    expect(new Map(sets.map((s) => [s.Key, s.Values]))).toEqual(new Map([...countBy(rows)].map(([h, n]) => [h, [{ Label: h, Value: n }]])))
    c.ws.close()
  })

  test('wordcloud: a keyed value as [{Name, Magnitude, Min, Max}]; by condenses again, merging the stats op (sum, mean)', async () => {
    const { server, base, rows, range } = await world(150)
    const c = await open(`${base}/api/ws/search`, server.adminJwt)
    const words = async (query: string) => {
      const { init, subproto } = await launch(c, query, range)
      expect(init.RenderModule).toBe('wordcloud')
      await finished(server, init.SearchID)
      const a = await ask(c, subproto, REQ.GET_ENTRIES, { First: 0, Last: 100 })
      for (const w of a.Entries) expect([w.Min, w.Max]).toEqual([0, 0])
      return new Map((a.Entries as { Name: string; Magnitude: number }[]).map((w) => [w.Name, w.Magnitude]))
    }
    expect(await words(`${EXTRACT} | stats count by host | wordcloud count`)).toEqual(countBy(rows))
    // the downloads: the same words whole, as JSON and as CSV (a header, then a row per word)
    const { init } = await launch(c, `${EXTRACT} | stats count by host | wordcloud count`, range)
    await finished(server, init.SearchID)
    const download = async (format: string) => (await server.call('GET', `/api/searchctrl/${init.SearchID}/download/${format}`, { jwt: server.adminJwt })).text
    const json = JSON.parse(await download('json')) as { Name: string; Magnitude: number }[]
    expect(new Map(json.map((w) => [w.Name, w.Magnitude]))).toEqual(countBy(rows))
    const csv = (await download('csv')).trimEnd().split('\r\n')
    expect(csv[0]).toBe('Name,Magnitude')
    expect(new Map(csv.slice(1).map((l) => [l.split(',')[0]!, Number(l.split(',')[1])]))).toEqual(countBy(rows))
    // one group per entry (host and bytes), condensed again by host in the renderer
    const sums = new Map<string, number>()
    for (const r of rows) sums.set(r.host, (sums.get(r.host) ?? 0) + r.bytes)
    expect(await words(`${EXTRACT} | stats sum(bytes) as total by host bytes | wordcloud total by host`)).toEqual(sums)
    const means = await words(`${EXTRACT} | stats mean(bytes) as m by host bytes | wordcloud m by host`)
    expect([...means.keys()].sort()).toEqual([...countBy(rows).keys()].sort())
    for (const [h, m] of means) expect(m).toBeCloseTo(sums.get(h)! / countBy(rows).get(h)!, 9)
    c.ws.close()
  })

  test('fdg: {nodes, links, groups} of source and destination values; -v sums a weight, -b joins both directions, -sg/-dg group', async () => {
    const server = await createTestServer()
    servers.push(server)
    server.app.listen({ hostname: '127.0.0.1', port: 0 })
    const now = server.clock.now()
    const names = ['h1', 'h2', 'h3', 'h4']
    const flows = Array.from({ length: 60 }, (_, i) => ({ src: names[i % 4]!, dst: names[(i * 3 + 1) % 4]!, n: i }))
    const json = flows.map((f, i) => ({ TS: new Date(now - 60_000 + i).toISOString(), Tag: 'flows', Data: Buffer.from(`src=${f.src} dst=${f.dst} n=${f.n}`).toString('base64') }))
    expect((await server.call('POST', '/api/ingest/json', { jwt: server.adminJwt, json })).status).toBe(200)
    const range: [Date, Date] = [new Date(now - 3_600_000), new Date(now + 1000)]
    const c = await open(`ws://127.0.0.1:${server.app.server!.port}/api/ws/search`, server.adminJwt)
    const graph = async (args: string) => {
      const { init, subproto } = await launch(c, `tag=flows regex "src=(?P<src>\\S+) dst=(?P<dst>\\S+) n=(?P<n>\\d+)" | fdg ${args}`, range)
      expect(init.Error ?? init.RenderModule).toBe('fdg')
      await finished(server, init.SearchID)
      const set = (await ask(c, subproto, REQ.GET_ENTRIES, { First: 0, Last: 100 })).Entries as { nodes: { name: string; group: number }[]; links: { value: number; source: number; target: number }[]; groups: string[] }
      // the edges by node names, weights summed by a plain loop below
      const edges = new Map(set.links.map((l) => [`${set.nodes[l.source]!.name}>${set.nodes[l.target]!.name}`, l.value]))
      return { set, edges }
    }
    const expected = (weight: (f: (typeof flows)[number]) => number, both: boolean) => {
      const out = new Map<string, number>()
      for (const f of flows) {
        const back = `${f.dst}>${f.src}`
        const key = both && out.has(back) ? back : `${f.src}>${f.dst}`
        out.set(key, (out.get(key) ?? 0) + weight(f))
      }
      return out
    }
    const counted = await graph('src dst')
    expect(counted.edges).toEqual(expected(() => 1, false))
    expect(new Set(counted.set.nodes.map((n) => n.name))).toEqual(new Set(names))
    expect(counted.set.groups).toEqual([''])
    for (const n of counted.set.nodes) expect(n.group).toBe(0)
    expect((await graph('-v n src dst')).edges).toEqual(expected((f) => f.n, false))
    expect((await graph('-b src dst')).edges).toEqual(expected(() => 1, true))
    // groups: a source node's group is its -sg value (here itself), a destination's its -dg value (here its source)
    const grouped = (await graph('-sg src -dg src src dst')).set
    for (const n of grouped.nodes) {
      const g = grouped.groups[n.group]!
      const first = flows.find((f) => f.src === n.name || f.dst === n.name)!
      expect(g).toBe(first.src === n.name ? n.name : first.src)
    }
    c.ws.close()
  })

  test('point2point: one line per source and destination, magnitude counted or summed (-mag), ValueNames; -srcloc refused', async () => {
    const server = await createTestServer()
    servers.push(server)
    server.app.listen({ hostname: '127.0.0.1', port: 0 })
    const now = server.clock.now()
    const spots = [[10, 20], [-33.5, 151], [51, -0.25]]
    const flows = Array.from({ length: 40 }, (_, i) => ({ s: spots[i % 3]!, d: spots[(i * 2 + 1) % 3]!, n: i, partial: i % 10 === 9 }))
    const doc = (f: (typeof flows)[number]) => JSON.stringify({ src: { lat: f.s[0], lon: f.s[1] }, dst: f.partial ? { lat: f.d[0] } : { lat: f.d[0], lon: f.d[1] }, n: f.n })
    const json = flows.map((f, i) => ({ TS: new Date(now - 60_000 + i).toISOString(), Tag: 'geo', Data: Buffer.from(doc(f)).toString('base64') }))
    expect((await server.call('POST', '/api/ingest/json', { jwt: server.adminJwt, json })).status).toBe(200)
    const range: [Date, Date] = [new Date(now - 3_600_000), new Date(now + 1000)]
    const c = await open(`ws://127.0.0.1:${server.app.server!.port}/api/ws/search`, server.adminJwt)
    const EXTRACT_GEO = 'tag=geo json src.lat as slat src.lon as slon dst.lat as dlat dst.lon as dlon n'
    const lines = async (flags: string) => {
      const { init, subproto } = await launch(c, `${EXTRACT_GEO} | point2point ${flags}`, range)
      expect(init.Error ?? init.RenderModule).toBe('point2point')
      await finished(server, init.SearchID)
      const a = await ask(c, subproto, REQ.GET_ENTRIES, { First: 0, Last: 100 })
      expect(a.ValueNames).toEqual([])
      return new Map((a.Entries as { Src: { Lat: number; Long: number }; Dst: { Lat: number; Long: number }; Magnitude: number }[]).map((l) => [`${l.Src.Lat},${l.Src.Long}>${l.Dst.Lat},${l.Dst.Long}`, l.Magnitude]))
    }
    const expected = (weight: (f: (typeof flows)[number]) => number) => {
      const out = new Map<string, number>()
      for (const f of flows.filter((f) => !f.partial)) {
        const key = `${f.s[0]},${f.s[1]}>${f.d[0]},${f.d[1]}`
        out.set(key, (out.get(key) ?? 0) + weight(f))
      }
      return out
    }
    const coords = '-srclat slat -srclong slon -dstlat dlat -dstlong dlon'
    expect(await lines(coords)).toEqual(expected(() => 1))
    expect(await lines(`${coords} -mag n`)).toEqual(expected((f) => f.n))
    const badQuery = `${EXTRACT_GEO} | point2point -srcloc s -dstlat dlat -dstlong dlon`
    c.send({ type: 'search', data: { SearchStart: range[0].toISOString(), SearchEnd: range[1].toISOString(), SearchString: badQuery } })
    const bad = await c.next((m) => m.type === 'search' && m.data.RawQuery === badQuery)
    expect(bad.data.Error).toContain('-srcloc needs a Location value')
    c.ws.close()
  })

  test('text, raw and hex: entries newest first with their Enumerated values and the Tags map', async () => {
    const { server, base, rows, range } = await world(30)
    const c = await open(`${base}/api/ws/search`, server.adminJwt)
    for (const renderer of ['text', 'raw', 'hex']) {
      const { init, subproto } = await launch(c, `${EXTRACT} | ${renderer}`, range)
      expect(init.RenderModule).toBe(renderer)
      await finished(server, init.SearchID)
      const a = await ask(c, subproto, REQ.TS_RANGE, { First: 0, Last: 5, StartTS: range[0].toISOString(), EndTS: range[1].toISOString() })
      expect(a.Entries).toHaveLength(5)
      expect(Object.keys(a.Tags)).toEqual(['web'])
      for (const [i, e] of (a.Entries as any[]).entries()) {
        const row = rows[rows.length - 1 - i]!
        expect(e.Tag).toBe(a.Tags.web)
        expect(e.TS).toBe(new Date(row.ts).toISOString())
        expect(e.Enumerated).toEqual([
          { Name: 'host', ValueStr: row.host },
          { Name: 'bytes', ValueStr: String(row.bytes) },
        ])
      }
    }
    c.ws.close()
  })

  test('a query ending in count answers as before: a table of one cell', async () => {
    const { server, base, rows, range } = await world(40)
    const c = await open(`${base}/api/ws/search`, server.adminJwt)
    const { init, subproto } = await launch(c, 'tag=web count', range)
    expect(init.RenderModule).toBe('table')
    await finished(server, init.SearchID)
    const a = await ask(c, subproto, REQ.GET_ENTRIES, { First: 0, Last: 10 })
    expect(a.Entries.Columns).toEqual(['count'])
    expect(a.Entries.Rows.map((r: any) => r.Row)).toEqual([[String(rows.length)]])
    c.ws.close()
  })
})

describe('downloads per renderer', () => {
  async function download(server: TestServer, id: string, format: string) {
    const res = await server.app.handle(new Request(`http://localhost/api/searchctrl/${id}/download/${format}`, { headers: { authorization: `Bearer ${server.adminJwt}` } }))
    return { status: res.status, type: res.headers.get('content-type'), text: await res.text() }
  }

  async function run(server: TestServer, query: string, range: [Date, Date]) {
    const res = await server.call('POST', '/api/searchctrl/launch', { jwt: server.adminJwt, json: { SearchString: query, SearchStart: range[0].toISOString(), SearchEnd: range[1].toISOString() } })
    expect(res.status).toBe(200)
    await finished(server, res.body.SearchID)
    return res.body.SearchID as string
  }

  test('table: csv with a header row and numeric cells as they are, json rows; formats it does not offer are 400', async () => {
    const { server, rows, range } = await world(90)
    const id = await run(server, `${EXTRACT} | stats count sum(bytes) by host | table host count sum`, range)
    const csv = await download(server, id, 'csv')
    expect(csv.status).toBe(200)
    expect(csv.type).toStartWith('text/csv')
    const lines = csv.text.trimEnd().split('\r\n')
    expect(lines[0]).toBe('host,count,sum')
    const sums = new Map<string, number>()
    for (const r of rows) sums.set(r.host, (sums.get(r.host) ?? 0) + r.bytes)
    expect(new Set(lines.slice(1))).toEqual(new Set([...countBy(rows)].map(([h, n]) => `${h},${n},${sums.get(h)}`)))
    const json = await download(server, id, 'json')
    expect(JSON.parse(json.text)).toEqual(expect.arrayContaining([...countBy(rows)].map(([h, n]) => ({ host: h, count: n, sum: sums.get(h) }))))
    expect((await download(server, id, 'text')).status).toBe(400)
  })

  test('numbers stay numbers: a negative number is not guarded as a formula; text that starts like one is', async () => {
    const server = await createTestServer()
    servers.push(server)
    const now = server.clock.now()
    const data = ['v=-5 w==1+2', 'v=-7 w=@x']
    const json = data.map((d, i) => ({ TS: new Date(now - 1000 + i).toISOString(), Tag: 'n', Data: Buffer.from(d).toString('base64') }))
    expect((await server.call('POST', '/api/ingest/json', { jwt: server.adminJwt, json })).status).toBe(200)
    const id = await run(server, 'tag=n regex "v=(?P<v>\\S+) w=(?P<w>\\S+)" | table v w', [new Date(now - 60_000), new Date(now + 1000)])
    expect((await download(server, id, 'csv')).text).toBe("v,w\r\n-5,'=1+2\r\n-7,'@x\r\n")
  })

  test('chart: csv of TS and the series per window, json objects', async () => {
    const { server, t0, rows, range } = await world(120)
    const id = await run(server, `${EXTRACT} | stats count by host over 1m | chart count by host`, range)
    const csv = (await download(server, id, 'csv')).text.trimEnd().split('\r\n')
    expect(csv[0]).toBe('TS,a,b,c')
    const byTs = new Map(csv.slice(1).map((l) => [l.split(',')[0]!, l.split(',').slice(1)]))
    for (const m of [0, 1]) {
      const want = countBy(rows, t0 + m * MIN, t0 + (m + 1) * MIN)
      expect(byTs.get(new Date(t0 + m * MIN).toISOString())).toEqual(['a', 'b', 'c'].map((h) => String(want.get(h) ?? '')))
    }
    const json = JSON.parse((await download(server, id, 'json')).text) as Record<string, unknown>[]
    expect(json.find((o) => o.TS === new Date(t0).toISOString())).toEqual({ TS: new Date(t0).toISOString(), ...Object.fromEntries(['a', 'b', 'c'].map((h) => [h, countBy(rows, t0, t0 + MIN).get(h) ?? null])) })
  })
})
