// Elasticsearch bulk ingest (plugins/ingest/elastic.ts) with the official JavaScript client (@elastic/elasticsearch:
// its bulk helper and a plain client.bulk, its product check on every answer), and bad input over plain HTTP: each
// sends, then a search finds exactly what was sent (count, time, tag, SRC, bytes), or the refusal stored nothing.
import { afterEach, describe, expect, test } from 'bun:test'
import { gzipSync } from 'node:zlib'
import { Client, HttpConnection } from '@elastic/elasticsearch'
import type { Config } from '../server/runtime/config'
import { ES_VERSION } from '../plugins/ingest/elastic'
import { documentTime } from '../server/ingest/elastic'
import { PUBLIC_ROUTES } from '../server/rules/permissions'
import { type TestServer, createTestServer } from './helpers'
import { apiRoutes } from './routes'
import { byData, entryCount, search } from './ingested'

const servers: TestServer[] = []
afterEach(async () => {
  for (const s of servers.splice(0)) {
    await s.app.stop(true)
    await s.close()
  }
})

/** A listening test server, a user and an API token of theirs holding `capabilities`. */
async function world(config: Partial<Config> = {}, capabilities = ['Ingest']) {
  const s = await createTestServer(config)
  servers.push(s)
  s.app.listen({ hostname: '127.0.0.1', port: 0 })
  const u = await s.createUser()
  const res = await s.call('POST', '/api/tokens', { jwt: u.jwt, json: { name: 'es', capabilities } })
  expect(res.status).toBe(200)
  const base = `http://127.0.0.1:${s.app.server!.port}/api/ingest/elastic`
  return { s, u, token: res.body.token as string, base }
}

const T0 = Date.parse('2026-03-01T12:00:00Z')

describe('the Elasticsearch client', () => {
  test('info() passes the product check and reads the 8.x version; ping() is true', async () => {
    const { base, token } = await world()
    const client = new Client({ node: base, Connection: HttpConnection, auth: { username: 'shipper', password: token } })
    const info = await client.info()
    expect(info.version.number).toBe(ES_VERSION)
    expect(info.version.number.startsWith('8.')).toBe(true)
    expect(info.tagline).toBe('You Know, for Search')
    expect(await client.ping()).toBe(true)
    await client.close()
  })

  test('the bulk helper sends 3,000 documents to three indexes; a search finds each with its index, time, SRC and bytes', async () => {
    const { s, u, base, token } = await world()
    const client = new Client({ node: base, Connection: HttpConnection, auth: { bearer: token } })
    const docs = Array.from({ length: 3000 }, (_, i) => {
      const doc: Record<string, unknown> = { message: `line ${i} ${'x'.repeat(i % 50)}`, n: i, nested: { ok: i % 2 === 0 } }
      // three spellings of @timestamp: RFC 3339 with an offset, epoch milliseconds, none (time of receipt)
      if (i % 3 === 0) doc['@timestamp'] = new Date(T0 + i * 1000).toISOString().replace('Z', '+00:00')
      else if (i % 3 === 1) doc['@timestamp'] = T0 + i * 1000
      return doc
    })
    const indexes = ['web-logs', 'App.Events', 'db']
    const before = s.clock.now()
    const result = await client.helpers.bulk({
      datasource: docs,
      onDocument: (doc) => ({ index: { _index: indexes[(doc as { n: number }).n % 3]! } }),
      flushBytes: 64 * 1024,
      concurrency: 2,
    })
    expect(result.total).toBe(3000)
    expect(result.successful).toBe(3000)
    expect(result.failed).toBe(0)
    await client.close()

    const found = (await search(s, u.jwt)).sort(byData)
    const expected = docs
      .map((doc, i) => ({
        ts: i % 3 === 2 ? before : T0 + i * 1000,
        tag: indexes[i % 3]!,
        src: '127.0.0.1',
        data: JSON.stringify(doc),
      }))
      .sort(byData)
    expect(found.length).toBe(3000)
    // time of receipt: the test server's clock, which does not move during the test
    expect(found).toEqual(expected)
    const bytes = expected.reduce((n, e) => n + Buffer.byteLength(e.data), 0)
    const metrics = (await s.call('GET', '/metrics')).text
    expect(metrics).toContain('quarry_ingest_entries_total{listener="http",protocol="elastic"} 3000')
    expect(metrics).toContain(`quarry_ingest_bytes_total{listener="http",protocol="elastic"} ${bytes}`)
  })

  test('client.bulk with bad documents among good ones: each bad one 400 in its item, the good ones stored, and only them', async () => {
    const { s, u, base, token } = await world()
    const client = new Client({ node: base, Connection: HttpConnection, auth: { username: 'anyone', password: token } })
    const answer = await client.bulk({
      index: 'from-path',
      operations: [
        { index: {} },
        { msg: 'good one', '@timestamp': '2026-03-01T12:00:01.250Z' },
        { create: { _index: 'other', _id: 'mine' } },
        { msg: 'good two', '@timestamp': '2026-03-01' },
        { index: { _index: 'x' } },
        '["an array, not an object"]',
        { index: { _index: 'x' } },
        '{"truncated": ',
        { index: { _index: 'x' } },
        { msg: 'bad time', '@timestamp': 'yesterday' },
        { delete: { _index: 'x', _id: '1' } },
        { update: { _index: 'x', _id: '1' } },
        { doc: { a: 1 } },
        { index: { _index: '***' } },
        { msg: 'index made a tag' },
      ],
    })
    expect(answer.errors).toBe(true)
    const statuses = answer.items.map((i) => Object.entries(i).map(([action, r]) => `${action} ${r.status}`)[0])
    expect(statuses).toEqual(['index 201', 'create 201', 'index 400', 'index 400', 'index 400', 'delete 400', 'update 400', 'index 201'])
    expect(answer.items[1]!.create!._id).toBe('mine')
    expect(answer.items[0]!.index!._index).toBe('from-path')
    for (const i of [2, 3, 4, 5, 6]) expect(Object.values(answer.items[i]!)[0]!.error?.reason).toBeTruthy()
    expect(answer.items[4]!.index!.error!.reason).toContain('@timestamp')
    await client.close()
    const found = (await search(s, u.jwt)).sort(byData)
    expect(found).toEqual(
      [
        { ts: Date.parse('2026-03-01T12:00:01.250Z'), tag: 'from-path', src: '127.0.0.1', data: '{"msg":"good one","@timestamp":"2026-03-01T12:00:01.250Z"}' },
        { ts: Date.parse('2026-03-01T00:00:00Z'), tag: 'other', src: '127.0.0.1', data: '{"msg":"good two","@timestamp":"2026-03-01"}' },
        { ts: s.clock.now(), tag: '___', src: '127.0.0.1', data: '{"msg":"index made a tag"}' },
      ].sort(byData),
    )
    expect((await s.call('GET', '/metrics')).text).toContain('quarry_ingest_refusals_total{listener="http",protocol="elastic",reason="invalid"} 5')
  })
})

describe('bad input: the refusal in Elasticsearch\'s shape, nothing stored', () => {
  const bulk = (base: string, body: string | Uint8Array, headers: Record<string, string>) =>
    fetch(`${base}/_bulk`, { method: 'POST', body, headers: { 'content-type': 'application/x-ndjson', ...headers } })

  async function refusedWhole(s: TestServer, res: Response, status: number, words: string[]) {
    expect(res.status).toBe(status)
    expect(res.headers.get('x-elastic-product')).toBe('Elasticsearch')
    const body = (await res.json()) as { error: { type: string; reason: string; root_cause: unknown[] }; status: number }
    expect(body.status).toBe(status)
    expect(body.error.root_cause.length).toBe(1)
    for (const w of words) expect(body.error.reason).toContain(w)
    expect(await entryCount(s)).toBe(0)
    return body
  }

  test('an action line that is not JSON, not an action, or without its document: 400, nothing of the request stored', async () => {
    const { s, base, token } = await world()
    const auth = { authorization: `Bearer ${token}` }
    const good = '{"index":{"_index":"a"}}\n{"m":1}\n'
    await refusedWhole(s, await bulk(base, `${good}not json\n{"m":2}\n`, auth), 400, ['line 3'])
    await refusedWhole(s, await bulk(base, `${good}{"upsert":{}}\n{"m":2}\n`, auth), 400, ['[3]'])
    await refusedWhole(s, await bulk(base, `${good}{"index":{},"create":{}}\n{"m":2}\n`, auth), 400, ['[3]'])
    await refusedWhole(s, await bulk(base, `${good}{"index":{"_index":"a"}}\n`, auth), 400, ['no document'])
    await refusedWhole(s, await bulk(base, '\n\n', auth), 400, ['no requests'])
  })

  test('UTF-8 documents are stored byte for byte; a document that is not UTF-8 is 400 in its item, the others stored', async () => {
    const { s, u, base, token } = await world()
    const good = '{"m":"ünïcödé ✓ \\" quoted"}'
    const bad = Buffer.concat([Buffer.from('{"m":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')])
    const body = Buffer.concat([Buffer.from(`{"index":{"_index":"u"}}\n${good}\n{"index":{"_index":"u"}}\n`), bad, Buffer.from('\n{"index":{"_index":"u"}}\n{"m":"after"}\n')])
    const res = await bulk(base, body, { authorization: `Bearer ${token}` })
    const answer = (await res.json()) as { items: { index: { status: number } }[] }
    expect(answer.items.map((i) => i.index.status)).toEqual([201, 400, 201])
    expect((await search(s, u.jwt)).map((e) => e.data).sort()).toEqual(['{"m":"after"}', good].sort())
  })

  test('a gzip body is inflated; a gzip bomb is cut at QUARRY_INGEST_MAX_DECOMPRESSED (413), a body past QUARRY_MAX_BODY_SIZE is 413', async () => {
    const { s, u, base, token } = await world({ ingestMaxDecompressedBytes: 1024 * 1024, maxBodyBytes: 256 * 1024 })
    const auth = { authorization: `Bearer ${token}`, 'content-encoding': 'gzip' }
    const bomb = gzipSync(`{"index":{"_index":"a"}}\n{"m":"${'a'.repeat(8 * 1024 * 1024)}"}\n`)
    expect(bomb.byteLength).toBeLessThan(256 * 1024)
    await refusedWhole(s, await bulk(base, bomb, auth), 413, ['QUARRY_INGEST_MAX_DECOMPRESSED'])
    await refusedWhole(s, await bulk(base, new Uint8Array(300 * 1024).fill(0x20), { authorization: `Bearer ${token}` }), 413, ['QUARRY_MAX_BODY_SIZE'])
    await refusedWhole(s, await bulk(base, 'not gzip at all', auth), 400, ['gzip'])
    await refusedWhole(s, await bulk(base, 'x', { ...auth, 'content-encoding': 'br' }), 415, ['br'])
    const ok = await bulk(base, gzipSync('{"index":{"_index":"zipped"}}\n{"m":"inflated"}\n'), auth)
    expect(ok.status).toBe(200)
    expect(((await ok.json()) as { errors: boolean }).errors).toBe(false)
    expect(await search(s, u.jwt)).toEqual([{ ts: s.clock.now(), tag: 'zipped', src: '127.0.0.1', data: '{"m":"inflated"}' }])
  })

  test('more actions than QUARRY_ES_MAX_DOCS: 413, nothing stored', async () => {
    const { s, base, token } = await world({ esMaxDocs: 3 })
    const body = '{"index":{"_index":"a"}}\n{"m":1}\n'.repeat(4)
    await refusedWhole(s, await bulk(base, body, { authorization: `Bearer ${token}` }), 413, ['QUARRY_ES_MAX_DOCS'])
    expect((await bulk(base, '{"index":{"_index":"a"}}\n{"m":1}\n'.repeat(3), { authorization: `Bearer ${token}` })).status).toBe(200)
    expect(await entryCount(s)).toBe(3)
  })

  test('no credential 401, a token without Ingest 403, a locked owner\'s token 401: each in Elasticsearch\'s shape, counted', async () => {
    const { s, base, token } = await world({}, ['AttachSearch'])
    const body = '{"index":{"_index":"a"}}\n{"m":1}\n'
    const none = await refusedWhole(s, await bulk(base, body, {}), 401, [])
    expect(none.error.type).toBe('security_exception')
    const denied = await refusedWhole(s, await bulk(base, body, { authorization: `Bearer ${token}` }), 403, ['Ingest'])
    expect(denied.error.type).toBe('security_exception')
    await refusedWhole(s, await fetch(base, { headers: { authorization: `Bearer ${token}` } }), 403, ['Ingest'])
    const locked = await world()
    const lock = await locked.s.call('PUT', `/api/users/${locked.u.uid}/lock`, { jwt: locked.s.adminJwt })
    expect(lock.status).toBe(200)
    await refusedWhole(locked.s, await bulk(locked.base, body, { authorization: `Splunk ${locked.token}` }), 401, [])
    expect((await s.call('GET', '/metrics')).text).toContain('quarry_ingest_refusals_total{listener="http",protocol="elastic",reason="auth"} 3')
  })

  test('past the ingest rate every good document is 429 (retry) with Retry-After, the bad one 400; nothing of that request stored', async () => {
    const { s, u, base, token } = await world({ ingestRateBytes: 64 })
    const auth = { authorization: `Bearer ${token}` }
    // The first batch is admitted whole and leaves the user's bucket about 30 s in debt (server/ingest/rate.ts).
    const first = await bulk(base, `{"index":{"_index":"a"}}\n{"m":"${'z'.repeat(2000)}"}\n`, auth)
    expect(((await first.json()) as { errors: boolean }).errors).toBe(false)
    const res = await bulk(base, '{"index":{"_index":"a"}}\n{"m":1}\n{"index":{"_index":"a"}}\n"bad"\n{"index":{"_index":"a"}}\n{"m":2}\n', auth)
    expect(res.status).toBe(200)
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0)
    const answer = (await res.json()) as { errors: boolean; items: { index: { status: number; error?: { type: string } } }[] }
    expect(answer.errors).toBe(true)
    expect(answer.items.map((i) => i.index.status)).toEqual([429, 400, 429])
    expect(answer.items[0]!.index.error!.type).toBe('es_rejected_execution_exception')
    expect((await search(s, u.jwt)).map((e) => e.data)).toEqual([`{"m":"${'z'.repeat(2000)}"}`])
    expect((await s.call('GET', '/metrics')).text).toContain('quarry_ingest_refusals_total{listener="http",protocol="elastic",reason="rate"} 1')
  })

  test('?filter_path= as Beats and Logstash send it keeps only errors and each item\'s status and error', async () => {
    const { s, token } = await world()
    const body = '{"index":{"_index":"a"}}\n{"m":1}\n{"create":{"_index":"a"}}\n"bad"\n'
    const headers = { authorization: `Bearer ${token}` }
    const beats = await s.call('POST', '/api/ingest/elastic/_bulk?filter_path=errors,items.*.error,items.*.status', { headers, body })
    expect(beats.body).toEqual({ errors: true, items: [{ index: { status: 201 } }, { create: { status: 400, error: { type: 'document_parsing_exception', reason: expect.stringContaining('not a JSON object') } } }] })
    const ids = await s.call('POST', '/api/ingest/elastic/_bulk?filter_path=took,items.*._index', { headers, body })
    expect(Object.keys(ids.body)).toEqual(['took', 'items'])
    expect(ids.body.items).toEqual([{ index: { _index: 'a' } }, { create: { _index: 'a' } }])
    // a form it does not know keeps everything
    const odd = await s.call('POST', '/api/ingest/elastic/_bulk?filter_path=-took', { headers, body })
    expect(Object.keys(odd.body)).toEqual(['took', 'errors', 'items'])
    expect(odd.body.items[0].index).toMatchObject({ _index: 'a', result: 'created', status: 201 })
    expect(await entryCount(s)).toBe(3)
  })

  test('?filter_path=items.*.<member> keeps exactly those members of the whole answer\'s items, in their order', async () => {
    const { s, token } = await world()
    const headers = { authorization: `Bearer ${token}` }
    const body = [
      '{"index":{"_index":"a","_id":"d1"}}', '{"m":1}', '{"index":{"_index":"a","_id":"d2"}}', '{"m":2}',
      '{"create":{"_index":"a","_id":"d3"}}', '"bad"', '{"create":{"_index":"b","_id":"d4"}}', '{"m":4}',
      '{"delete":{"_index":"a","_id":"d5"}}', '{"index":{"_index":"a","_id":"d6"}}', '{"m":6}', '',
    ].join('\n')
    const whole = (await s.call('POST', '/api/ingest/elastic/_bulk', { headers, body })).body as { items: Record<string, Record<string, unknown>>[] }
    const members = ['_index', '_id', '_version', 'result', '_seq_no', 'status', 'error']
    for (const kept of [['status'], ['error', 'status'], ['result', '_version'], ['_id', 'status'], ['_seq_no'], ['_index', 'result', 'status']]) {
      const got = await s.call('POST', `/api/ingest/elastic/_bulk?filter_path=${kept.map((m) => `items.*.${m}`).join(',')}`, { headers, body })
      const want = whole.items.map((item) => {
        const [action, fields] = Object.entries(item)[0]!
        return { [action]: Object.fromEntries(members.filter((m) => kept.includes(m) && m in fields).map((m) => [m, fields[m]])) }
      })
      expect({ kept, items: got.body.items }).toEqual({ kept, items: want })
      expect(JSON.stringify(got.body.items.map((i: Record<string, object>) => Object.keys(Object.values(i)[0]!)))).toBe(JSON.stringify(want.map((i) => Object.keys(Object.values(i)[0]!))))
    }
  })

  test('through the app: the answers are the ones the API document describes', async () => {
    const { s, token } = await world()
    const headers = { authorization: `Bearer ${token}` }
    expect((await s.call('GET', '/api/ingest/elastic', { headers })).status).toBe(200)
    expect((await s.call('HEAD', '/api/ingest/elastic', { headers })).status).toBe(200)
    expect((await s.call('GET', '/api/ingest/elastic/_license', { headers })).body.license.status).toBe('active')
    const ok = await s.call('POST', '/api/ingest/elastic/idx/_bulk', { headers, body: '{"create":{}}\n{"a":1}\n{"delete":{"_id":"1"}}\n' })
    expect(ok.status).toBe(200)
    expect(ok.body.items.map((i: Record<string, { status: number }>) => Object.values(i)[0]!.status)).toEqual([201, 400])
    expect((await s.call('POST', '/api/ingest/elastic/_bulk', { body: 'x' })).status).toBe(401)
    expect((await s.call('POST', '/api/ingest/elastic/_bulk', { headers, body: 'x' })).status).toBe(400)
  })
})

describe('every caller (the route × caller matrix of test/security.test.ts, in Elasticsearch\'s shape)', () => {
  test('each protected route under /api/ingest/elastic: 401 without a valid credential, 403 without Ingest, 200 with it', async () => {
    const { s, u, token } = await world()
    const routes = apiRoutes(s.app).filter((r) => r.path.startsWith('/api/ingest/elastic') && !PUBLIC_ROUTES.has(r.key))
    expect(routes.map((r) => r.key).sort()).toEqual([
      'GET /api/ingest/elastic',
      'GET /api/ingest/elastic/_license',
      'HEAD /api/ingest/elastic',
      'POST /api/ingest/elastic/:index/_bulk',
      'POST /api/ingest/elastic/_bulk',
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
      garbageJwt: [{ authorization: 'Bearer not.a.jwt' }, 401],
      garbageToken: [{ 'Service-Token': 'not-a-token' }, 401],
      tokenWithPermission: [{ 'Service-Token': token }, 200],
      tokenAsBasicPassword: [{ authorization: `Basic ${Buffer.from(`elastic:${token}`).toString('base64')}` }, 200],
      tokenWithoutPermission: [{ authorization: `Bearer ${without}` }, 403],
      expiredToken: [{ authorization: `Bearer ${expiring}` }, 401],
      tokenOfLockedOwner: [{ authorization: `Bearer ${lockedToken}` }, 401],
      user: [{ authorization: `Bearer ${other.jwt}` }, 200],
      admin: [{ authorization: `Bearer ${s.adminJwt}` }, 200],
    }
    for (const r of routes) {
      const outcome: Record<string, number> = {}
      const expected: Record<string, number> = {}
      for (const [name, [headers, want]] of Object.entries(callers)) {
        const body = r.method === 'POST' ? '{"index":{"_index":"matrix"}}\n{"m":1}\n' : undefined
        const res = await s.call(r.method, r.path.replace(':index', 'matrix'), { headers, body })
        outcome[name] = res.status
        expected[name] = want
        expect(res.headers.get('x-elastic-product')).toBe('Elasticsearch')
        if (res.status >= 400) expect(res.body.error.type).toBe('security_exception')
      }
      expect({ route: r.key, outcome }).toEqual({ route: r.key, outcome: expected })
    }
    expect(await entryCount(s)).toBe(2 * 4)
  })
})
