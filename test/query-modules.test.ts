// eval, sort, unique, first, last and lookup through the real app: entries ingested over the API, a search launched
// as a client launches it, and its results read back from the download.
import { afterEach, describe, expect, test } from 'bun:test'
import { type TestServer, createTestServer, itemWorld } from './helpers'

const servers: TestServer[] = []
afterEach(() => {
  for (const s of servers.splice(0)) s.close()
})

async function setup() {
  const s = await createTestServer({}, { search: { chunk: 4, stepMs: 0 } })
  servers.push(s)
  return itemWorld(s)
}

const T0 = Date.parse('2026-01-01T00:00:00Z')
const b64 = (text: string) => Buffer.from(text).toString('base64')

async function ingest(s: TestServer, lines: string[]) {
  const json = lines.map((text, i) => ({ TS: new Date(T0 + i * 1000).toISOString(), Tag: 'web', SRC: '192.0.2.7', Data: b64(text) }))
  const res = await s.call('POST', '/api/ingest/json', { jwt: s.adminJwt, json })
  expect(res.status).toBe(200)
}

async function launch(s: TestServer, jwt: string, query: string) {
  return s.call('POST', '/api/searchctrl/launch', { jwt, json: { SearchString: query } })
}

/** Each result record's data and enumerated values. */
async function results(s: TestServer, jwt: string, query: string): Promise<{ data: string; values: Record<string, string> }[]> {
  const res = await launch(s, jwt, query)
  expect({ status: res.status, text: res.text }).toMatchObject({ status: 200 })
  await s.searches.settled()
  const got = await s.call('GET', `/api/searchctrl/${res.body.SearchID}/download/json`, { jwt })
  expect(got.status).toBe(200)
  return (got.body as { Data: string; Enumerated?: { Name: string; ValueStr: string }[] }[]).map((r) => ({
    data: Buffer.from(r.Data, 'base64').toString(),
    values: Object.fromEntries((r.Enumerated ?? []).map((v) => [v.Name, v.ValueStr])),
  }))
}

/** Access-log-like lines: method, path, status, bytes. */
const LINES = Array.from({ length: 40 }, (_, i) => `${i % 3 === 0 ? 'POST' : 'GET'} /p${i % 5} ${[200, 404, 500][i % 3]} ${(i * 37) % 1000}`)
const EXTRACT = 'regex "^(?P<method>\\S+) (?P<path>\\S+) (?P<status>\\d+) (?P<bytes>\\d+)$"'
const parsed = LINES.map((l) => {
  const [method, path, status, bytes] = l.split(' ') as [string, string, string, string]
  return { line: l, method, path, status: Number(status), bytes: Number(bytes) }
})

describe('query modules through the app', () => {
  test('eval filters and computes', async () => {
    const { s, owner } = await setup()
    await ingest(s, LINES)
    const got = await results(s, owner.jwt, `tag=web ${EXTRACT} | eval ( status >= 500 || method == "POST" ) && bytes > 100 | eval kb = bytes / 1024.0; tag = strings_tolower(method) + ":" + path`)
    const want = parsed.filter((p) => (p.status >= 500 || p.method === 'POST') && p.bytes > 100)
    expect(got.map((r) => r.data)).toEqual(want.map((p) => p.line))
    expect(got.map((r) => [Number(r.values.kb), r.values.tag])).toEqual(want.map((p) => [p.bytes / 1024, `${p.method.toLowerCase()}:${p.path}`]))
    const refused = await launch(s, owner.jwt, 'tag=web eval x = (1 +')
    expect(refused.status).toBe(400)
    expect(refused.body).toMatchObject({ Position: 21 })
  })

  test('sort orders by a value', async () => {
    const { s, owner } = await setup()
    await ingest(s, LINES)
    const got = await results(s, owner.jwt, `tag=web ${EXTRACT} | sort by bytes desc`)
    expect(got.map((r) => Number(r.values.bytes))).toEqual(parsed.map((p) => p.bytes).sort((a, b) => b - a))
  })

  test('unique, first and last keep one entry per key', async () => {
    const { s, owner } = await setup()
    await ingest(s, LINES)
    const seen = new Set<string>()
    const uniques = parsed.filter((p) => !seen.has(`${p.method} ${p.path}`) && !!seen.add(`${p.method} ${p.path}`)).map((p) => p.line)
    expect((await results(s, owner.jwt, `tag=web ${EXTRACT} | unique method path`)).map((r) => r.data)).toEqual(uniques)
    const firstByPath = new Map<string, string>()
    for (const p of parsed) if (!firstByPath.has(p.path)) firstByPath.set(p.path, p.line)
    expect((await results(s, owner.jwt, `tag=web ${EXTRACT} | first path`)).map((r) => r.data)).toEqual([...firstByPath.values()])
    const lastIndex = new Map<number, number>()
    parsed.forEach((p, i) => lastIndex.set(p.status, i))
    const lastByStatus = [...lastIndex.values()].sort((a, b) => a - b).map((i) => parsed[i]!.line)
    expect((await results(s, owner.jwt, `tag=web ${EXTRACT} | last status`)).map((r) => r.data)).toEqual(lastByStatus)
    // Past -maxtracked the search ends with an error naming the bound.
    const res = await launch(s, owner.jwt, `tag=web ${EXTRACT} | unique -maxtracked 4 path`)
    expect(res.status).toBe(200)
    await s.searches.settled()
    const details = await s.call('GET', `/api/searchctrl/${res.body.SearchID}/details`, { jwt: owner.jwt })
    expect(details.body.Error).toBe('unique: more than 4 distinct keys (the bound -maxtracked sets): raise -maxtracked, or narrow the search')
  })

  test('lookup joins a CSV resource its owner uploaded, and cannot read another user\'s private one', async () => {
    const { s, owner, member, stranger, gid } = await setup()
    await ingest(s, LINES)
    const created = await s.call('POST', '/api/resources', { jwt: owner.jwt, json: { ResourceName: 'statuses', Description: 'status names' } })
    expect(created.status).toBe(200)
    const csv = 'code,name,"class, long"\n200,OK,success\n404,Not Found,"client, error"\n'
    const fd = new FormData()
    fd.append('file', new Blob([csv]), 'statuses.csv')
    const uploaded = await s.handle(new Request(`http://localhost/api/resources/${created.body.GUID}/raw`, { method: 'PUT', body: fd, headers: { authorization: `Bearer ${owner.jwt}` } }))
    expect(uploaded.status).toBe(200)
    const names: Record<number, [string, string]> = { 200: ['OK', 'success'], 404: ['Not Found', 'client, error'] }

    for (const by of ['statuses', created.body.GUID as string]) {
      const got = await results(s, owner.jwt, `tag=web ${EXTRACT} | lookup -r ${by} status code (name "class, long" as class)`)
      expect(got.map((r) => [r.values.name, r.values.class])).toEqual(parsed.map((p) => names[p.status] ?? [undefined, undefined]))
    }
    const strict = await results(s, owner.jwt, `tag=web ${EXTRACT} | lookup -s -r statuses status code name`)
    expect(strict.map((r) => r.data)).toEqual(parsed.filter((p) => names[p.status]).map((p) => p.line))

    // Another user: neither by name nor by GUID; the launch is refused at the resource's position, nothing runs.
    for (const by of ['statuses', created.body.GUID as string]) {
      const query = `tag=web ${EXTRACT} | lookup -r ${by} status code name`
      const refused = await launch(s, stranger.jwt, query)
      expect(refused.status).toBe(400)
      expect(refused.body.Error).toContain(`no resource ${JSON.stringify(by)} that you can read`)
      expect(refused.body.Position).toBe(query.indexOf(by, query.indexOf('lookup')))
    }
    const listed = await s.call('GET', '/api/searchctrl', { jwt: stranger.jwt })
    expect(listed.body).toEqual([])
    // Shared with a group: its members read it by name; the stranger still does not.
    expect((await launch(s, member.jwt, `tag=web lookup -r statuses status code name`)).status).toBe(400)
    const shared = await s.call('PUT', `/api/resources/${created.body.GUID}`, { jwt: owner.jwt, json: { GroupACL: [gid] } })
    expect(shared.status).toBe(200)
    const viaGroup = await results(s, member.jwt, `tag=web ${EXTRACT} | lookup -s -r statuses status code name`)
    expect(viaGroup.map((r) => r.values.name)).toEqual(parsed.filter((p) => names[p.status]).map((p) => names[p.status]![0]))
    expect((await launch(s, stranger.jwt, `tag=web lookup -r statuses status code name`)).status).toBe(400)
    // A column the table lacks: 400 at the column.
    const query = `tag=web ${EXTRACT} | lookup -r statuses status code colour`
    const missing = await launch(s, owner.jwt, query)
    expect(missing.status).toBe(400)
    expect(missing.body).toMatchObject({ Position: query.indexOf('colour') })
  })

  test('an API token reads resources and auto-extractors through a query only with ResourceRead and ExtractorRead', async () => {
    const { s, owner } = await setup()
    await ingest(s, LINES)
    const created = await s.call('POST', '/api/resources', { jwt: owner.jwt, json: { ResourceName: 'statuses' } })
    const form = new FormData()
    form.append('file', new Blob(['code,name\n200,ok\n']), 'statuses.csv')
    expect((await s.call('PUT', `/api/resources/${created.body.GUID}/raw`, { jwt: owner.jwt, body: form as never })).status).toBe(200)
    const token = async (capabilities: string[]) =>
      ({ 'Service-Token': (await s.call('POST', '/api/tokens', { jwt: owner.jwt, json: { name: capabilities.join('+'), capabilities } })).body.token as string })
    const lookup = `tag=web ${EXTRACT} | lookup -r statuses status code name`
    const searchOnly = await token(['Search'])
    const refused = await s.call('POST', '/api/searchctrl/launch', { headers: searchOnly, json: { SearchString: lookup } })
    expect(refused).toMatchObject({ status: 403, body: { Cap: 'ResourceRead' } })
    const axRefused = await s.call('POST', '/api/searchctrl/launch', { headers: searchOnly, json: { SearchString: 'tag=web ax' } })
    expect(axRefused).toMatchObject({ status: 403, body: { Cap: 'ExtractorRead' } })
    // nothing was launched for the refused queries
    expect((await s.call('GET', '/api/searchctrl', { jwt: owner.jwt })).body).toEqual([])
    const withRead = await token(['Search', 'ResourceRead', 'ExtractorRead'])
    expect((await s.call('POST', '/api/searchctrl/launch', { headers: withRead, json: { SearchString: lookup } })).status).toBe(200)
    expect((await s.call('POST', '/api/searchctrl/launch', { headers: withRead, json: { SearchString: 'tag=web ax' } })).status).toBe(200)
  })
})
