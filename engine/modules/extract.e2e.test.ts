// The extraction and per-entry modules through the real app: entries ingested over HTTP, a search launched as a
// client launches it, and the stored results read back with their Enumerated values.
import { afterEach, describe, expect, test } from 'bun:test'
import { type TestServer, createTestServer } from '../../test/helpers'

const servers: TestServer[] = []
afterEach(() => {
  for (const s of servers.splice(0)) s.close()
})

const T0 = Date.parse('2026-01-01T00:00:00Z')
const b64 = (text: string) => Buffer.from(text).toString('base64')

async function withEntries(tag: string, lines: string[]) {
  const s = await createTestServer({}, { search: { chunk: 3, stepMs: 0 } })
  servers.push(s)
  const entries = lines.map((text, i) => ({ TS: new Date(T0 + i * 1000).toISOString(), Tag: tag, SRC: '192.0.2.7', Data: b64(text) }))
  const res = await s.call('POST', '/api/ingest/json', { jwt: s.adminJwt, json: entries })
  expect(res.status).toBe(200)
  return s
}

/** Runs a query to its end; the Enumerated values of each result, as name → text. */
async function enumerated(s: TestServer, query: string): Promise<Record<string, string>[]> {
  const launch = await s.call('POST', '/api/searchctrl/launch', { jwt: s.adminJwt, json: { SearchString: query, SearchStart: new Date(T0 - 1000).toISOString(), SearchEnd: new Date(T0 + 3_600_000).toISOString() } })
  expect({ status: launch.status, text: launch.text }).toMatchObject({ status: 200 })
  await s.searches.settled()
  const res = await s.call('GET', `/api/searchctrl/${launch.body.SearchID}/download/json`, { jwt: s.adminJwt })
  expect({ status: res.status, text: res.text.slice(0, 300) }).toMatchObject({ status: 200 })
  return (res.body as { Enumerated?: { Name: string; ValueStr: string }[] }[]).map((r) => Object.fromEntries((r.Enumerated ?? []).map((p) => [p.Name, p.ValueStr])))
}

describe('extraction modules through the app', () => {
  test('json with paths, filters and as; then ip, printf and upper on what it set', async () => {
    const lines = [
      JSON.stringify({ host: 'web1', status: 200, req: { path: '/a', ms: 12.5 }, client: '10.0.0.5' }),
      JSON.stringify({ host: 'web2', status: 503, req: { path: '/b', ms: 900 }, client: '8.8.8.8' }),
      'not json at all',
      JSON.stringify({ host: 'web3', status: 404, req: { path: '/c' }, client: '192.168.1.9', tags: ['x', 'y'] }),
    ]
    const s = await withEntries('x', lines)
    expect(await enumerated(s, 'tag=x json host status req.path as path req.ms')).toEqual([
      { host: 'web1', status: '200', path: '/a', ms: '12.5' },
      { host: 'web2', status: '503', path: '/b', ms: '900' },
      {},
      { host: 'web3', status: '404', path: '/c' },
    ])
    expect(await enumerated(s, 'tag=x json host status >= 400 client | ip client ~ PRIVATE | printf -e line "%s:%d" host status | upper host')).toEqual([
      { host: 'WEB3', status: '404', client: '192.168.1.9', line: 'web3:404' },
    ])
    // entries without the array pass as they are
    expect(await enumerated(s, 'tag=x json -x tags tags host')).toEqual([
      { host: 'web1' },
      { host: 'web2' },
      {},
      { tags: 'x', host: 'web3' },
      { tags: 'y', host: 'web3' },
    ])
  })

  test('kv, csv, fields, syslog and words as clients write them', async () => {
    const s = await withEntries('log', [
      '<165>1 2026-01-01T00:00:00.003Z mymach.it evntslog - ID47 [ex@32473 iut="3"] user=alice action="log in" src=10.1.1.1',
      '<34>Jan  1 00:00:01 host2 sshd[42]: user=bob action=logout src=8.8.4.4',
    ])
    expect(await enumerated(s, 'tag=log syslog Priority Severity Hostname Appname ProcID Timestamp Structured.iut | kv -q user action')).toEqual([
      { Priority: '165', Severity: '5', Hostname: 'mymach.it', Appname: 'evntslog', Timestamp: '2026-01-01T00:00:00.003Z', iut: '3', user: 'alice', action: 'log in' },
      { Priority: '34', Severity: '2', Hostname: 'host2', Appname: 'sshd', ProcID: '42', Timestamp: '2026-01-01T00:00:01Z', user: 'bob', action: 'logout' },
    ])
    expect(await enumerated(s, 'tag=log syslog Severity < 3 Message | words -e Message logout | alias Message m | require m')).toEqual([
      { Severity: '2', Message: 'user=bob action=logout src=8.8.4.4', m: 'user=bob action=logout src=8.8.4.4' },
    ])
    expect(await enumerated(s, 'tag=log fields -d " " [1] as ver | kv src | csv -e src [0] as ip | time -oformat "2006" TIMESTAMP year')).toEqual([
      { ver: '2026-01-01T00:00:00.003Z', src: '10.1.1.1', ip: '10.1.1.1', year: '2026' },
      // `Jan  1`: two blanks, so field 1 is empty
      { ver: '', src: '8.8.4.4', ip: '8.8.4.4', year: '2026' },
    ])
  })

  test('a bad argument is refused with its module and position', async () => {
    const s = await withEntries('x', ['{}'])
    const res = await s.call('POST', '/api/searchctrl/launch', { jwt: s.adminJwt, json: { SearchString: 'tag=x json a | syslog Bogus' } })
    expect(res.status).toBe(400)
    expect(res.text).toContain('Bogus')
  })
})
