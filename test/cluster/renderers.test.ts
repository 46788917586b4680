// Stats searches with their renderers across three replicas (docs/query-language.md) through test/cluster/harness.ts: a
// table, a chart and a numbercard search launched on A are read (REQ_GET_ENTRIES) and zoomed (REQ_TS_RANGE) over a
// search WebSocket on B with A's answers, and downloaded (csv, json) through C with A's bytes; once saved and A is
// killed, B takes them over and answers as A did. Every answer is also checked against counts and sums made by plain
// loops over the generated entries.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { REQ } from '../../plugins/ws/protocol'
import { type Cluster, type Replica, startCluster, until } from './harness'

let cluster: Cluster
let A: Replica, B: Replica, C: Replica
let admin: string

beforeAll(async () => {
  cluster = await startCluster()
  ;[A, B, C] = cluster.replicas as [Replica, Replica, Replica]
  admin = await cluster.login('admin', cluster.adminPassword, A)
}, 60_000)
afterAll(() => cluster?.stop(), 30_000)

const MIN = 60_000
/** A whole minute: the chart's 1m windows start at T0. */
const T0 = Date.parse('2026-01-01T00:00:00Z')
const HOSTS = ['a', 'b', 'c']
const TAG = 'clusterstats'
/** Entry i: one second after entry i-1, host HOSTS[i % 7 % 3] (uneven counts), x = i; 5 minutes of entries. */
const ROWS = Array.from({ length: 300 }, (_, i) => ({ ts: T0 + i * 1000, host: HOSTS[(i % 7) % 3]!, x: i }))
const RANGE = [new Date(T0), new Date(T0 + 10 * MIN)] as const
const EXTRACT = `tag=${TAG} regex "host=(?P<host>\\w+) x=(?P<x>\\d+)"`
const QUERIES = {
  table: `${EXTRACT} | stats count sum(x) by host | table host count sum`,
  chart: `${EXTRACT} | stats count by host over 1m | chart count by host`,
  card: `${EXTRACT} | stats count | numbercard count`,
}
type Kind = keyof typeof QUERIES

/** Count and sum of x per host over the entries with from <= ts < to. */
function byHost(from = -Infinity, to = Infinity) {
  const out = new Map<string, { count: number; sum: number }>()
  for (const r of ROWS) {
    if (r.ts < from || r.ts >= to) continue
    const s = out.get(r.host) ?? { count: 0, sum: 0 }
    s.count++
    s.sum += r.x
    out.set(r.host, s)
  }
  return out
}
const counts = (from?: number, to?: number) => new Map([...byHost(from, to)].map(([h, s]) => [h, s.count]))

interface Socket {
  ws: WebSocket
  ask(message: unknown, match: (m: any) => boolean): Promise<any>
}

async function open(r: Replica, jwt: string): Promise<Socket> {
  const ws = new WebSocket(`${r.url.replace(/^http/, 'ws')}/api/ws/search`, jwt)
  const received: any[] = []
  ws.onmessage = (e) => received.push(JSON.parse(String(e.data)))
  await new Promise<void>((resolve, reject) => {
    ws.onopen = () => resolve()
    ws.onerror = () => reject(new Error(`socket to ${r.name} failed`))
  })
  return {
    ws,
    async ask(message, match) {
      ws.send(JSON.stringify(message))
      const deadline = Date.now() + 20_000
      for (;;) {
        const i = received.findIndex(match)
        if (i >= 0) return received.splice(i, 1)[0]
        if (Date.now() > deadline) throw new Error(`no answer from ${r.name} to ${JSON.stringify(message)}; received: ${JSON.stringify(received).slice(0, 2000)}`)
        await Bun.sleep(20)
      }
    },
  }
}

let asked = 0
/** What a replica answers over a fresh socket to a search attached there: its entries and a zoom of them. */
async function read(r: Replica, jwt: string, id: string, zoom: Record<string, unknown>) {
  const s = await open(r, jwt)
  try {
    const attached = await s.ask({ type: 'attach', data: { ID: id } }, (m) => m.type === 'attach')
    expect(attached.data.Error).toBeUndefined()
    const sub = attached.data.Subproto as string
    expect(typeof sub).toBe('string')
    const request = async (ID: number, EntryRange: Record<string, unknown>) => {
      const tag = `q${asked++}`
      const answer = await s.ask({ type: sub, data: { ID, Addendum: { tag }, EntryRange } }, (m) => m.type === sub && m.data.Addendum?.tag === tag)
      // the Addendum is the asker's own (checked above); what is compared between replicas is the rest
      const { Addendum: _, ...rest } = answer.data
      return rest
    }
    return {
      entries: await request(REQ.GET_ENTRIES, { First: 0, Last: 100 }),
      zoomed: await request(REQ.TS_RANGE, zoom),
    }
  } finally {
    s.ws.close()
  }
}

/** Each search's zoom: a narrower range than the search's, and fewer points than its answer holds. */
const ZOOMS: Record<Kind, Record<string, unknown>> = {
  table: { First: 0, Last: 2, StartTS: new Date(T0 + MIN).toISOString(), EndTS: new Date(T0 + 9 * MIN).toISOString() },
  chart: { First: 0, Last: 3, StartTS: new Date(T0 + MIN).toISOString(), EndTS: new Date(T0 + 4 * MIN).toISOString() },
  card: { First: 0, Last: 1, StartTS: new Date(T0 + MIN).toISOString(), EndTS: new Date(T0 + 9 * MIN).toISOString() },
}

/** The independent checks of one search's answers, whichever replica gave them. */
function checkAnswers(kind: Kind, a: Awaited<ReturnType<typeof read>>) {
  const all = byHost()
  if (kind === 'table') {
    expect(a.entries.ID).toBe(REQ.GET_ENTRIES)
    expect(a.entries.Entries.Columns).toEqual(['host', 'count', 'sum'])
    expect(new Map(a.entries.Entries.Rows.map((r: any) => [r.Row[0], { count: Number(r.Row[1]), sum: Number(r.Row[2]) }]))).toEqual(all)
    // two of the three rows
    expect(a.zoomed.ID).toBe(REQ.TS_RANGE)
    expect(a.zoomed.Entries.Rows).toHaveLength(2)
    expect(a.zoomed.AdditionalEntries).toBe(true)
    for (const r of a.zoomed.Entries.Rows) expect({ count: Number(r.Row[1]), sum: Number(r.Row[2]) }).toEqual(all.get(r.Row[0])!)
  } else if (kind === 'chart') {
    const e = a.entries.Entries
    expect(e.Names).toEqual(HOSTS)
    expect(e.Values.length).toBeGreaterThanOrEqual(5)
    for (const v of e.Values) {
      const t = Date.parse(v.TS)
      const want = counts(t, t + MIN)
      expect(v.Data).toEqual(e.Names.map((h: string) => want.get(h) ?? null))
    }
    expect(e.Values.filter((v: any) => v.Data.some((d: unknown) => d !== null))).toHaveLength(5)
    // minutes 1 to 3, one point each
    const z = a.zoomed.Entries
    expect(z.Values.map((v: any) => v.TS)).toEqual([1, 2, 3].map((m) => new Date(T0 + m * MIN).toISOString()))
    for (const v of z.Values) {
      const t = Date.parse(v.TS)
      const want = counts(t, t + MIN)
      expect(v.Data).toEqual(z.Names.map((h: string) => want.get(h) ?? null))
    }
  } else {
    expect(a.entries.Entries).toEqual([{ Name: 'count', Magnitude: ROWS.length, Min: 0, Max: 0 }])
    // a condensed stats (no over) has no windows to narrow: the zoom keeps the statistic of the whole range, as the
    // table's does
    expect(a.zoomed.ID).toBe(REQ.TS_RANGE)
    expect(a.zoomed.Entries).toEqual(a.entries.Entries)
  }
}

async function download(r: Replica, jwt: string, id: string, format: 'csv' | 'json') {
  const res = await r.call('GET', `/api/searchctrl/${id}/download/${format}`, { jwt })
  expect([res.replica, res.status]).toEqual([r.name, 200])
  return { text: res.text, type: res.headers.get('content-type'), disposition: res.headers.get('content-disposition') }
}

/** The independent check of a search's downloads. */
function checkDownloads(kind: Kind, csv: string, json: string) {
  const all = byHost()
  const lines = csv.trimEnd().split('\r\n')
  if (kind === 'table') {
    expect(lines[0]).toBe('host,count,sum')
    expect(new Set(lines.slice(1))).toEqual(new Set([...all].map(([h, s]) => `${h},${s.count},${s.sum}`)))
    expect(new Set(JSON.parse(json))).toEqual(new Set([...all].map(([host, s]) => ({ host, ...s }))))
  } else if (kind === 'chart') {
    expect(lines[0]).toBe('TS,a,b,c')
    const byTs = new Map(lines.slice(1).map((l) => [l.split(',')[0]!, l.split(',').slice(1)]))
    for (let m = 0; m < 5; m++) {
      const want = counts(T0 + m * MIN, T0 + (m + 1) * MIN)
      expect(byTs.get(new Date(T0 + m * MIN).toISOString())).toEqual(HOSTS.map((h) => String(want.get(h) ?? '')))
    }
    const objects = JSON.parse(json) as Record<string, unknown>[]
    expect(objects.find((o) => o.TS === new Date(T0).toISOString())).toEqual({ TS: new Date(T0).toISOString(), ...Object.fromEntries(HOSTS.map((h) => [h, counts(T0, T0 + MIN).get(h) ?? null])) })
  } else {
    expect(lines).toEqual(['Name,Magnitude,Min,Max', `count,${ROWS.length},0,0`])
    expect(JSON.parse(json)).toEqual([{ Name: 'count', Magnitude: ROWS.length, Min: 0, Max: 0 }])
  }
}

describe('cluster: stats searches and their renderers', () => {
  let jwt: string
  const ids = {} as Record<Kind, string>
  const before = {} as Record<Kind, Awaited<ReturnType<typeof read>>>
  const downloads = {} as Record<Kind, { csv: Awaited<ReturnType<typeof download>>; json: Awaited<ReturnType<typeof download>> }>

  test('launched on A: read and zoomed over a socket on B as on A, downloaded through C as from A', async () => {
    const json = ROWS.map((r) => ({ TS: new Date(r.ts).toISOString(), Tag: TAG, Data: Buffer.from(`host=${r.host} x=${r.x}`).toString('base64') }))
    expect((await A.call('POST', '/api/ingest/json', { jwt: admin, json })).status).toBe(200)
    const u = await cluster.createUser('renderer')
    jwt = await cluster.login(u.User, u.Pass, A)
    for (const kind of Object.keys(QUERIES) as Kind[]) {
      const res = await A.call('POST', '/api/searchctrl/launch', {
        jwt,
        json: { SearchString: QUERIES[kind], SearchStart: RANGE[0].toISOString(), SearchEnd: RANGE[1].toISOString() },
      })
      expect([res.status, res.text]).toEqual([200, expect.any(String)])
      ids[kind] = res.body.SearchID as string
      const done = await until(() => A.call('GET', `/api/searchctrl/${ids[kind]}/details`, { jwt }), (r) => r.body.Finished !== '0001-01-01T00:00:00Z')
      expect(done.body.Finished).not.toBe('0001-01-01T00:00:00Z')
    }
    for (const kind of Object.keys(QUERIES) as Kind[]) {
      const onA = await read(A, jwt, ids[kind], ZOOMS[kind])
      checkAnswers(kind, onA)
      const onB = await read(B, jwt, ids[kind], ZOOMS[kind])
      expect(onB).toEqual(onA)
      before[kind] = onA
      const fromA = { csv: await download(A, jwt, ids[kind], 'csv'), json: await download(A, jwt, ids[kind], 'json') }
      checkDownloads(kind, fromA.csv.text, fromA.json.text)
      expect(fromA.csv.type).toStartWith('text/csv')
      for (const format of ['csv', 'json'] as const) expect(await download(C, jwt, ids[kind], format)).toEqual(fromA[format])
      downloads[kind] = fromA
    }
  }, 120_000)

  test('saved, then A killed: B takes them over and reads and zooms them as A did; C downloads the same bytes', async () => {
    for (const kind of Object.keys(QUERIES) as Kind[]) {
      expect((await B.call('PATCH', `/api/searchctrl/${ids[kind]}/save`, { jwt })).status).toBe(200)
      expect((await B.call('PUT', `/api/searchctrl/${ids[kind]}/detach`, { jwt })).status).toBe(200)
      const saved = await until(() => A.call('GET', `/api/searchctrl/${ids[kind]}/details`, { jwt }), (r) => r.body.State === 'DORMANT/SAVED')
      expect(saved.body.State).toBe('DORMANT/SAVED')
      // shown SAVED once its row says so, not before: the row is what another replica takes over
      expect(await cluster.rows('SELECT state FROM saved_searches WHERE id = ?', [ids[kind]])).toEqual([{ state: 'saved' }])
    }
    await cluster.kill(A)
    for (const kind of Object.keys(QUERIES) as Kind[]) {
      const onB = await read(B, jwt, ids[kind], ZOOMS[kind])
      checkAnswers(kind, onB)
      expect(onB).toEqual(before[kind])
      for (const format of ['csv', 'json'] as const) expect(await download(C, jwt, ids[kind], format)).toEqual(downloads[kind][format])
    }
    // one replica holds them now (B, which took them over first), and its records say so
    expect(await cluster.rows('SELECT DISTINCT owner FROM search_records WHERE id IN (?, ?, ?)', Object.values(ids))).toHaveLength(1)
  }, 120_000)
})
