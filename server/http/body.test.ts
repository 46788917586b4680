// Request bodies through the real app (docs/security.md, "Bodies"): the caller is checked before a byte of the body is
// read, multipart is refused outside the upload routes, and no body is read past its route's limit. Every body here is
// a stream that counts what the server pulled from it, so "unread" is measured, not assumed.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type CallResult, createTestServer, expectError, storeSnapshotAsync, type TestServer } from '../../test/helpers'
import { apiRoutes } from '../../test/routes'
import { PUBLIC_BODY_LIMIT } from './body'

const CHUNK = 64 * 1024
const LIMIT = 256 * 1024

/**
 * A body of `total` bytes (endless when undefined) made as it is pulled, 64 KiB at a time. `pulled()` says how much
 * the server took; the stream buffers nothing ahead (highWaterMark 0), so that is exactly what was asked for.
 */
function countingBody(total?: number, head = '') {
  let pulled = 0
  const first = new TextEncoder().encode(head)
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(c) {
        if (pulled === 0 && first.byteLength > 0) {
          pulled += first.byteLength
          return c.enqueue(first)
        }
        if (total !== undefined && pulled >= total) return c.close()
        const n = total === undefined ? CHUNK : Math.min(CHUNK, total - pulled)
        pulled += n
        c.enqueue(new Uint8Array(n).fill(32))
      },
    },
    { highWaterMark: 0 },
  )
  return { stream, pulled: () => pulled }
}

/** Sends a request whose body is `body.stream` and reads the answer, failing (rather than hanging) after 10 s. */
async function send(s: TestServer, method: string, path: string, headers: Record<string, string>, body: ReturnType<typeof countingBody>): Promise<CallResult> {
  const req = new Request(`http://localhost${path}`, { method, headers, body: body.stream })
  let timer: ReturnType<typeof setTimeout> | undefined
  const res = await Promise.race([
    s.app.handle(req),
    new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${method} ${path}: no answer within 10 s (the body was read to its end?)`)), 10_000))),
  ]).finally(() => clearTimeout(timer))
  const text = await res.text()
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {}
  return { status: res.status, headers: res.headers, text, body: parsed }
}

const MULTIPART = 'multipart/form-data; boundary=xyz'
const FORM_HEAD = '--xyz\r\nContent-Disposition: form-data; name="file"; filename="f"\r\n\r\n'

let s: TestServer
let dashboardsOnly: string
beforeAll(async () => {
  s = await createTestServer({ maxBodyBytes: LIMIT, maxFileBytes: LIMIT, maxResourceBytes: LIMIT, maxImportBytes: LIMIT })
  const made = await s.call('POST', '/api/tokens', { jwt: s.adminJwt, json: { name: 'stats only', capabilities: ['Stats'] } })
  dashboardsOnly = made.body.token
})
afterAll(() => s.close())

/** The shippers' protocol routes: their refusals keep their protocol's shape, not {"Error"} (docs/api.md "Ingest"). */
const PROTOCOL_ROUTE = /^\/api\/ingest\/(elastic|splunk)(\/|$)/

// WebSocket routes (method WS) are reached by the GET of an upgrade, which has no body.
const writeRoutes = () => apiRoutes(s.app).filter((r) => r.method !== 'GET' && r.method !== 'WS' && r.path.startsWith('/api'))

describe('the caller is checked before the body is read', () => {
  test('every route that needs a caller answers an anonymous request 401 without pulling a byte of its endless body', async () => {
    const routes = writeRoutes().filter((r) => r.permission !== undefined)
    expect(routes.length).toBeGreaterThan(40)
    for (const r of routes) {
      const path = r.path.replace(/:(\w+)/g, '1')
      for (const type of ['application/json', MULTIPART]) {
        const body = countingBody()
        const before = await storeSnapshotAsync(s)
        const res = await send(s, r.method, path, { 'content-type': type }, body)
        expect({ route: r.key, type, status: res.status, pulled: body.pulled() }).toEqual({ route: r.key, type, status: 401, pulled: 0 })
        // the shippers' protocol routes refuse in their protocol's shape (test/ingest-elastic.test.ts, -splunk)
        if (!PROTOCOL_ROUTE.test(r.path)) expectError(res, 401)
        expect(await storeSnapshotAsync(s)).toEqual(before)
      }
    }
  })

  test('a declared Content-Length far over every limit does not get past the missing credentials either', async () => {
    const body = countingBody()
    const res = await send(s, 'POST', '/api/dashboards', { 'content-type': 'application/json', 'content-length': String(64 * 1024 ** 2) }, body)
    expectError(res, 401)
    expect(body.pulled()).toBe(0)
  })

  test('invalid credentials and a token without the route\'s permission are refused unread too (401, 403)', async () => {
    const bad = countingBody()
    expectError(await send(s, 'POST', '/api/dashboards', { 'content-type': 'application/json', authorization: 'Bearer x.y.z' }, bad), 401)
    expect(bad.pulled()).toBe(0)
    const token = countingBody()
    const before = await storeSnapshotAsync(s)
    const res = await send(s, 'POST', '/api/dashboards', { 'content-type': 'application/json', 'service-token': dashboardsOnly }, token)
    expectError(res, 403, { Cap: 'DashboardWrite' })
    expect(token.pulled()).toBe(0)
    expect(await storeSnapshotAsync(s)).toEqual(before)
    // the same token on an upload route it lacks: refused before the upload is streamed
    const upload = countingBody(undefined, FORM_HEAD)
    expectError(await send(s, 'POST', '/api/files', { 'content-type': MULTIPART, 'service-token': dashboardsOnly }, upload), 403, { Cap: 'UserFileWrite' })
    expect(upload.pulled()).toBe(0)
  })

  test('a permitted caller\'s body is read as before, and the check runs once (one session lookup)', async () => {
    const sessions = s.store.sessions
    const lookup = sessions.getWithUser
    let lookups = 0
    sessions.getWithUser = (id) => (lookups++, lookup.call(sessions, id))
    let res
    try {
      res = await s.call('POST', '/api/dashboards', { jwt: s.adminJwt, json: { Name: 'read', Data: {} } })
    } finally {
      sessions.getWithUser = lookup
    }
    expect(res.status).toBe(200)
    expect(lookups).toBe(1)
    const list = await s.call('GET', '/api/dashboards', { jwt: s.adminJwt })
    expect(list.body.map((d: { Name: string }) => d.Name)).toContain('read')
  })
})

describe('multipart only where a route streams uploads', () => {
  test('every route without an upload parser refuses a multipart body with 415, unread, for a permitted caller', async () => {
    // The shippers' protocol routes read their body as bytes in their own format (never as multipart), and HEAD has none.
    const routes = writeRoutes().filter((r) => !r.upload && !r.ownBody && r.method !== 'HEAD')
    expect(writeRoutes().some((r) => r.ownBody)).toBe(true)
    expect(routes.some((r) => r.key === 'POST /api/login')).toBe(true)
    for (const r of routes) {
      const path = r.path.replace(/:(\w+)/g, '1')
      const body = countingBody(undefined, FORM_HEAD)
      const before = await storeSnapshotAsync(s)
      const res = await send(s, r.method, path, { 'content-type': MULTIPART, authorization: `Bearer ${s.adminJwt}` }, body)
      expect({ route: r.key, status: res.status, pulled: body.pulled() }).toEqual({ route: r.key, status: 415, pulled: 0 })
      expectError(res, 415)
      expect(await storeSnapshotAsync(s)).toEqual(before)
    }
  })

  test('the upload routes still take multipart, and bound the whole form (413 past the limit, chunked)', async () => {
    const form = `${FORM_HEAD}contents\r\n--xyz--\r\n`
    const created = await s.call('POST', '/api/files', { jwt: s.adminJwt, body: form, headers: { 'content-type': MULTIPART } })
    expect(created.status).toBe(200)
    expect(created.body.Size).toBe(8)
    // a dropped part that never ends: refused once the body passes the limit and its framing room
    const junk = countingBody(undefined, form.replace('--xyz--', '--xyz\r\nContent-Disposition: form-data; name="junk"; filename="j"\r\n\r\n'))
    const before = await storeSnapshotAsync(s)
    expectError(await send(s, 'PUT', `/api/files/${created.body.GUID}`, { 'content-type': MULTIPART, authorization: `Bearer ${s.adminJwt}` }, junk), 413)
    expect(junk.pulled()).toBeLessThan(LIMIT + 64 * 1024 + 4 * CHUNK)
    expect(await storeSnapshotAsync(s)).toEqual(before)
  })
})

describe('no body is read past its route\'s limit', () => {
  test('JSON over the limit on an authenticated route: a declared length is refused unread, a chunked body once past it', async () => {
    const before = await storeSnapshotAsync(s)
    const declared = countingBody(LIMIT + 1)
    expectError(await send(s, 'POST', '/api/dashboards', { 'content-type': 'application/json', 'content-length': String(LIMIT + 1), authorization: `Bearer ${s.adminJwt}` }, declared), 413)
    expect(declared.pulled()).toBe(0)
    for (const type of ['application/json', 'text/plain', 'application/octet-stream', 'application/x-www-form-urlencoded', '']) {
      const chunked = countingBody()
      const res = await send(s, 'PUT', '/api/users/1/preferences', { ...(type ? { 'content-type': type } : {}), authorization: `Bearer ${s.adminJwt}` }, chunked)
      expectError(res, 413)
      expect(chunked.pulled()).toBeLessThanOrEqual(LIMIT + CHUNK)
    }
    expect(await storeSnapshotAsync(s)).toEqual(before)
  })

  test(`the login, which anyone may call, reads ${PUBLIC_BODY_LIMIT / 1024} KiB at most`, async () => {
    const body = countingBody()
    const res = await send(s, 'POST', '/api/login', { 'content-type': 'application/json' }, body)
    expectError(res, 413)
    expect(body.pulled()).toBeLessThanOrEqual(PUBLIC_BODY_LIMIT + CHUNK)
    expect((await s.call('POST', '/api/login', { form: { User: 'admin', Pass: s.adminPassword } })).status).toBe(200)
  })
})
