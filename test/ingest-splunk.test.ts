// Splunk HTTP Event Collector (plugins/ingest/splunk.ts) with Splunk's own JavaScript logger (splunk-logging, batching)
// for /event, curl for /raw and the health check, and bad input over plain HTTP: each sends, then a search finds
// exactly what was sent (count, time, tag, SRC, bytes), or the refusal answered in HEC's codes and stored nothing.
import { afterEach, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
// @ts-expect-error splunk-logging ships no types
import { Logger as SplunkLogger } from 'splunk-logging'
import { type Config, ConfigError, loadConfig } from '../server/runtime/config'
import { PUBLIC_ROUTES } from '../server/rules/permissions'
import { type TestServer, createTestServer } from './helpers'
import { parseHecRaw } from '../server/ingest/hec'
import { apiRoutes } from './routes'
import { byData, entryCount, search } from './ingested'

const servers: TestServer[] = []
const dirs: string[] = []
afterEach(async () => {
  for (const s of servers.splice(0)) {
    await s.app.stop(true)
    await s.close()
  }
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

/** A listening test server, a user and an API token of theirs holding `capabilities`. */
async function world(config: Partial<Config> = {}, capabilities = ['Ingest']) {
  const s = await createTestServer(config)
  servers.push(s)
  s.app.listen({ hostname: '127.0.0.1', port: 0 })
  const u = await s.createUser()
  const res = await s.call('POST', '/api/tokens', { jwt: u.jwt, json: { name: 'hec', capabilities } })
  expect(res.status).toBe(200)
  const origin = `http://127.0.0.1:${s.app.server!.port}`
  return { s, u, token: res.body.token as string, origin, base: `${origin}/api/ingest/splunk/services/collector` }
}

const T0 = Date.parse('2026-03-01T12:00:00.123Z')

async function curl(args: string[]): Promise<{ status: number; body: string }> {
  const proc = Bun.spawn(['curl', '-sS', '-w', '\n%{http_code}', ...args], { stdout: 'pipe', stderr: 'pipe' })
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  if (code !== 0) throw new Error(`curl failed (${code}): ${err}`)
  const cut = out.lastIndexOf('\n')
  return { status: Number(out.slice(cut + 1)), body: out.slice(0, cut) }
}

describe('splunk-logging, Splunk\'s JavaScript logger, batching 25 events a request', () => {
  test('200 events with their time, host, sourcetype and index: a search finds each as sent', async () => {
    const { s, u, token, base } = await world()
    const logger = new SplunkLogger({ token, url: base, path: '/api/ingest/splunk/services/collector/event/1.0', maxBatchCount: 25 })
    const answers: Promise<{ status: number; body: unknown }>[] = []
    const events = Array.from({ length: 200 }, (_, i) => {
      const metadata: Record<string, unknown> = { time: T0 + i * 1000, source: 'test' }
      // host: an IP address becomes SRC, a name does not; sourcetype wins over index, index over the default tag
      metadata.host = i % 2 === 0 ? `10.0.0.${i % 250}` : 'web-01'
      if (i % 4 === 0) metadata.sourcetype = 'nginx:access'
      if (i % 4 <= 1) metadata.index = 'main'
      return { message: i % 5 === 0 ? { text: `object event ${i}`, n: i } : `string event ${i}`, metadata }
    })
    for (const [i, e] of events.entries()) {
      if ((i + 1) % 25 === 0)
        answers.push(new Promise((resolve, reject) => logger.send(e, (err: unknown, resp: { statusCode: number }, body: unknown) => (err ? reject(err) : resolve({ status: resp.statusCode, body })))))
      else logger.send(e)
    }
    const results = await Promise.all(answers)
    expect(results.length).toBe(8)
    for (const r of results) expect(r).toEqual({ status: 200, body: { text: 'Success', code: 0 } })

    const expected = events
      .map((e, i) => ({
        ts: T0 + i * 1000,
        tag: i % 4 === 0 ? 'nginx_access' : i % 4 === 1 ? 'main' : 'hec',
        src: i % 2 === 0 ? `10.0.0.${i % 250}` : '127.0.0.1',
        // splunk-logging's default event: {message, severity}
        data: JSON.stringify({ message: e.message, severity: 'info' }),
      }))
      .sort(byData)
    expect((await search(s, u.jwt)).sort(byData)).toEqual(expected)
    const bytes = expected.reduce((n, e) => n + Buffer.byteLength(e.data), 0)
    const metrics = (await s.call('GET', '/metrics')).text
    expect(metrics).toContain('quarry_ingest_entries_total{listener="http",protocol="hec"} 200')
    expect(metrics).toContain(`quarry_ingest_bytes_total{listener="http",protocol="hec"} ${bytes}`)
  })
})

describe('curl: raw lines and the health check', () => {
  test('/raw: one entry per line (CRLF and LF, empty lines skipped), its time from the line, tag and host from the query, gzip too', async () => {
    const { s, u, token, base } = await world()
    const dir = mkdtempSync(join(tmpdir(), 'quarry-hec-'))
    dirs.push(dir)
    const lines = ['127.0.0.1 - - [01/Mar/2026:12:00:00 +0000] "GET / HTTP/1.1" 200 612', 'second line, ünïcode', '', 'third line']
    writeFileSync(join(dir, 'plain.log'), `${lines[0]}\r\n${lines[1]}\n${lines[2]}\n${lines[3]}`)
    writeFileSync(join(dir, 'zipped.log.gz'), gzipSync('zipped one\nzipped two\n'))
    const plain = await curl(['-H', `Authorization: Splunk ${token}`, '-H', 'X-Splunk-Request-Channel: 0aeeac95-ac74-4aa9-b30d-6c4c0ac581ba', '--data-binary', `@${join(dir, 'plain.log')}`, `${base}/raw?sourcetype=nginx&host=192.0.2.7`])
    expect(plain.status).toBe(200)
    expect(JSON.parse(plain.body)).toEqual({ text: 'Success', code: 0 })
    const zipped = await curl(['-H', `Authorization: Splunk ${token}`, '-H', 'Content-Encoding: gzip', '--data-binary', `@${join(dir, 'zipped.log.gz')}`, `${base}/raw/1.0?index=idx&host=not-an-ip&channel=abc`])
    expect(zipped.status).toBe(200)
    const now = s.clock.now()
    expect((await search(s, u.jwt)).sort(byData)).toEqual(
      [
        // the line's own time, read as the lines route reads it (server/ingest/timestamps.ts); the others have none
        { ts: Date.parse('2026-03-01T12:00:00Z'), tag: 'nginx', src: '192.0.2.7', data: lines[0]! },
        { ts: now, tag: 'nginx', src: '192.0.2.7', data: lines[1]! },
        { ts: now, tag: 'nginx', src: '192.0.2.7', data: lines[3]! },
        { ts: now, tag: 'idx', src: '127.0.0.1', data: 'zipped one' },
        { ts: now, tag: 'idx', src: '127.0.0.1', data: 'zipped two' },
      ].sort(byData),
    )
    expect((await s.call('GET', '/metrics')).text).toContain('quarry_ingest_entries_total{listener="http",protocol="hec-raw"} 5')
  })

  test('/raw takes each line\'s time from timeOf (the app gives it server/ingest/timestamps.ts), else the time of receipt', () => {
    const seen: string[] = []
    // a stand-in finder: a leading epoch in seconds
    const timeOf = (line: Uint8Array, receivedAt: number) => {
      seen.push(`${Buffer.from(line)}@${receivedAt}`)
      const m = /^(\d{10}) /.exec(Buffer.from(line).toString())
      return m ? Number(m[1]) * 1000 : undefined
    }
    const body = new TextEncoder().encode('1772366400 first\r\nno time here\n\n1772366460 third')
    const entries = parseHecRaw(body, { defaultTag: 'hec', now: 5000, src: '192.0.2.1', maxEvents: 10, timeOf })
    expect(entries.map((e) => [Buffer.from(e.data).toString(), e.ts, e.tag, e.src])).toEqual([
      ['1772366400 first', 1772366400000, 'hec', '192.0.2.1'],
      ['no time here', 5000, 'hec', '192.0.2.1'],
      ['1772366460 third', 1772366460000, 'hec', '192.0.2.1'],
    ])
    expect(seen).toEqual(['1772366400 first@5000', 'no time here@5000', '1772366460 third@5000'])
  })

  test('health: 200 {"text":"HEC is healthy","code":17} without a credential, and nothing else', async () => {
    const { base } = await world()
    for (const path of ['/health', '/health/1.0']) {
      const res = await curl(['-i', `${base}${path}`])
      expect(res.status).toBe(200)
      const [head, body] = res.body.split('\r\n\r\n')
      expect(JSON.parse(body!)).toEqual({ text: 'HEC is healthy', code: 17 })
      expect(head).not.toMatch(/x-quarry|server: quarry/i)
    }
  })
})

describe('bad input: HEC\'s codes, and what Splunk stores', () => {
  const post = (base: string, path: string, body: string | Uint8Array, headers: Record<string, string>) => fetch(`${base}${path}`, { method: 'POST', body, headers })

  async function answered(res: Response, status: number, body: Record<string, unknown>) {
    expect({ status: res.status, body: await res.json() }).toEqual({ status, body })
  }

  test('a bad event stops the request there, as in Splunk: the events before it are stored, its number is answered', async () => {
    const { s, u, token, base } = await world()
    const auth = { authorization: `Splunk ${token}` }
    const good = (n: number) => JSON.stringify({ event: `good ${n}`, time: 1772366400 + n, sourcetype: 'st' })
    await answered(await post(base, '/event', `${good(0)}\n${good(1)} {"event": "x", "time": "noon"} ${good(3)}`, auth), 400, { text: 'Invalid data format', code: 6, 'invalid-event-number': 2 })
    await answered(await post(base, '/event', `${good(4)}{"time": 1}`, auth), 400, { text: 'Event field is required', code: 12, 'invalid-event-number': 1 })
    await answered(await post(base, '/event', `{"event": "  "}${good(5)}`, auth), 400, { text: 'Event field cannot be blank', code: 13, 'invalid-event-number': 0 })
    await answered(await post(base, '/', `${good(6)}["an array"]${good(7)}`, auth), 400, { text: 'Invalid data format', code: 6, 'invalid-event-number': 1 })
    await answered(await post(base, '/event', `${good(8)}{"event": "cut off`, auth), 400, { text: 'Invalid data format', code: 6, 'invalid-event-number': 1 })
    expect((await search(s, u.jwt)).map((e) => [e.data, e.ts]).sort()).toEqual(
      [0, 1, 4, 6, 8].map((n) => [`good ${n}`, (1772366400 + n) * 1000]).sort(),
    )
    expect((await s.call('GET', '/metrics')).text).toContain('quarry_ingest_refusals_total{listener="http",protocol="hec",reason="invalid"} 5')
  })

  test('events with escaped quotes, braces in strings and UTF-8 are stored as sent', async () => {
    const { s, u, token, base } = await world()
    const events = ['a "quoted" {brace} [bracket] \\ back', 'ünïcödé ✓', '}{']
    const body = events.map((event) => JSON.stringify({ event })).join('\r\n') + JSON.stringify({ event: { nested: '"}' } })
    await answered(await post(base, '/event', body, { authorization: `Splunk ${token}` }), 200, { text: 'Success', code: 0 })
    expect((await search(s, u.jwt)).map((e) => e.data).sort()).toEqual([...events, '{"nested":"\\"}"}'].sort())
  })

  test('no data 5; too many events, a body too large and a gzip bomb 413; bad gzip 400: nothing stored', async () => {
    const { s, token, base } = await world({ hecMaxEvents: 3, maxBodyBytes: 64 * 1024, ingestMaxDecompressedBytes: 256 * 1024 })
    const auth = { authorization: `Splunk ${token}` }
    await answered(await post(base, '/event', '', auth), 400, { text: 'No data', code: 5 })
    await answered(await post(base, '/raw', '\n\r\n', auth), 400, { text: 'No data', code: 5 })
    const four = '{"event":"e"}'.repeat(4)
    const tooMany = await post(base, '/event', four, auth)
    expect(tooMany.status).toBe(413)
    expect(((await tooMany.json()) as { text: string }).text).toContain('QUARRY_HEC_MAX_EVENTS')
    expect((await post(base, '/raw', 'a\nb\nc\nd\n', auth)).status).toBe(413)
    const large = await post(base, '/raw', 'x'.repeat(65 * 1024), auth)
    expect(large.status).toBe(413)
    expect(((await large.json()) as { text: string; code: number }).text).toContain('QUARRY_MAX_BODY_SIZE')
    const bomb = gzipSync(`{"event":"${'a'.repeat(4 * 1024 * 1024)}"}`)
    const bombed = await post(base, '/event', bomb, { ...auth, 'content-encoding': 'gzip' })
    expect(bombed.status).toBe(413)
    expect(((await bombed.json()) as { text: string }).text).toContain('QUARRY_INGEST_MAX_DECOMPRESSED')
    await answered(await post(base, '/event', 'not gzip', { ...auth, 'content-encoding': 'gzip' }), 400, { text: 'the body is not valid gzip (Content-Encoding: gzip)', code: 6 })
    expect(await entryCount(s)).toBe(0)
    await answered(await post(base, '/event', '{"event":"e"}'.repeat(3), auth), 200, { text: 'Success', code: 0 })
    expect(await entryCount(s)).toBe(3)
  })

  test('token required 2 (401), invalid token 4 (403): a wrong one, one without Ingest, a locked owner\'s; ?token= is not taken', async () => {
    const { s, token, base } = await world({}, ['AttachSearch'])
    const event = '{"event":"e"}'
    await answered(await post(base, '/event', event, {}), 401, { text: 'Token is required', code: 2 })
    await answered(await post(base, `/event?token=${token}`, event, {}), 401, { text: 'Token is required', code: 2 })
    await answered(await post(base, '/event', event, { authorization: `Splunk ${token}x` }), 403, { text: 'Invalid token', code: 4 })
    const denied = await post(base, '/raw', 'line', { authorization: `Splunk ${token}` })
    expect(denied.status).toBe(403)
    const body = (await denied.json()) as { text: string; code: number }
    expect(body.code).toBe(4)
    expect(body.text).toContain('Ingest')
    const locked = await world()
    expect((await locked.s.call('PUT', `/api/users/${locked.u.uid}/lock`, { jwt: locked.s.adminJwt })).status).toBe(200)
    await answered(await post(locked.base, '/event', event, { authorization: `Splunk ${locked.token}` }), 403, { text: 'Invalid token', code: 4 })
    expect(await entryCount(s)).toBe(0)
    expect(await entryCount(locked.s)).toBe(0)
    const metrics = (await s.call('GET', '/metrics')).text
    expect(metrics).toContain('quarry_ingest_refusals_total{listener="http",protocol="hec",reason="auth"} 3')
    expect(metrics).toContain('quarry_ingest_refusals_total{listener="http",protocol="hec-raw",reason="auth"} 1')
  })

  test('past the ingest rate: 429 code 9 with Retry-After, nothing of the request stored', async () => {
    const { s, u, token, base } = await world({ ingestRateBytes: 64 })
    const auth = { authorization: `Splunk ${token}` }
    // The first request is admitted whole and leaves the user's bucket about 30 s in debt (server/ingest/rate.ts).
    await answered(await post(base, '/event', JSON.stringify({ event: 'z'.repeat(2000) }), auth), 200, { text: 'Success', code: 0 })
    const res = await post(base, '/event', '{"event":"a"}{"event":"b"}', auth)
    expect(res.status).toBe(429)
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0)
    const body = (await res.json()) as { text: string; code: number }
    expect(body.code).toBe(9)
    expect(body.text).toContain('Server is busy')
    expect((await search(s, u.jwt)).map((e) => e.data)).toEqual(['z'.repeat(2000)])
  })

  test('through the app: the answers are the ones the API document describes', async () => {
    const { s, token } = await world()
    const headers = { authorization: `Splunk ${token}` }
    const path = '/api/ingest/splunk/services/collector'
    expect((await s.call('POST', `${path}/event`, { headers, body: '{"event":{"a":1}}' })).body).toEqual({ text: 'Success', code: 0 })
    expect((await s.call('POST', path, { headers, body: '{"event":"b"}' })).body).toEqual({ text: 'Success', code: 0 })
    expect((await s.call('POST', `${path}/raw`, { headers, body: 'c' })).body).toEqual({ text: 'Success', code: 0 })
    expect((await s.call('POST', `${path}/event`, { headers, body: '{"x":1}' })).status).toBe(400)
    expect((await s.call('POST', `${path}/event`, { body: '{"event":"b"}' })).status).toBe(401)
    expect((await s.call('POST', `${path}/event/2.0`, { headers, body: '{"event":"b"}' })).status).toBe(400)
    expect((await s.call('GET', `${path}/health`)).body).toEqual({ text: 'HEC is healthy', code: 17 })
    expect(await entryCount(s)).toBe(3)
  })
})

describe('every caller (the route × caller matrix of test/security.test.ts, in HEC\'s codes)', () => {
  test('each protected route under /api/ingest/splunk: 401 code 2 without a credential, 403 code 4 with a bad one or without Ingest, 200 with it', async () => {
    const { s, u, token } = await world()
    const routes = apiRoutes(s.app).filter((r) => r.path.startsWith('/api/ingest/splunk') && !PUBLIC_ROUTES.has(r.key))
    expect(routes.map((r) => r.key).sort()).toEqual([
      'POST /api/ingest/splunk/services/collector',
      'POST /api/ingest/splunk/services/collector/event',
      'POST /api/ingest/splunk/services/collector/event/:version',
      'POST /api/ingest/splunk/services/collector/raw',
      'POST /api/ingest/splunk/services/collector/raw/:version',
    ])
    const makeToken = async (capabilities: string[], expiresAt?: string) => {
      const res = await s.call('POST', '/api/tokens', { jwt: u.jwt, json: { name: 'matrix', capabilities, expiresAt } })
      expect(res.status).toBe(200)
      return res.body.token as string
    }
    const without = await makeToken(['KitBuild'])
    const expiring = await makeToken(['Ingest'], new Date(s.clock.now() + 1000).toISOString())
    s.clock.advance(1000)
    const other = await s.createUser()
    const lockedOwner = await s.createUser()
    const lockedToken = (await s.call('POST', '/api/tokens', { jwt: lockedOwner.jwt, json: { name: 'm', capabilities: ['Ingest'] } })).body.token as string
    expect((await s.call('PUT', `/api/users/${lockedOwner.uid}/lock`, { jwt: s.adminJwt })).status).toBe(200)
    const callers: Record<string, [Record<string, string>, number]> = {
      anonymous: [{}, 401],
      garbageJwt: [{ authorization: 'Bearer not.a.jwt' }, 403],
      garbageToken: [{ 'Service-Token': 'not-a-token' }, 403],
      tokenWithPermission: [{ authorization: `Splunk ${token}` }, 200],
      tokenAsServiceToken: [{ 'Service-Token': token }, 200],
      tokenWithoutPermission: [{ authorization: `Splunk ${without}` }, 403],
      expiredToken: [{ authorization: `Splunk ${expiring}` }, 403],
      tokenOfLockedOwner: [{ authorization: `Splunk ${lockedToken}` }, 403],
      user: [{ authorization: `Bearer ${other.jwt}` }, 200],
      admin: [{ authorization: `Bearer ${s.adminJwt}` }, 200],
    }
    for (const r of routes) {
      const outcome: Record<string, number> = {}
      const expected: Record<string, number> = {}
      for (const [name, [headers, want]] of Object.entries(callers)) {
        const res = await s.call(r.method, r.path.replace(':version', '1.0'), { headers, body: '{"event":"matrix"}' })
        outcome[name] = res.status
        expected[name] = want
        expect(res.body.code).toBe(want === 200 ? 0 : want === 401 ? 2 : 4)
      }
      expect({ route: r.key, outcome }).toEqual({ route: r.key, outcome: expected })
    }
    expect(await entryCount(s)).toBe(5 * 4)
  })
})

test('configuration: the defaults, and a start refused with one clear line for each bad value', () => {
  const { config } = loadConfig({})
  expect([config.hecDefaultTag, config.hecMaxEvents, config.esMaxDocs, config.ingestMaxDecompressedBytes]).toEqual(['hec', 100_000, 100_000, 16 * 1024 * 1024])
  expect(loadConfig({ QUARRY_HEC_DEFAULT_TAG: 'splunk.events', QUARRY_INGEST_MAX_DECOMPRESSED: '1MiB' }).config).toMatchObject({ hecDefaultTag: 'splunk.events', ingestMaxDecompressedBytes: 1024 * 1024 })
  for (const [name, value] of [['QUARRY_HEC_DEFAULT_TAG', 'not a tag'], ['QUARRY_HEC_MAX_EVENTS', '0'], ['QUARRY_ES_MAX_DOCS', 'many'], ['QUARRY_INGEST_MAX_DECOMPRESSED', '-1']]) {
    expect(() => loadConfig({ [name!]: value })).toThrow(ConfigError)
    expect(() => loadConfig({ [name!]: value })).toThrow(name)
  }
})
