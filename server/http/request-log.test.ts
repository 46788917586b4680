import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createTestServer, type TestServer } from '../../test/helpers'
import { clientAddress, parseTrustedProxies } from './client-address'
import { UNMATCHED_ROUTE } from '../runtime/metrics'
import { RouteLabels } from './request-log'

const afterResponses = () => new Promise((r) => setTimeout(r, 5)) // the request line is written after the answer

async function lineOf(s: TestServer, rid: string): Promise<Record<string, unknown>> {
  await afterResponses()
  const lines = s.logs.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request' && l.rid === rid)
  expect(lines).toHaveLength(1)
  return lines[0]
}

describe('client address behind trusted proxies', () => {
  const trusted = parseTrustedProxies('10.0.0.0/8, 192.168.1.7, fd00::/8')

  test('X-Forwarded-For is read only from a trusted peer, from the right, to the first untrusted hop', () => {
    // an untrusted peer: its header is the client's own say, never believed
    expect(clientAddress('203.0.113.9', '1.2.3.4', trusted)).toBe('203.0.113.9')
    // a trusted proxy: the hop it appended
    expect(clientAddress('10.1.2.3', '198.51.100.7', trusted)).toBe('198.51.100.7')
    // spoofed entries left of the real client are skipped; trusted hops right of it are walked past
    expect(clientAddress('10.1.2.3', '6.6.6.6, 198.51.100.7, 192.168.1.7', trusted)).toBe('198.51.100.7')
    expect(clientAddress('fd00::1', '2001:db8::5, fd12::9', trusted)).toBe('2001:db8::5')
    // a dual-stack socket reports IPv4 peers as IPv4-mapped IPv6
    expect(clientAddress('::ffff:10.0.0.1', '198.51.100.7', trusted)).toBe('198.51.100.7')
    // ports and brackets are dropped; garbage ends the walk at the proxy that passed it on
    expect(clientAddress('10.1.2.3', '198.51.100.7:5555', trusted)).toBe('198.51.100.7')
    expect(clientAddress('10.1.2.3', '[2001:db8::1]:443', trusted)).toBe('2001:db8::1')
    expect(clientAddress('10.1.2.3', 'not-an-address', trusted)).toBe('10.1.2.3')
    expect(clientAddress('10.1.2.3', '198.51.100.7, <script>', trusted)).toBe('10.1.2.3')
    // only proxies all the way: the leftmost hop
    expect(clientAddress('10.1.2.3', '10.9.9.9', trusted)).toBe('10.9.9.9')
    // without the header, or without trusted proxies at all, the peer
    expect(clientAddress('10.1.2.3', null, trusted)).toBe('10.1.2.3')
    expect(clientAddress('10.1.2.3', '198.51.100.7', undefined)).toBe('10.1.2.3')
  })

  test('CIDRs are validated', () => {
    expect(trusted.cidrs).toEqual(['10.0.0.0/8', '192.168.1.7/32', 'fd00::/8'])
    for (const bad of ['10.0.0.0/33', 'fd00::/129', '10.0.0', 'example.com', '10.0.0.0/8/1', ' , '])
      expect(() => parseTrustedProxies(bad)).toThrow()
  })
})

describe('request ids and request lines', () => {
  let s: TestServer
  beforeAll(async () => {
    s = await createTestServer()
  })
  afterAll(() => s.close())

  test('a safe incoming X-Request-Id is the request id: echoed and logged', async () => {
    for (const rid of ['abc-123', 'f47ac10b-58cc-4372-a567-0e02b2c3d479', 'trace:01HZX.42_a', 'x'.repeat(64)]) {
      const res = await s.call('GET', '/api/info/whoami', { jwt: s.adminJwt, headers: { 'x-request-id': rid } })
      expect(res.status).toBe(200)
      expect(res.headers.get('x-request-id')).toBe(rid)
      expect(await lineOf(s, rid)).toMatchObject({ rid, status: 200, uid: 1 })
    }
  })

  test('an unsafe or long X-Request-Id is replaced by a generated one, which is echoed and logged', async () => {
    for (const bad of ['x'.repeat(65), 'a b', 'a"b', 'a\tb', '{"json":1}', 'ünï', '../../etc', '']) {
      const res = await s.call('GET', '/api/info/whoami', { jwt: s.adminJwt, headers: { 'x-request-id': bad } })
      expect(res.status).toBe(200)
      const rid = res.headers.get('x-request-id')!
      expect(rid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
      expect(rid).not.toBe(bad)
      await lineOf(s, rid)
    }
    expect(s.logs.join('\n')).not.toContain('a"b')
  })

  test('refusals of every kind echo the incoming id and have exactly one request line, with their status', async () => {
    const cases: [string, string, Record<string, unknown>, number][] = [
      ['no-credential', '/api/info/whoami', {}, 401],
      ['bad-jwt', '/api/info/whoami', { jwt: 'not.a.jwt' }, 401],
      ['no-route', '/api/no/such/route', { jwt: s.adminJwt }, 404],
      ['bad-param', '/api/users/abc', { jwt: s.adminJwt }, 400],
      ['no-such-user', '/api/users/4242', { jwt: s.adminJwt }, 404],
    ]
    for (const [rid, path, opts, status] of cases) {
      const res = await s.call('GET', path, { ...opts, headers: { 'x-request-id': rid } })
      expect({ rid, status: res.status }).toEqual({ rid, status })
      expect(res.headers.get('x-request-id')).toBe(rid)
      expect(await lineOf(s, rid)).toMatchObject({ rid, status, out: Buffer.byteLength(res.text) })
    }
  })

  test('a request line has the client address, bytes in and out and the user agent', async () => {
    const json = { Name: 'ops', Desc: 'the ops group' }
    const body = JSON.stringify(json)
    const res = await s.call('POST', '/api/groups', { jwt: s.adminJwt, json, headers: { 'user-agent': 'quarry-test/1.0', 'content-length': String(body.length) } })
    expect(res.status).toBe(200)
    const line = await lineOf(s, res.headers.get('x-request-id')!)
    expect(line).toMatchObject({ method: 'POST', path: '/api/groups', status: 200, in: body.length, out: Buffer.byteLength(res.text), ua: 'quarry-test/1.0' })
    // in-process there is no peer: the address is empty, never made up
    expect(line.ip).toBe('')
    // an error answer's size too
    const missing = await s.call('GET', '/api/groups/4242', { jwt: s.adminJwt })
    expect(await lineOf(s, missing.headers.get('x-request-id')!)).toMatchObject({ status: 404, out: Buffer.byteLength(missing.text) })
  })
})

describe('X-Forwarded-For on a listening server', () => {
  async function serve(trustedProxies?: string) {
    const s = await createTestServer(trustedProxies ? { trustedProxies: parseTrustedProxies(trustedProxies) } : {})
    s.app.listen({ hostname: '127.0.0.1', port: 0 })
    const base = `http://127.0.0.1:${s.app.server!.port}`
    return { s, base, stop: () => (s.app.server!.stop(true), s.close()) }
  }

  test('from an untrusted peer a spoofed X-Forwarded-For is ignored: log, session Origin and failed-login record show the peer', async () => {
    const { s, base, stop } = await serve()
    try {
      const spoof = { 'x-forwarded-for': '6.6.6.6', 'content-type': 'application/json' }
      const login = await fetch(`${base}/api/login`, { method: 'POST', headers: spoof, body: JSON.stringify({ User: 'admin', Pass: s.adminPassword }) })
      expect(login.status).toBe(200)
      expect((await lineOf(s, login.headers.get('x-request-id')!)).ip).toBe('127.0.0.1')
      const { JWT } = (await login.json()) as { JWT: string }
      const sessions = (await (await fetch(`${base}/api/users/1/sessions`, { headers: { authorization: `Bearer ${JWT}`, 'x-forwarded-for': '6.6.6.6' } })).json()) as { Sessions: { Origin: string }[] }
      const origins = sessions.Sessions.map((x) => x.Origin)
      expect(origins).toContain('127.0.0.1')
      expect(origins).not.toContain('6.6.6.6')
      const failed = await fetch(`${base}/api/login`, { method: 'POST', headers: spoof, body: JSON.stringify({ User: 'admin', Pass: 'wrong-password' }) })
      expect(failed.status).toBe(422)
      await afterResponses()
      expect(s.logs.map((l) => JSON.parse(l)).find((l) => l.msg === 'login failed')).toMatchObject({ origin: '127.0.0.1' })
      expect(s.logs.join('\n')).not.toContain('6.6.6.6')
    } finally {
      stop()
    }
  })

  test('from a trusted proxy the forwarded client is believed: log, session Origin and failed-login record', async () => {
    const { s, base, stop } = await serve('127.0.0.0/8, ::1')
    try {
      const fwd = { 'x-forwarded-for': '6.6.6.6, 198.51.100.7', 'content-type': 'application/json' }
      const login = await fetch(`${base}/api/login`, { method: 'POST', headers: fwd, body: JSON.stringify({ User: 'admin', Pass: s.adminPassword }) })
      expect(login.status).toBe(200)
      expect((await lineOf(s, login.headers.get('x-request-id')!)).ip).toBe('198.51.100.7')
      const { JWT } = (await login.json()) as { JWT: string }
      const sessions = (await (await fetch(`${base}/api/users/1/sessions`, { headers: { authorization: `Bearer ${JWT}` } })).json()) as { Sessions: { Origin: string }[] }
      expect(sessions.Sessions.map((x) => x.Origin)).toContain('198.51.100.7')
      const failed = await fetch(`${base}/api/login`, { method: 'POST', headers: fwd, body: JSON.stringify({ User: 'admin', Pass: 'wrong-password' }) })
      expect(failed.status).toBe(422)
      await afterResponses()
      expect(s.logs.map((l) => JSON.parse(l)).find((l) => l.msg === 'login failed')).toMatchObject({ origin: '198.51.100.7' })
      // the spoofed hop left of the real client is never taken
      expect(s.logs.join('\n')).not.toContain('6.6.6.6')
    } finally {
      stop()
    }
  })
})

describe("Bun's route table (a listening server): what the handler wrapper adds", () => {
  /** The count of one series of quarry_http_requests_total in the metrics text. */
  const countOf = (text: string, method: string, route: string, status: number) => {
    const line = text.split('\n').find((l) => l.startsWith('quarry_http_requests_total{') && l.includes(`method="${method}"`) && l.includes(`route="${route}"`) && l.includes(`status="${status}"`))
    return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1))
  }

  test('answers of routes Bun serves itself carry the request id and Connection: close, and are counted under their route template', async () => {
    const s = await createTestServer()
    s.app.listen({ hostname: '127.0.0.1', port: 0 })
    const base = `http://127.0.0.1:${s.app.server!.port}`
    try {
      const auth = { authorization: `Bearer ${s.adminJwt}` }
      const created = await s.call('POST', '/api/dashboards', { jwt: s.adminJwt, json: { Name: 'd', Description: '', Labels: [], Data: {} } })
      expect(created.status).toBe(200)
      const id = created.body as number
      const cases: [string, string, Record<string, string>, number][] = [
        ['native-whoami', '/api/info/whoami', auth, 200],
        ['native-dashboard', `/api/dashboards/${id}`, auth, 200],
        ['native-dashboard-missing', '/api/dashboards/4242', auth, 404],
        ['native-all', '/api/dashboards/all', auth, 200],
        ['native-no-credential', '/api/info/whoami', {}, 401],
        ['no-route', '/api/no/such/route', auth, 404],
        ['trailing-slash', '/api/info/whoami/', auth, 200],
      ]
      for (const [rid, path, headers, status] of cases) {
        const res = await fetch(`${base}${path}`, { headers: { ...headers, 'x-request-id': rid } })
        expect({ rid, status: res.status }).toEqual({ rid, status })
        expect(res.headers.get('x-request-id')).toBe(rid)
        const text = await res.text()
        expect(await lineOf(s, rid)).toMatchObject({ rid, status, path, ip: '127.0.0.1', out: Buffer.byteLength(text) })
      }
      // without an id of its own a request gets a generated one; the client's Connection: close is echoed
      const fresh = await fetch(`${base}/api/info/whoami`, { headers: { ...auth, connection: 'close' } })
      expect(fresh.status).toBe(200)
      expect(fresh.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/)
      expect(fresh.headers.get('connection')).toBe('close')
      expect((await lineOf(s, fresh.headers.get('x-request-id')!)).uid).toBe(1)

      const metrics = await (await fetch(`${base}/metrics`)).text()
      // whoami twice from Bun's table and once through the app's own router (the trailing slash), plus `fresh`
      expect(countOf(metrics, 'GET', '/api/info/whoami', 200)).toBe(3)
      expect(countOf(metrics, 'GET', '/api/info/whoami', 401)).toBe(1)
      expect(countOf(metrics, 'GET', '/api/dashboards/:id', 200)).toBe(1)
      expect(countOf(metrics, 'GET', '/api/dashboards/:id', 404)).toBe(1)
      expect(countOf(metrics, 'GET', '/api/dashboards/all', 200)).toBe(1)
      expect(countOf(metrics, 'GET', UNMATCHED_ROUTE, 404)).toBe(1)
    } finally {
      s.app.server!.stop(true)
      s.close()
    }
  })
})

describe('route templates of requests (RouteLabels)', () => {
  const labels = new RouteLabels()
  labels.learn([
    { method: 'GET', path: '/api/dashboards/:id' },
    { method: 'GET', path: '/api/dashboards/all' },
    { method: 'PUT', path: '/api/dashboards/:id' },
    { method: 'GET', path: '/api/users/:id/group/:gid' },
    { method: 'GET', path: '/api/users/preferences' },
    { method: 'WS', path: '/api/ws/search' },
    { method: 'ALL', path: '/files/*' },
  ])

  test('a literal route wins over a template, a template over a wildcard; HEAD is served by GET, an upgrade by WS', () => {
    expect(labels.of('GET', 'http://h/api/dashboards/all')).toBe('/api/dashboards/all')
    expect(labels.of('GET', 'http://h/api/dashboards/17?x=1')).toBe('/api/dashboards/:id')
    expect(labels.of('PUT', 'http://h/api/dashboards/17')).toBe('/api/dashboards/:id')
    expect(labels.of('HEAD', 'http://h/api/dashboards/17')).toBe('/api/dashboards/:id')
    expect(labels.of('GET', 'http://h/api/users/3/group/4')).toBe('/api/users/:id/group/:gid')
    expect(labels.of('GET', 'http://h/api/users/preferences/')).toBe('/api/users/preferences')
    expect(labels.of('GET', 'http://h/api/ws/search')).toBe('/api/ws/search')
    expect(labels.of('POST', 'http://h/files/a/b')).toBe('/files/*')
  })

  test('anything else is the unmatched route, also a path only the URL of an HTTP/1.0 request gives', () => {
    expect(labels.of('DELETE', 'http://h/api/dashboards/17')).toBe(UNMATCHED_ROUTE)
    expect(labels.of('GET', 'http://h/api/dashboards/17/x')).toBe(UNMATCHED_ROUTE)
    expect(labels.of('GET', 'http://h/api/dashboards/')).toBe(UNMATCHED_ROUTE)
    expect(labels.of('GET', '/api/dashboards/17')).toBe('/api/dashboards/:id')
  })
})
