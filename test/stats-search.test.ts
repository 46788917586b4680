// stats through the real app: generated lines ingested over HTTP, a search launched as a client does, its stored
// records read back through the JSON download, compared with a plain loop over the lines that were sent.
import { afterEach, describe, expect, test } from 'bun:test'
import { type TestServer, createTestServer } from './helpers'

const servers: TestServer[] = []
afterEach(() => {
  for (const s of servers.splice(0)) s.close()
})

const T0 = Date.parse('2026-01-01T00:00:00Z')
const HOSTS = ['alpha', 'beta', 'gamma', 'delta']

/** Line i: a host, a number and a user, deterministic in i. */
function line(i: number) {
  const host = HOSTS[(i * 7) % HOSTS.length]!
  const n = (i * 37) % 101
  return { ts: T0 + i * 1000, host, n, user: `u${(i * 13) % 17}`, text: `host=${host} n=${n} user=u${(i * 13) % 17}` }
}

async function setup(count: number) {
  // small chunks: the search reads in many steps, as a long one does
  const s = await createTestServer({}, { search: { chunk: 25, stepMs: 0 } })
  servers.push(s)
  const lines = Array.from({ length: count }, (_, i) => line(i))
  const body = lines.map((l) => ({ TS: new Date(l.ts).toISOString(), Tag: 'web', SRC: '192.0.2.7', Data: Buffer.from(l.text).toString('base64') }))
  for (let i = 0; i < body.length; i += 500) {
    const res = await s.call('POST', '/api/ingest/json', { jwt: s.adminJwt, json: body.slice(i, i + 500) })
    expect(res.status).toBe(200)
  }
  return { s, lines }
}

async function search(s: TestServer, query: string) {
  const res = await s.call('POST', '/api/searchctrl/launch', {
    jwt: s.adminJwt,
    json: { SearchString: query, SearchStart: new Date(T0).toISOString(), SearchEnd: new Date(T0 + 86_400_000).toISOString() },
  })
  expect({ status: res.status, text: res.text }).toMatchObject({ status: 200 })
  const id = res.body.SearchID as string
  await s.searches.settled()
  const details = await s.call('GET', `/api/searchctrl/${id}/details`, { jwt: s.adminJwt })
  return { id, details: details.body }
}

async function records(s: TestServer, id: string): Promise<any[]> {
  const res = await s.call('GET', `/api/searchctrl/${id}/download/json`, { jwt: s.adminJwt })
  expect(res.status).toBe(200)
  return res.body
}

const EXTRACT = 'tag=web regex "host=(?P<host>\\S+) n=(?P<n>\\d+) user=(?P<user>\\S+)"'

/** A stored text record's enumerated values by name. */
const valuesOf = (r: { Enumerated?: { Name: string; ValueStr: string }[] }) => Object.fromEntries((r.Enumerated ?? []).map((p) => [p.Name, p.ValueStr]))

describe('stats through the app', () => {
  test('stats count sum(n) unique_count(user) by host: one record per host, as a plain loop counts', async () => {
    const { s, lines } = await setup(700)
    const { id, details } = await search(s, `${EXTRACT} | stats count sum(n) unique_count(user) by host`)
    expect(details.Error).toBe('')
    const got = (await records(s, id)).map(valuesOf)
    const want = HOSTS.map((host) => {
      const mine = lines.filter((l) => l.host === host)
      return {
        host,
        count: String(mine.length),
        sum: String(mine.reduce((t, l) => t + l.n, 0)),
        unique_count: String(new Set(mine.map((l) => l.user)).size),
      }
    })
    const byHost = (a: Record<string, string>, b: Record<string, string>) => (a.host ?? '').localeCompare(b.host ?? '')
    expect(got.sort(byHost)).toEqual(want.sort(byHost))
  })

  test('count by host over 1m: one record per host and minute, at the minute', async () => {
    const { s, lines } = await setup(400)
    const { id } = await search(s, `${EXTRACT} | count by host over 1m`)
    const got = await records(s, id)
    const want = new Map<string, number>()
    for (const l of lines) {
      const key = `${new Date(Math.floor(l.ts / 60_000) * 60_000).toISOString()} ${l.host}`
      want.set(key, (want.get(key) ?? 0) + 1)
    }
    const seen = new Map(got.map((r) => [`${r.TS} ${valuesOf(r).host}`, Number(valuesOf(r).count)]))
    expect(seen).toEqual(want)
  })

  test('a plain count still answers one {"Count": n} record', async () => {
    const { s } = await setup(120)
    const { id } = await search(s, `${EXTRACT} n > 50 | count`)
    expect(await records(s, id)).toEqual([{ Count: Array.from({ length: 120 }, (_, i) => line(i)).filter((l) => l.n > 50).length }])
  })

  test('passing -maxtracked ends the search with an error naming it', async () => {
    const { s } = await setup(100)
    const { details } = await search(s, `${EXTRACT} | stats -maxtracked 2 count by host`)
    expect(details.Error).toContain('raise -maxtracked (now 2)')
  })
})
